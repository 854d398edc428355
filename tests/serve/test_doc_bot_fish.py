"""docs/protocol.md's "Fish" section is enough to write a Fish bot: one written from it alone plays.

Invariants: FishDocBot (tests/helpers/doc_bot_fish.py) reads only the fields its READS table
lists, and every one of them is in the document's Fish message tables; fed messages that break
the document it raises DocMismatch; it plays a whole game at a 6-seat and an 8-seat table against
our fast Fish bots through a real server, keeping its own state from the documented messages
(every check it makes of the document holds), its asks are the rules engine's legal asks at each
of its turns, each set it called knowing the holders went right, and its moves, sets and score
are the rules engine's replay of the records; the document's Fish example is a real game in
today's message shapes (each line is its message model, exactly) whose shown moves replay on the
rules engine from the deal it was made with.
"""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets
from doc_bot_fish import READS, DocMismatch, FishDocBot, Seen, own_set_deal
from protocol_doc import doc_table, fish_section, protocol_text
from serve_thread import answer, running_server

from scrofazero.games.fish.cards import card_code, card_id, set_cards
from scrofazero.games.fish.rules import FishState, Params
from scrofazero.serve.common.messages import ANSWER_FIELDS
from scrofazero.serve.fish.messages import (
    FISH_CLIENT_MESSAGES,
    FISH_SERVER_MESSAGES,
    parse_fish_message,
)
from scrofazero.serve.fish.records import replayed_state

FISH = fish_section(protocol_text())


def test_every_field_the_fish_doc_bot_reads_is_documented():
    doc = doc_table(FISH, "| the server sends (Fish) |")
    for kind, fields in READS.items():
        assert kind in doc and fields <= doc[kind], (kind, fields - doc.get(kind, set()))


def test_the_fish_doc_bot_cannot_read_an_unlisted_field():
    read = set()
    msg = Seen({"type": "asked", "seat": 1, "card": "S2", "fallback": None}, read)
    assert msg["card"] == "S2" and read == {("asked", "card")}
    with pytest.raises(KeyError, match="FishDocBot does not read asked.fallback"):
        msg["fallback"]


class Socket:
    """Stands in for the bot's WebSocket: keeps what it sends."""

    def __init__(self):
        self.sent: list[dict] = []

    async def send(self, text: str) -> None:
        self.sent.append(json.loads(text))


def move_message(state: FishState, move: dict, number: int) -> dict:
    """The documented asked / called message of the bot's `move`, made on the rules engine."""
    common = {"move": number, "seat": 0}
    if move["type"] == "ask":
        event = state.ask(move["target"], card_id(move["card"], 6), asker=0)
        return {"type": "asked", **common, "target": move["target"], "card": move["card"],
                "hit": event.success, "turn": state.current_player,
                "hand_counts": list(state.hand_counts)}
    event = state.call(0, move["set"], [(card_id(c, 6), s) for c, s in move["holders"].items()])
    return {"type": "called", **common, "set": move["set"], "holders": move["holders"],
            "right": event.correct, "team": state.called[move["set"]],
            "removed": list(event.removed), "turn": state.current_player,
            "hand_counts": list(state.hand_counts), "score": list(state.score)}


def turn_message(state: FishState) -> dict:
    asks = [[t, card_code(c)] for t, c in state.legal_asks()]
    return {"type": "fish_turn", "move": len(state.events) + 1, "asks": asks,
            "must_call": not asks}


@pytest.mark.parametrize("wrong", [None, "must_call", "asks", "right", "score", "turn",
                                   "hand_counts", "move"])
