"""Fish at the table server (docs/protocol.md section "Fish").

Invariants: all-bot games of 6 and 8 seats run to fish_over, their records replay on the rules
engine to the recorded result (and their export replays as a transcript), and every view our
bots rebuilt from the messages is the engine's view of their seat; an open seat plays by the
protocol (asks, a call), every illegal ask or call is refused with its code and rule and changes
nothing, a rejoin gets the state where it stands; a passed deadline plays the documented
fallback; no message before fish_over names a card its receiver cannot know; the routes serve
the game over HTTP and /ws/fish.
"""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from protocol_doc import doc_table, fish_section, model_fields, protocol_text
from serve_thread import http, running_server

from scrofazero.games.fish.cards import card_code, card_id, set_cards, set_of, team_of
from scrofazero.games.fish.rules import FishState, Params
from scrofazero.games.fish.transcripts import parse_transcript, replay
from scrofazero.serve.fish import hub as fish_hub_module
from scrofazero.serve.fish.hub import FishHub, FishHubSettings
from scrofazero.serve.fish.messages import (
    FISH_CLIENT_MESSAGES,
    FISH_ERROR_CODES,
    FISH_SERVER_MESSAGES,
    FishCreate,
)
from scrofazero.serve.fish.records import FishRecords, fish_export, replayed_state
from scrofazero.serve.fish.table import FishTableSettings, fallback_move
from scrofazero.serve.gongzhu.records import Records

CARD = re.compile(r"^([DCHS][2-9TJQKA]|\*[SB])$")


class Recorder:
    """A connection in the server process that keeps what it is sent."""

    def __init__(self):
        self.got: list[dict] = []
        self.queue: asyncio.Queue = asyncio.Queue()
        self.closed = None

    async def send(self, msg: dict) -> None:
        self.got.append(msg)
        self.queue.put_nowait(msg)

    async def close(self, reason: str) -> None:
        self.closed = reason

    async def next(self, kind: str | None = None, timeout: float = 20.0) -> dict:
        while True:
            msg = await asyncio.wait_for(self.queue.get(), timeout)
            if kind is None or msg["type"] == kind:
                return msg


def make_hub(tmp_path, **table) -> FishHub:
    records = Records(str(tmp_path / "records.sqlite"))
    return FishHub(FishRecords(records.engine),
                   FishHubSettings(table=FishTableSettings(**table), seed=0))


async def say(hub, conn, **msg) -> None:
    await hub.receive(conn, json.dumps(msg))


@pytest.mark.parametrize("seats", [["logic", "random", "random"] * 2,
                                   ["random", "logic"] + ["random"] * 6])
def test_all_bot_games_end_and_replay_to_the_recorded_result(tmp_path, monkeypatch, seats):
    views = []  # (move number, seat, job, view) of every decision our bots made
    real_run = fish_hub_module.SeatView.view

    def noted(self, turn):
        view = real_run(self, turn)
        views.append((self.moves, self.seat, turn is not None, view))
        return view

    monkeypatch.setattr(fish_hub_module.SeatView, "view", noted)

    async def case():
        hub = make_hub(tmp_path)
        table, tokens = await hub.create_table(FishCreate(seats=seats, seed=5))
        assert tokens == {}
        watcher = Recorder()
        await say(hub, watcher, type="fish_watch", table=table.id)
        over = await watcher.next("fish_over", timeout=60)
        game = await hub.read("game", table.game_id)
        await hub.shutdown()
        return table, over, game, watcher.got

    table, over, game, got = asyncio.run(case())
    state = replayed_state(game)  # raises on any move the engine refuses or scores otherwise
    assert state.is_terminal and list(state.score) == game["score"] == over["score"]
    assert sum(over["score"]) == len(state.called) and game["status"] == "finished"
    assert over["winner"] == (None if over["score"][0] == over["score"][1]
                              else int(over["score"][1] > over["score"][0]))
    assert [m["move"] for m in game["moves"]] == list(range(1, len(game["moves"]) + 1))
    moves = [m for m in got if m["type"] in ("asked", "called")]
    assert len(moves) == len(game["moves"])
    transcript = replay(parse_transcript(fish_export(game)))
    assert transcript.state.score == state.score
    # logic seats' beliefs come with fish_over, one per move they made, with the true holders
    logic_moves = [m["move"] for m in game["moves"] if seats[m["seat"]] == "logic"]
    assert [b["move"] for b in over["beliefs"]] == logic_moves
    assert all(b["kind"] == "logic" for b in over["beliefs"])
    # the views our bots rebuilt from messages are the engine's views of their seats
    engine_views = {0: FishState.new(Params(num_players=len(seats)),
                                     [[card_id(c, len(seats)) for c in h] for h in game["deal"]])}
    replayed_state(game, lambda move, s: engine_views.__setitem__(move["move"], s.clone()))
    acted = 0
    for moves_made, seat, is_turn, view in views:
        engine = engine_views[moves_made].view(seat)
        if is_turn:
            assert view == engine
            acted += 1
        else:
            assert (view.hand, view.hand_counts, view.uncalled_sets) == \
                (engine.hand, engine.hand_counts, engine.uncalled_sets)
    assert acted >= len(game["moves"]) - sum(m["kind"] == "call" for m in game["moves"])


