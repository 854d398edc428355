"""The table server through real WebSocket clients (the protocol of docs/protocol.md).

Invariants: the reference client (examples/bot_client.py) plays whole hands against our bots;
a table with thinking off sends no thinking (the records keep it); our bots rebuild from the
protocol's messages exactly the view the rules engine gives their seat; every bad input (not
JSON, too large, malformed, wrong version, unknown table or seat, wrong token, not joined, out
of turn, stale ply, illegal card, before the start, after the end) gets its error code to that
client only and changes nothing, and a game's record stays closed while it is played; a message
past the socket limit closes only that socket; a disconnected seat is held and a reconnect with
its token resumes the game where it stands; a watcher sees every public event and no hand; a
passed deadline, an absent seat and a crashing bot each play the lowest legal card, say why, and
never block the table; a second join with the token replaces the first.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest
from gongzhu_replay import replayed
from serve_thread import Client, answer, http, running_server
from websockets.exceptions import ConnectionClosed

from scrofazero.games.gongzhu.cards import card_code, card_index
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.serve.gongzhu import hub as hub_module

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import bot_client  # examples/ is not a package: imported by path


def create(server, seats, **extra) -> dict:
    return answer(server, "/api/tables", {"type": "create", "seats": seats, **extra})


def wait_finished(server, game_id: int, timeout: float = 60) -> dict:
    end = time.time() + timeout
    while time.time() < end:
        status, game = http(server, f"/api/games/{game_id}")
        if status == 200:
            return game
        assert status == 409  # while in play: the record shows all hands
        time.sleep(0.05)
    raise AssertionError(f"game {game_id} did not finish")


def test_reference_clients_play_against_our_bots_seeing_the_engine_view(tmp_path, monkeypatch):
    checked = []
    with running_server(tmp_path) as server:
        real_decide = hub_module.decide

        def checking_decide(agent, view, rng):
            # the view our bot rebuilt from messages equals the engine's view of that seat
            live = [t for t in server.hub.tables.values() if t.status == "playing"
                    and t.state.current_player == view.seat
                    and t.state.hands[view.seat] == view.hand]
            assert len(live) == 1
            assert view == live[0].state.view(view.seat)
            checked.append(view.seat)
            return real_decide(agent, view, rng)

        monkeypatch.setattr(hub_module, "decide", checking_decide)
        made = create(server, ["open", "scrofazero", "open", "greed"], deal=3, leader=1,
                      thinking=False)
        tokens = made["tokens"]

        async def watched_client():  # a plain client at seat 2 that keeps what it is sent
            client = await Client.connect(server.ws)
            await client.send({"type": "join", "table": made["table"], "seat": 2,
                               "token": tokens["2"], "name": "random-bot"})
            while True:
                msg = await client.next(timeout=60)
                if msg["type"] == "your_turn":
                    await client.send({"type": "play", "card": msg["legal"][-1],
                                       "ply": msg["ply"]})
                elif msg["type"] == "game_over":
                    await client.close()
                    return client.got

        async def two_clients():
            return await asyncio.gather(
                bot_client.play(server.ws, made["table"], 0, tokens["0"], seed=1),
                watched_client())

        over, got = asyncio.run(two_clients())
        over = [over, got[-1]]
        game = answer(server, f"/api/games/{made['game_id']}")
    assert over[0] == over[1]
    state = replayed(game)
    assert state.is_terminal()
    assert over[0]["scores"] == game["scores"] == state.pile_scores()
    assert over[0]["returns"] == state.returns()
    assert sorted(set(checked)) == [1, 3] and len(checked) >= 20
    assert game["deal"] == " ".join(card_code(int(c)) for c in load_deals(limit=4)[3])
    assert [s["name"] for s in game["seats"]] == ["random-bot", "ScrofaZero", "random-bot",
                                                  "Mr. Greed"]
    assert all(m["fallback"] is None for m in game["moves"])
    thinking = [m["thinking"] for m in game["moves"] if m["seat"] == 1]
    assert all(t is not None for t in thinking)
    searched = [t for t in thinking if not t["forced"]]
    assert searched and all(abs(sum(sum(b["p"]) for b in t["belief"]) - len(t["belief"])) < 1e-2
                            for t in searched)
    assert [m["thinking"] for m in game["moves"] if m["seat"] != 1] == [None] * 39
    # a table created with thinking off sends none of it (the records keep it)
    assert not [m for m in got if m["type"] == "thinking"] and not got[0]["thinking"]
    assert [m["type"] for m in got if m["type"] == "error"] == []


async def _errors_case(server):
    made = create(server, ["open", "open", "random", "random"], deal=0)
    table, tokens = made["table"], made["tokens"]
    a, b, c = [await Client.connect(server.ws) for _ in range(3)]
    live = server.hub.tables[table]

    async def refused(client, msg, code):
        reply = await client.ask(msg, "error")
        assert reply["code"] == code, (msg, reply)
        return reply

    # before the start
    await a.ask({"type": "join", "table": table, "seat": 0, "token": tokens["0"]}, "welcome")
    await refused(a, {"type": "play", "card": "S2"}, "not_started")
    # joining wrongly
    await refused(c, {"type": "join", "table": "nope", "seat": 0, "token": "x"}, "unknown_table")
    await refused(c, {"type": "join", "table": table, "seat": 7, "token": "x"}, "unknown_seat")
    await refused(c, {"type": "join", "table": table, "seat": 1, "token": tokens["0"]},
                  "bad_token")
    await refused(c, {"type": "join", "table": table, "seat": 2, "token": ""}, "bad_token")
    await refused(c, {"type": "play", "card": "S2"}, "not_joined")
    await b.ask({"type": "join", "table": table, "seat": 1, "token": tokens["1"]}, "welcome")
    turn = await a.next("your_turn")
    assert turn["ply"] == 1
    hand = set(live.state.view(0).legal_actions())
    # malformed
    await refused(a, "this is not json", "bad_json")
    await refused(a, json.dumps({"type": "play", "card": "S2", "pad": "x" * 5000}), "too_large")
    await refused(a, "[1, 2]", "bad_message")
    await refused(a, {"type": "dance"}, "bad_message")
    await refused(a, {"type": "play"}, "bad_message")
    await refused(a, {"type": "play", "card": "ZZ"}, "bad_message")
    await refused(a, {"type": "play", "card": 3}, "bad_message")
    await refused(a, {"type": "join", "table": table, "seat": "0", "token": tokens["0"]},
                  "bad_message")
    await refused(a, {"v": 2, "type": "ping"}, "unsupported_version")
    # out of turn, stale, illegal
    await refused(b, {"type": "play", "card": "S2"}, "not_your_turn")
    not_mine = next(c for c in range(52) if not live.state.hands[0] >> c & 1)
    reply = await refused(a, {"type": "play", "card": card_code(not_mine)}, "illegal_card")
    assert "not in your hand" in reply["message"]
    first = min(hand)
    await refused(a, {"type": "play", "card": card_code(first), "ply": 5}, "not_your_turn")
    assert live.state.num_played == 0 and not any(m["type"] == "played" for m in b.got)
    assert (await a.ask({"type": "ping"}, "pong"))["v"] == 1  # the socket is still open
    await a.send({"type": "play", "card": card_code(first), "ply": 1})
    assert (await a.next("played"))["card"] == card_code(first)
    # a revoke: seat 1 must follow the led suit if it can
    turn = await b.next("your_turn")
    led = first // 13
    other = [c for c in range(52) if live.state.hands[1] >> c & 1 and c // 13 != led]
    if any(c // 13 == led for c in range(52) if live.state.hands[1] >> c & 1) and other:
        reply = await refused(b, {"type": "play", "card": card_code(other[0])}, "illegal_card")
        assert "must follow" in reply["message"]
    assert live.state.num_played == 1
    # no peeking at the hands
    assert http(server, f"/api/games/{made['game_id']}/export")[0] == 409
    return a, b, c, table, made["game_id"]


def test_every_bad_input_is_refused_and_changes_nothing(tmp_path):
    with running_server(tmp_path) as server:
        async def case():
            a, b, c, _table, game_id = await _errors_case(server)

            async def autoplay(client):
                while True:
                    msg = await client.next()
                    if msg["type"] == "your_turn":
                        await client.send({"type": "play", "card": msg["legal"][0],
                                           "ply": msg["ply"]})
                    elif msg["type"] == "game_over":
                        return msg

            turn = [m for m in b.got if m["type"] == "your_turn"][-1]
            await b.send({"type": "play", "card": turn["legal"][0], "ply": turn["ply"]})
            over = await asyncio.gather(autoplay(a), autoplay(b))
            reply = await a.ask({"type": "play", "card": "S2"}, "error")
            assert reply["code"] == "game_over"
            # a frame over the socket's limit closes that socket only
            await c.send("x" * 70000)
            with pytest.raises(ConnectionClosed):
                await c.next(timeout=5)
            assert c.ws.close_code == 1009
            assert (await a.ask({"type": "ping"}, "pong"))["v"] == 1
            for client in (a, b):
                await client.close()
            return over, game_id

        over, game_id = asyncio.run(case())
        game = answer(server, f"/api/games/{game_id}")
    assert over[0]["scores"] == game["scores"] == replayed(game).pile_scores()


def test_create_refuses_bad_tables(tmp_path):
    with running_server(tmp_path) as server:
        for body, words in [({"type": "create", "seats": ["open", "greed"]}, "4 of"),
                            ({"type": "create", "seats": ["open", "x", "greed", "if"]}, "4 of"),
                            ({"type": "create", "seats": ["open"] * 4, "deal": 5000}, "0..1023"),
                            ({"type": "create", "seats": ["open"] * 4, "leader": 4}, "leader"),
                            ({"type": "ping"}, "create"), (b"{", "not JSON")]:
            status, reply = http(server, "/api/tables", body)
            assert status == 400 and words in reply["message"], reply
        assert answer(server, "/api/tables") == []


def test_reconnect_with_the_token_resumes_where_the_game_stands(tmp_path):
    with running_server(tmp_path, reconnect_grace_s=30.0) as server:
        made = create(server, ["open", "random", "random", "random"], deal=5)
        table = server.hub.tables[made["table"]]

        async def case():
            watcher = await Client.connect(server.ws)
            seen = await watcher.ask({"type": "watch", "table": made["table"]}, "welcome")
            assert seen["seat"] is None and seen["hand"] == [] and seen["status"] == "waiting"
            a = await Client.connect(server.ws)
            await a.send({"type": "join", "table": made["table"], "seat": 0,
                          "token": made["tokens"]["0"], "name": "me"})
            for _ in range(3):  # play three of our moves, then drop the socket at our turn
                turn = await a.next("your_turn")
                await a.send({"type": "play", "card": turn["legal"][-1], "ply": turn["ply"]})
            await a.next("your_turn")
            await a.close()
            await asyncio.sleep(0.5)
            assert not table.seats[0].away and table.seats[0].conn is None
            before = table.state.num_played
            b = await Client.connect(server.ws)
            welcome = await b.ask({"type": "join", "table": made["table"], "seat": 0,
                                   "token": made["tokens"]["0"]}, "welcome")
            view = table.state.view(0)
            assert welcome["ply"] == before == len(view.history)
            assert [card_index(c) for c in welcome["hand"]] == \
                [c for c in range(52) if view.hand >> c & 1]
            assert [(s, card_index(c)) for s, c in welcome["history"]] == list(view.history)
            turn = await b.next("your_turn")
            assert turn["ply"] == before + 1
            while True:
                await b.send({"type": "play", "card": turn["legal"][0], "ply": turn["ply"]})
                msg = await b.next()
                while msg["type"] not in ("your_turn", "game_over"):
                    msg = await b.next()
                if msg["type"] == "game_over":
                    watched = await watcher.next("game_over")
                    kinds = {m["type"] for m in watcher.got}
                    assert watched == msg and "your_turn" not in kinds
                    assert len([m for m in watcher.got if m["type"] == "played"]) == 52
                    return msg
                turn = msg

        over = asyncio.run(case())
        game = answer(server, f"/api/games/{made['game_id']}")
    assert over["scores"] == game["scores"] == replayed(game).pile_scores()
    assert all(m["fallback"] is None for m in game["moves"])
    assert game["seats"][0]["name"] == "me"


def _lowest_legal_fallbacks(game: dict, seat: int) -> list[str]:
    """The fallbacks of `seat`'s moves, checking each move is its lowest legal card."""
    state = GongzhuState([card_index(c) for c in game["deal"].split()], leader=game["leader"])
    reasons = []
    for move in game["moves"]:
        if move["seat"] == seat:
            assert card_index(move["card"]) == min(state.legal_actions())
            reasons.append(move["fallback"])
        state.apply(card_index(move["card"]))
    return reasons