def test_the_fish_doc_bot_catches_a_server_that_breaks_the_document(wrong):
    """Seat 0 holds the whole low D set: it calls it (certainly right), then asks."""
    deal = own_set_deal()
    state = FishState.new(Params(num_players=6), [[card_id(c, 6) for c in h] for h in deal])
    bot, read, ws = FishDocBot(), set(), Socket()
    welcome = {"type": "fish_welcome", "seat": 0, "num_players": 6, "calls": "any_time",
               "first_player": 0, "hand": deal[0], "hand_counts": [9] * 6, "score": [0, 0],
               "move": 0, "sets": [{"set": s, "cards": [card_code(c) for c in set_cards(s)],
                                    "team": None} for s in range(9)]}

    def broken(msg: dict, field: str, value) -> dict:
        return {**msg, field: value} if wrong == field else msg

    async def feed():
        await bot.on_fish_welcome(ws, Seen(welcome, read))
        await bot.on_fish_start(ws, Seen({"type": "fish_start", "turn": 0}, read))
        first = turn_message(state)
        await bot.on_fish_turn(ws, Seen(broken(first, "must_call", True), read))
        called = move_message(state, ws.sent[-1], 1)
        called = broken(broken(called, "right", False), "score", [0, 1])
        await bot.on_called(ws, Seen(called, read))
        second = turn_message(state)
        await bot.on_fish_turn(ws, Seen(broken(second, "asks", second["asks"][::-1]), read))
        asked = move_message(state, ws.sent[-1], 2)
        asked = broken(broken(asked, "turn", (asked["turn"] + 1) % 6), "move", 3)
        await bot.on_asked(ws, Seen(broken(asked, "hand_counts", [9] * 6), read))

    if wrong is None:  # as documented: the bot follows along
        asyncio.run(feed())
        assert [m["type"] for m in ws.sent] == ["call", "ask"] and bot.certain == [0]
        assert bot.counts == list(state.hand_counts) and bot.turn == state.current_player
        assert bot.hand == {card_code(c) for c in state.hand(0)} and bot.score == [1, 0]
        return
    with pytest.raises(DocMismatch):
        asyncio.run(feed())


def recorded(move: dict) -> tuple:
    """A record's move as the bot keeps its history."""
    if move["kind"] == "ask":
        return "ask", move["seat"], move["target"], move["card"], move["success"]
    return "call", move["seat"], move["set"], move["holders"], move["success"]


@pytest.mark.parametrize("seats, calls, seed", [
    (["random", "logic", "open", "random", "random", "random"], "any_time", 3),
    (["random"] * 5 + ["open", "random", "random"], "own_turn", 8)])
def test_the_fish_doc_bot_plays_a_whole_game_against_our_fast_bots(tmp_path, seats, calls, seed):
    seat = seats.index("open")
    with running_server(tmp_path) as server:
        made = answer(server, "/api/fish/tables", {"type": "fish_create", "seats": seats,
                                                 "seed": seed, "calls": calls})
        bot = FishDocBot()

        async def play():
            async with websockets.connect(server.ws + "/fish") as ws:
                return await bot.play(ws, made["table"], seat, made["tokens"][str(seat)],
                                      "docbot")

        over = asyncio.run(asyncio.wait_for(play(), 120))
        game = answer(server, f"/api/fish/games/{bot.game_id}")
    before = {0: FishState.new(Params(num_players=len(seats), calls=calls),
                               [[card_id(c, len(seats)) for c in h] for h in game["deal"]])}
    state = replayed_state(game, lambda m, s: before.__setitem__(m["move"], s.clone()))
    assert state.is_terminal and game["id"] == made["game_id"]
    assert bot.team_of_set == state.called and bot.score == list(state.score) == over["score"]
    assert bot.history == [recorded(m) for m in game["moves"]]
    assert all(m["fallback"] is None for m in game["moves"] if m["seat"] == seat)
    assert bot.turns and all(asks == [[t, card_code(c)] for t, c in before[move - 1].legal_asks()]
                             for move, asks in bot.turns)
    mine = [h for h in bot.history if h[0] == "call" and h[1] == seat]
    assert all(h[4] for h in mine if h[2] in bot.certain)
    # At an any_time table the server's bots may call a set between any two moves, so whether the
    # bot's turn comes while its team certainly holds an uncalled set depends on timing; at an
    # own_turn table the game is fixed by the seed, and this one has such turns.
    assert bot.certain or calls == "any_time"
    listed = {(kind, f) for kind, fields in READS.items() for f in fields}
    assert bot.read >= {(kind, f) for kind, f in listed if kind not in ("fish_created", "error")}