def own_set_deal() -> list[list[str]]:
    """A 6-player deal in which seat 0 holds the whole low D set and three other cards."""
    rest = [c for c in range(54) if c not in set_cards(0)]
    hands = [list(set_cards(0)) + rest[:3]] + [rest[3 + 9 * k: 12 + 9 * k] for k in range(5)]
    assert sorted(sum(hands, [])) == list(range(54))
    return [[card_code(c) for c in hand] for hand in hands]


def test_an_open_seat_plays_by_the_protocol_and_bad_moves_are_refused(tmp_path):
    async def case():
        hub = make_hub(tmp_path)
        deal = own_set_deal()
        table, tokens = await hub.create_table(FishCreate(
            seats=["open", "random", "random", "random", "random", "random"], deal=deal))
        me = Recorder()
        await say(hub, me, type="ask", target=1, card="D2")
        assert (await me.next())["code"] == "not_joined"
        await say(hub, me, type="fish_join", table=table.id, seat=0, token="wrong")
        assert (await me.next())["code"] == "bad_token"
        await say(hub, me, type="fish_join", table=table.id, seat=6, token=tokens[0])
        assert (await me.next())["code"] == "unknown_seat"
        await say(hub, me, type="fish_join", table="nope", seat=0, token=tokens[0])
        assert (await me.next())["code"] == "unknown_table"
        await say(hub, me, type="fish_join", table=table.id, seat=0, token=tokens[0], name="Ann")
        welcome = await me.next("fish_welcome")
        assert welcome["hand"] == [card_code(c) for c in table.state.hand(0)]
        assert welcome["players"][0]["name"] == "Ann" and welcome["num_players"] == 6
        turn = await me.next("fish_turn")
        assert turn["move"] == 1 and not turn["must_call"]
        assert [tuple(a) for a in turn["asks"]] == \
            [(t, card_code(c)) for t, c in table.state.legal_asks()]
        snapshot = table.state.snapshot()
        refused = [
            ({"target": 2, "card": "H9"}, "illegal_ask", "ask-teammate"),
            ({"target": 1, "card": "D2"}, "illegal_ask", "asker-holds-card"),
            ({"target": 1, "card": "D8", "move": 1}, "illegal_ask", None),
            ({"target": 9, "card": "H9"}, "illegal_ask", "no-such-seat"),
            ({"target": 1, "card": turn["asks"][0][1], "move": 7}, "stale_move", None),
        ]
        lacking = next(c for c in range(54) if set_of(c) not in
                       {set_of(h) for h in table.state.hand(0)})
        refused.append(({"target": 1, "card": card_code(lacking)}, "illegal_ask",
                        "asker-lacks-set"))
        for fields, code, rule in refused:
            await say(hub, me, type="ask", **fields)
            error = await me.next("error")
            assert error["code"] == code, (fields, error)
            if rule is not None:
                assert error["rule"] == rule, (fields, error)
        wrong = {card_code(c): 1 for c in set_cards(0)}
        await say(hub, me, type="call", set=0, holders=wrong)
        error = await me.next("error")
        assert (error["code"], error["rule"]) == ("illegal_call", "call-names-opponent")
        await say(hub, me, type="call", set=0, holders={"D2": 0})
        assert (await me.next("error"))["rule"] == "call-incomplete"
        assert table.state.snapshot() == snapshot and not me.queue.qsize()
        # a right call of the set it holds whole, then an ask
        await say(hub, me, type="call", set=0, holders={card_code(c): 0 for c in set_cards(0)})
        called = await me.next("called")
        assert (called["seat"], called["right"], called["team"], called["score"]) == \
            (0, True, 0, [1, 0])
        turn = await me.next("fish_turn")
        target, card = turn["asks"][0]
        await say(hub, me, type="ask", target=target, card=card, move=turn["move"])
        asked = await me.next("asked")
        assert (asked["seat"], asked["target"], asked["card"]) == (0, target, card)
        # a rejoin on a new connection gets the state where it stands
        again = Recorder()
        await say(hub, again, type="fish_join", table=table.id, seat=0, token=tokens[0])
        assert me.closed == "replaced"
        welcome = await again.next("fish_welcome")
        assert welcome["hand"] == [card_code(c) for c in table.state.hand(0)]
        assert welcome["move"] == len(welcome["history"]) == table.moves
        assert welcome["score"] == list(table.state.score)
        # play on to the end: the first legal ask, or the fallback call when it must call
        while True:
            msg = await again.next()
            if msg["type"] == "fish_over":
                break
            if msg["type"] == "fish_turn" and msg["move"] == table.moves + 1:
                move = fallback_move(table.state)
                if msg["must_call"]:
                    await say(hub, again, type="call", set=move.set_id, move=msg["move"],
                              holders={card_code(c): s for c, s in move.assignment})
                else:
                    await say(hub, again, type="ask", target=msg["asks"][0][0],
                              card=msg["asks"][0][1], move=msg["move"])
        game = await hub.read("game", table.game_id)
        await hub.shutdown()
        return msg, game

    over, game = asyncio.run(case())
    assert list(replayed_state(game).score) == over["score"] == game["score"]
    assert game["seats"][0]["name"] == "Ann" and game["moves"][0]["kind"] == "call"