def test_deadline_and_absence_play_the_lowest_legal_card(tmp_path):
    with running_server(tmp_path, move_deadline_s=0.3, reconnect_grace_s=0.3) as server:
        silent = create(server, ["open", "greed", "random", "random"], deal=1)
        gone = create(server, ["random", "open", "random", "greed"], deal=2)

        async def case():
            quiet = await Client.connect(server.ws)  # joins and never answers
            await quiet.send({"type": "join", "table": silent["table"], "seat": 0,
                              "token": silent["tokens"]["0"]})
            leaver = await Client.connect(server.ws)
            await leaver.ask({"type": "join", "table": gone["table"], "seat": 1,
                              "token": gone["tokens"]["1"]}, "welcome")
            await leaver.close()
            over = await quiet.next("game_over", timeout=60)
            played = [m for m in quiet.got if m["type"] == "played" and m["seat"] == 0]
            await quiet.close()
            return over, played

        over, played = asyncio.run(case())
        game = wait_finished(server, silent["game_id"])
        left = wait_finished(server, gone["game_id"])
    assert len(played) == 13 and {m["fallback"] for m in played} == {"deadline"}
    assert _lowest_legal_fallbacks(game, 0) == ["deadline"] * 13
    assert over["scores"] == game["scores"] == replayed(game).pile_scores()
    reasons = _lowest_legal_fallbacks(left, 1)
    assert len(reasons) == 13 and set(reasons) <= {"away", "deadline"} and "away" in reasons
    assert left["scores"] == replayed(left).pile_scores()


