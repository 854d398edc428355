"""docs/protocol.md is enough to write a bot: one written from it alone plays through a server.

Invariants: DocBot (tests/helpers/doc_bot.py) reads only the fields its READS table lists, and
every one of them is in the document's message tables; it plays a whole two-hand match against
three of our fast bots through a real server, keeping its own state from the documented
messages (every check it makes of the document holds), and each hand's game_over scores and the
match's totals are the rules engine's replay of the records; the document's example exchange is
a real hand in today's message shapes (each line is its message model, exactly) that replays on
the rules engine; the messages the document says carry no `table` are exactly those whose model
has none; card codes are exact, as the document says.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
import websockets
from doc_bot import READS, DocBot, DocMismatch, Seen
from gongzhu_replay import replayed
from protocol_doc import doc_table, protocol_text
from serve_thread import answer, running_server

from scrofazero.games.gongzhu.cards import card_index
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.serve.common.messages import ANSWER_FIELDS
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.gongzhu.messages import CLIENT_MESSAGES, SERVER_MESSAGES
from scrofazero.serve.gongzhu.protocol import card_codes, parse_client_message, public_state

DOC = protocol_text()
FAST_BOTS = ["greed", "if", "random"]


def example_lines() -> list[tuple[str, dict]]:
    """The example exchange: ("client" | "server", message) per line, in order."""
    start = DOC.index("```\n", DOC.index("## An example exchange")) + 4
    block = DOC[start:DOC.index("```", start)]
    out = []
    for line in block.splitlines():
        assert line[:2] in ("> ", "< "), f"example line without > or <: {line[:60]}"
        out.append(("client" if line[0] == ">" else "server", json.loads(line[2:])))
    return out


def test_every_field_the_doc_bot_reads_is_documented():
    doc = doc_table(DOC, "| the server sends |")
    for kind, fields in READS.items():
        assert kind in doc and fields <= doc[kind], (kind, fields - doc.get(kind, set()))


def test_the_doc_bot_cannot_read_an_unlisted_field():
    read = set()
    msg = Seen({"type": "played", "seat": 1, "card": "S2", "ply": 3, "fallback": None}, read)
    assert msg["card"] == "S2" and read == {("played", "card")}
    with pytest.raises(KeyError, match="DocBot does not read played.fallback"):
        msg["fallback"]


@pytest.mark.parametrize("wrong", [None, "order", "winner", "captured", "seat"])
def test_the_doc_bot_catches_a_server_that_breaks_the_document(wrong):
    bot, read = DocBot(), set()
    welcome = {"type": "welcome", "seat": 0, "hand": ["S2", "HA"], "hand_number": 1,
               "leader": 1, "trick": [], "history": [], "captured": [[], [], [], []]}
    plays = [(1, "D5"), (2, "DK"), (3, "HQ"), (0, "S2")]
    trick = {"type": "trick", "winner": 2, "cards": [c for _, c in plays],
             "captured": [[], [], ["HQ"], []]}
    if wrong == "order":
        trick["cards"] = trick["cards"][::-1]
    elif wrong == "winner":
        trick["winner"] = 1
    elif wrong == "captured":
        trick["captured"] = [[], [], [], ["HQ"]]
    elif wrong == "seat":
        plays[1] = (3, "DK")

    async def feed():
        await bot.on_welcome(None, Seen(welcome, read))
        for ply, (seat, card) in enumerate(plays, 1):
            await bot.on_played(None, Seen({"type": "played", "seat": seat, "card": card,
                                            "ply": ply}, read))
        await bot.on_trick(None, Seen(trick, read))

    if wrong is None:  # as documented: the bot follows along
        asyncio.run(feed())
        assert (bot.leader, bot.piles[2], bot.hand, bot.trick) == (2, {"HQ"}, {"HA"}, [])
        return
    with pytest.raises(DocMismatch):
        asyncio.run(feed())


def test_the_doc_bot_plays_a_whole_match_against_our_fast_bots(tmp_path):
    """Two hands at seat 1 (hand 1 led by seat 2, hand 2 by seat 3), `next` between them."""
    with running_server(tmp_path) as server:
        made = answer(server, "/api/tables", {"type": "create", "deal": 5, "leader": 2,
                                              "hands": 2,
                                              "seats": [FAST_BOTS[0], "open", *FAST_BOTS[1:]]})
        bot = DocBot()

        async def play():
            async with websockets.connect(server.ws) as ws:
                return await bot.play(ws, made["table"], 1, made["tokens"]["1"], "docbot")

        over = asyncio.run(play())
        games = [answer(server, f"/api/games/{h['game_over']['game_id']}") for h in bot.hands]
    assert len(bot.hands) == 2 and games[0]["id"] == made["game_id"]
    assert [g["leader"] for g in games] == [2, 3]
    numbers = [g["deal_number"] for g in games]  # deal 5, then a random one
    assert numbers == [5, None]
    assert games[0]["deal"] == " ".join(card_codes(load_deals()[5]))
    totals = [0, 0]
    for hand, game in zip(bot.hands, games):
        state = replayed(game)
        assert state.is_terminal() and all(m["fallback"] is None for m in game["moves"])
        assert hand["game_over"]["scores"] == game["scores"] == state.pile_scores()
        assert hand["game_over"]["returns"] == state.returns()
        assert hand["history"] == [(m["seat"], m["card"]) for m in game["moves"]]
        assert len(hand["turns"]) == 13 and len(hand["turns"][-1]) == 1  # the last is forced
        scores = state.pile_scores()
        totals = [totals[0] + scores[0] + scores[2], totals[1] + scores[1] + scores[3]]
    assert over["totals"] == totals
    listed = {(kind, f) for kind, fields in READS.items() for f in fields}
    assert bot.read == {(kind, f) for kind, f in listed if kind not in ("created", "error")}


def _strict(side: str, msg: dict):
    """The message as its model, refusing a missing or unknown field."""
    models = SERVER_MESSAGES if side == "server" else CLIENT_MESSAGES
    model = models[msg["type"]]
    fields = set(model.model_fields)
    if side == "server":  # every field, and an answer's in_reply_to and id only when set
        assert set(msg) - set(ANSWER_FIELDS) == fields - set(ANSWER_FIELDS), (
            msg["type"], set(msg) ^ fields)
        return model.model_validate(msg)
    assert set(msg) <= fields, (msg["type"], set(msg) - fields)
    return parse_client_message(json.dumps(msg))


def test_the_example_exchange_is_a_real_hand_in_todays_shapes():
    lines = example_lines()
    for side, msg in lines:
        _strict(side, msg)
    kinds = [msg["type"] for _, msg in lines]
    assert kinds[:4] == ["create", "created", "join", "welcome"]  # join on the creating socket
    assert "illegal_card" in [msg["code"] for _, msg in lines if msg["type"] == "error"]
    over = next(msg for _, msg in lines if msg["type"] == "game_over")
    welcome = lines[3][1]
    state = GongzhuState(load_deals()[over["deal_number"]], leader=welcome["first_leader"])
    assert welcome["hand"] == card_codes(sorted(c for c in range(52)
                                                if state.hands[welcome["seat"]] >> c & 1))
    for _side, msg in lines[4:]:
        if msg["type"] == "your_turn":
            assert state.current_player == welcome["seat"]
            assert (msg["ply"], msg["legal"]) == (state.num_played + 1,
                                                  card_codes(state.legal_actions()))
        elif msg["type"] == "played":
            assert msg["seat"] == state.current_player
            state.apply(card_index(msg["card"]))
            assert msg["ply"] == state.num_played
        elif msg["type"] == "trick":
            public = public_state(state)
            assert (msg["winner"], msg["captured"], msg["scores"], msg["team"]) == (
                state.leader, public.captured, public.scores, public.team)
        elif msg["type"] == "game_over":
            assert state.is_terminal()
            assert (msg["scores"], msg["returns"]) == (state.pile_scores(), state.returns())
    assert state.is_terminal() and kinds.count("played") == 52
    assert kinds[-2:] == ["game_over", "match_over"]  # a table made without hands: one hand
    end = lines[-1][1]
    assert (end["hands_played"], end["totals"]) == (1, over["team"])


def test_the_messages_said_to_lack_table_are_those_without_it():
    line = re.search(r"Messages without `table`: (.+?)\.", DOC, re.DOTALL).group(1)
    said = set(re.findall(r"`(\w+)`", line))
    assert said == {kind for kind, model in SERVER_MESSAGES.items()
                    if "table" not in model.model_fields}


@pytest.mark.parametrize("code, ok", [("SQ", True), ("H10", True), ("sq", False),
                                      ("hT", False), ("S1", False)])
def test_card_codes_are_exact_as_the_document_says(code, ok):
    assert "a `play` of `sq`, `hT` or `S1` is refused with `bad_message`" in " ".join(DOC.split())
    text = json.dumps({"type": "play", "card": code})
    if ok:
        assert parse_client_message(text).card == code
    else:
        with pytest.raises(ProtocolError) as caught:
            parse_client_message(text)
        assert caught.value.code == "bad_message"