def test_a_socket_follows_one_live_fish_table(tmp_path):
    """asked, called and seat name no table: a socket that watches a live table, or holds a
    seat, cannot watch another; watching the same table again is a fresh welcome, and once the
    watched table is over the socket may watch another."""
    async def case():
        hub = make_hub(tmp_path)
        (first, tokens), (second, _) = [await hub.create_table(FishCreate(seats=["open"] * 6))
                                        for _ in range(2)]
        watcher, seated, late = Recorder(), Recorder(), Recorder()
        await say(hub, watcher, type="fish_watch", table=first.id)
        await watcher.next("fish_welcome")
        replies = []
        for table in (second, first):
            await say(hub, watcher, type="fish_watch", table=table.id)
            replies.append(await watcher.next())
        await say(hub, seated, type="fish_join", table=first.id, seat=0, token=tokens[0])
        await seated.next("fish_welcome")
        for table in (second, first):
            await say(hub, seated, type="fish_watch", table=table.id)
            replies.append(await seated.next("error"))
        watchers = [len(t.observers) for t in (first, second)]
        bots, _ = await hub.create_table(FishCreate(seats=["random"] * 6, seed=3))
        await say(hub, late, type="fish_watch", table=bots.id)
        await late.next("fish_over")
        await say(hub, late, type="fish_watch", table=second.id)
        replies.append(await late.next())
        watchers.append([len(t.observers) for t in (bots, second)])
        await hub.shutdown()
        return first.id, replies, watchers

    first, replies, watchers = asyncio.run(case())
    assert [r["type"] for r in replies] == ["error", "fish_welcome", "error", "error",
                                            "fish_welcome"]
    assert replies[0]["code"] == "already_watching" and first in replies[0]["message"]
    assert replies[1]["table"] == first and replies[1]["seat"] is None
    assert [r["code"] for r in replies[2:4]] == ["already_joined", "already_joined"]
    assert "holds seat 0" in replies[2]["message"]
    assert watchers == [1, 0, [0, 1]]  # one table each: the seat watches none