def example_lines() -> list[tuple[str, dict]]:
    """The Fish example: ("client" | "server", message) per line, in order, and "..." for the
    one line that stands for the frames left out."""
    start = FISH.index("```\n", FISH.index("An example:")) + 4
    out = []
    for line in FISH[start:FISH.index("```", start)].splitlines():
        if line == "...":
            out.append(("...", {}))
            continue
        assert line[:2] in ("> ", "< "), f"example line without > or <: {line[:60]}"
        out.append(("client" if line[0] == ">" else "server", json.loads(line[2:])))
    return out


def _strict(side: str, msg: dict):
    """The message as its model, refusing a missing or unknown field."""
    if side == "server":
        model = FISH_SERVER_MESSAGES[msg["type"]]
        fields = set(model.model_fields)  # an answer's in_reply_to and id only when set
        assert set(msg) - set(ANSWER_FIELDS) == fields - set(ANSWER_FIELDS), (
            msg["type"], set(msg) ^ fields)
        return model.model_validate(msg)
    assert set(msg) <= set(FISH_CLIENT_MESSAGES[msg["type"]].model_fields), msg
    return parse_fish_message(json.dumps(msg))


def check_move(state: FishState, msg: dict) -> None:
    """Apply an asked / called message on the engine and check what it says."""
    n = state.num_players
    if msg["type"] == "asked":
        event = state.ask(msg["target"], card_id(msg["card"], n), asker=msg["seat"])
        assert msg["hit"] == event.success
    else:
        event = state.call(msg["seat"], msg["set"],
                           [(card_id(c, n), s) for c, s in msg["holders"].items()])
        assert (msg["right"], msg["team"], msg["removed"], msg["score"]) == (
            event.correct, state.called[msg["set"]], list(event.removed), list(state.score))
    assert (msg["move"], msg["turn"], msg["hand_counts"]) == (
        len(state.events), state.current_player, list(state.hand_counts))


def test_the_fish_example_is_a_real_game_in_todays_shapes():
    lines = example_lines()
    gap = [i for i, (side, _) in enumerate(lines) if side == "..."]
    assert gap == [len(lines) - 3]  # the head of the game, "...", its last two frames
    for side, msg in lines[:gap[0]] + lines[gap[0] + 1:]:
        _strict(side, msg)
    kinds = [msg.get("type") for _, msg in lines]
    assert kinds[:4] == ["fish_create", "fish_created", "fish_join", "fish_welcome"]
    assert ("illegal_ask", "ask-teammate") in [(m["code"], m["rule"]) for _, m in lines
                                               if m.get("type") == "error"]
    create, welcome = lines[0][1], lines[3][1]
    n = len(create["seats"])
    state = FishState.new(Params(num_players=n, calls=create["calls"]),
                          [[card_id(c, n) for c in hand] for hand in create["deal"]],
                          first_player=create["first"])
    assert welcome["hand"] == [card_code(c) for c in state.hand(welcome["seat"])]
    for _side, msg in lines[4:gap[0]]:
        if msg["type"] == "fish_turn":
            assert state.current_player == welcome["seat"]
            assert (msg["move"], msg["asks"]) == (
                len(state.events) + 1, [[t, card_code(c)] for t, c in state.legal_asks()])
        elif msg["type"] in ("asked", "called"):
            check_move(state, msg)
    assert {"call", "ask"} <= {msg["type"] for side, msg in lines[:gap[0]] if side == "client"}
    last, over = lines[-2][1], lines[-1][1]
    assert (last["type"], last["turn"], over["type"]) == ("called", None, "fish_over")
    assert over["score"] == last["score"] and sum(over["score"]) == len(welcome["sets"])
    assert over["deal"] == [[card_code(c) for c in h] for h in state.initial_hands]