def test_a_crashing_bot_never_blocks_its_table(tmp_path, monkeypatch):
    class Crasher:
        name = "crasher"

        def act(self, view, rng):
            raise RuntimeError("boom")

    with running_server(tmp_path) as server:
        real = server.hub.make_bot
        monkeypatch.setattr(server.hub, "make_bot",
                            lambda kind: Crasher() if kind == "if" else real(kind))
        made = create(server, ["greed", "if", "random", "if"], deal=4)
        game = wait_finished(server, made["game_id"])
    for seat in (1, 3):
        assert _lowest_legal_fallbacks(game, seat) == ["bot_error"] * 13
    assert game["scores"] == replayed(game).pile_scores()


def test_a_second_join_replaces_the_first_socket(tmp_path):
    with running_server(tmp_path) as server:
        made = create(server, ["open", "open", "random", "random"])

        async def case():
            first = await Client.connect(server.ws)
            await first.ask({"type": "join", "table": made["table"], "seat": 1,
                             "token": made["tokens"]["1"]}, "welcome")
            second = await Client.connect(server.ws)
            await second.ask({"type": "join", "table": made["table"], "seat": 1,
                              "token": made["tokens"]["1"]}, "welcome")
            reply = await first.next("error")
            assert reply["code"] == "replaced"
            with pytest.raises(ConnectionClosed):
                await first.next(timeout=5)
            assert server.hub.tables[made["table"]].seats[1].conn is not None
            assert (await second.ask({"type": "ping"}, "pong"))["v"] == 1
            await second.close()

        asyncio.run(case())


def test_every_bot_is_warmed_before_the_server_is_ready(tmp_path):
    """Compiling (Mr. Greed's numba kernels) and loading (the network) happen at start: each
    registered player has made one move before the first table (benchmarks/serve.py times the
    first real moves)."""
    from scrofazero.agents import PLAYERS

    with running_server(tmp_path) as server:
        warmed = server.app.state.play["warm_s"]
        assert set(warmed) == set(PLAYERS) and server.hub._model is not None