def test_a_passed_deadline_plays_the_documented_fallback(tmp_path):
    async def case():
        hub = make_hub(tmp_path, move_deadline_s=0.05)
        table, tokens = await hub.create_table(FishCreate(
            seats=["open", "random", "random", "random", "random", "random"], seed=2))
        me = Recorder()
        expected = fallback_move(table.state)
        await say(hub, me, type="fish_join", table=table.id, seat=0, token=tokens[0])
        first = await me.next("asked")
        await hub.shutdown()
        return first, expected

    first, expected = asyncio.run(case())
    assert (first["seat"], first["target"], first["card"], first["fallback"]) == \
        (0, expected.target, card_code(expected.card), "deadline")


def legal_from_own_knowledge(seat: int, hand: set[int], counts: list[int]) -> set:
    """The asks a seat may make, from its own hand and the public counts alone."""
    sets = {set_of(c) for c in hand}
    cards = {c for s in sets for c in set_cards(s) if c not in hand}
    return {(t, card_code(c)) for t in range(len(counts)) if team_of(t) != team_of(seat)
            and counts[t] > 0 for c in cards}


def check_fair(seat: int, messages: list[dict], deal: list[list[str]]) -> int:
    """Every message to `seat` before fish_over names only cards it knows: its own hand,
    the cards named in public moves, the sets' own card lists, its legal asks as its hand
    alone gives them. Returns how many messages were checked."""
    hand = set(card_id(c, len(deal)) for c in deal[seat])
    public: set[str] = set()
    counts: list[int] = []  # every seat's hand size, from the latest message that tells it
    checked = 0
    for msg in messages:
        kind = msg["type"]
        if kind == "fish_over":
            break
        allowed = {card_code(c) for c in hand} | public
        if kind == "fish_welcome":
            assert set(msg["hand"]) == {card_code(c) for c in hand}
            allowed |= {c for s in msg["sets"] for c in s["cards"]}
        elif kind == "fish_turn":
            assert {tuple(a) for a in msg["asks"]} == \
                legal_from_own_knowledge(seat, hand, counts)
            allowed |= {a[1] for a in msg["asks"]}
        elif kind == "asked":
            allowed.add(msg["card"])
            public.add(msg["card"])
        elif kind == "called":
            allowed |= set(msg["holders"])
        else:
            assert kind in ("seat", "fish_start", "error", "pong"), kind
        named = set(cards_in(msg)) - allowed
        assert not named, (seat, kind, named)
        if kind == "fish_welcome":
            counts = msg["hand_counts"]
        elif kind in ("asked", "called"):
            counts = msg["hand_counts"]
            if kind == "asked" and msg["hit"]:
                card = card_id(msg["card"], len(deal))
                if msg["seat"] == seat:
                    hand.add(card)
                if msg["target"] == seat:
                    hand.discard(card)
            if kind == "called":
                hand -= set(set_cards(msg["set"]))
        checked += 1
    return checked


def cards_in(value):
    if isinstance(value, str):
        if CARD.match(value):
            yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from cards_in(key)
            yield from cards_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from cards_in(item)


def test_no_message_names_a_card_its_seat_cannot_know(tmp_path):
    async def case():
        hub = make_hub(tmp_path)
        table, tokens = await hub.create_table(FishCreate(
            seats=["open", "open", "logic", "random", "open", "random"], seed=11))
        conns = {}

        async def autoplay(seat):  # the first legal ask, else the fallback call
            conn = conns[seat] = Recorder()
            await say(hub, conn, type="fish_join", table=table.id, seat=seat,
                      token=tokens[seat])
            while True:
                msg = await conn.next(timeout=60)
                if msg["type"] == "fish_over":
                    return
                if msg["type"] == "fish_turn" and msg["move"] == table.moves + 1:
                    move = fallback_move(table.state)
                    if msg["must_call"]:
                        await say(hub, conn, type="call", set=move.set_id, move=msg["move"],
                                  holders={card_code(c): s for c, s in move.assignment})
                    else:
                        await say(hub, conn, type="ask", target=msg["asks"][-1][0],
                                  card=msg["asks"][-1][1], move=msg["move"])

        await asyncio.gather(*(autoplay(s) for s in tokens))
        game = await hub.read("game", table.game_id)
        await hub.shutdown()
        return conns, game

    conns, game = asyncio.run(case())
    for seat, conn in conns.items():
        assert check_fair(seat, conn.got, game["deal"]) > 20
        over = conn.got[-1]
        assert over["type"] == "fish_over" and over["deal"] == game["deal"]


def test_the_check_catches_a_leak():
    deal = [[card_code(c) for c in range(9 * s, 9 * s + 9)] for s in range(6)]
    leak = {"type": "fish_welcome", "hand": deal[0], "sets": [], "hand_counts": [9] * 6,
            "peek": deal[1]}
    with pytest.raises(AssertionError):
        check_fair(0, [leak], deal)


def test_the_routes_serve_fish_over_http_and_its_socket(tmp_path):
    from serve_thread import Client

    with running_server(tmp_path) as server:
        status, refused = http(server, "/api/fish/tables", {"type": "fish_create",
                                                            "seats": ["open"] * 5})
        assert status == 400 and refused["code"] == "bad_message"
        status, made = http(server, "/api/fish/tables", {
            "type": "fish_create", "seats": ["open"] + ["random"] * 5, "seed": 4})
        assert status == 200 and set(made["tokens"]) == {"0"}
        assert http(server, f"/api/fish/games/{made['game_id']}")[0] == 409

        async def play():
            client = await Client.connect(server.ws + "/fish")
            await client.send({"type": "fish_join", "table": made["table"], "seat": 0,
                               "token": made["tokens"]["0"]})
            while True:
                msg = await client.next(timeout=30)
                if msg["type"] == "fish_over":
                    await client.close()
                    return msg
                if msg["type"] == "fish_turn" and msg["asks"]:
                    await client.send({"type": "ask", "target": msg["asks"][0][0],
                                       "card": msg["asks"][0][1], "move": msg["move"]})
                elif msg["type"] == "fish_turn":
                    table = server.app.state.play["fish_hub"].tables[made["table"]]
                    move = fallback_move(table.state)
                    await client.send({"type": "call", "set": move.set_id, "move": msg["move"],
                                       "holders": {card_code(c): s
                                                   for c, s in move.assignment}})

        over = asyncio.run(play())
        status, game = http(server, f"/api/fish/games/{made['game_id']}")
        assert status == 200 and game["score"] == over["score"]
        status, frames = http(server, f"/api/fish/games/{made['game_id']}/replay")
        assert frames["score"] == over["score"] == frames["recorded_score"]
        assert len(frames["frames"]) == len(game["moves"]) + 1
        status, text = http(server, f"/api/fish/games/{made['game_id']}/export")
        assert list(replay(parse_transcript(text)).state.score) == over["score"]
        assert http(server, "/api/fish/games/999999")[0] == 404


def test_the_documents_fish_tables_are_the_models():
    fish = fish_section(protocol_text())
    for header, models in (("| you send (Fish) |", FISH_CLIENT_MESSAGES),
                           ("| the server sends (Fish) |", FISH_SERVER_MESSAGES)):
        doc = doc_table(fish, header)
        assert set(doc) == set(models)
        for kind, model in models.items():
            assert doc[kind] == model_fields(model), kind
    own = list(doc_table(fish, "| Fish code |"))
    assert own == [c for c in FISH_ERROR_CODES if c in ("illegal_ask", "illegal_call",
                                                          "stale_move")]
    assert all(f"`{code}`" in fish for code in FISH_ERROR_CODES)
    assert set(FishHub.handlers) == set(FISH_CLIENT_MESSAGES.values())
