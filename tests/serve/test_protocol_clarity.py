"""What a bot author would otherwise have to guess (docs/protocol.md), held to a real server.

Invariants: every client message gets exactly one answer, the first message its handling sends
back, marked with `in_reply_to` (its type; `invalid` for a frame that is no message) and its
`id` when it had one, and nothing else is marked: not the others' moves, not a `limit` notice,
not `replaced`; so a client pairing requests with answers stays in step through a burst of 300
pings past the frame limit, a whole two-hand match (a `next` said twice is answered twice), and a
Fish game. Every listing refuses a page out of bounds (400 `bad_message` naming the bounds);
GET /api/matches and /api/fish/games list newest first, a page at a time, showing no cards;
the review of a match in play is refused as in_play, an abandoned game's review covers the
moves played; the export's header line reads back with names holding spaces; every time an
answer gives has its UTC offset; the replay frames' fields are the documented ones.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from datetime import datetime, timedelta

import numpy as np
import pytest
import websockets
from protocol_doc import protocol_text
from serve_thread import answer, http, running_server

from scrofazero.eval.review import ReviewSettings
from scrofazero.games.gongzhu.cards import card_code
from scrofazero.games.gongzhu.deals import format_deal, random_deal
from scrofazero.games.gongzhu.game_record import parse_games, replay
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.search.mcts import MCTSConfig
from scrofazero.serve.common.sockets import MAX_GAME_ID
from scrofazero.serve.fish.records import FishRecords, fish_move_row
from scrofazero.serve.gongzhu.records import Records, export_text, move_row, replay_frames
from scrofazero.serve.gongzhu.reviews import Reviews

ANSWERS = {"create": {"created"}, "join": {"welcome"}, "watch": {"welcome"}, "ping": {"pong"},
           "play": {"played"}, "next": {"ready"}, "fish_create": {"fish_created"},
           "fish_join": {"fish_welcome"}, "ask": {"asked"}, "call": {"called"}}


class Peer:
    """One socket: the requests it sent and every message it got, in order."""

    def __init__(self, ws):
        self.ws = ws
        self.sent: list[object] = []
        self.got: list[dict] = []

    @classmethod
    async def connect(cls, url: str) -> Peer:
        return cls(await websockets.connect(url))

    async def send(self, msg) -> None:
        self.sent.append(msg)
        await self.ws.send(msg if isinstance(msg, str) else json.dumps(msg))

    async def next(self) -> dict:
        msg = json.loads(await asyncio.wait_for(self.ws.recv(), 30))
        self.got.append(msg)
        return msg

    async def until(self, kind: str) -> dict:
        while (msg := await self.next())["type"] != kind:
            pass
        return msg

    def check_paired(self, seat: int | None = None) -> list[dict]:
        """The answers, one per request in order, each of its request's kind (or an error);
        nothing else marked as one. Returns the answers."""
        answers = [m for m in self.got if "in_reply_to" in m]
        assert len(answers) == len(self.sent), (len(answers), len(self.sent))
        for request, reply in zip(self.sent, answers):
            kind = request.get("type") if isinstance(request, dict) else None
            assert reply["in_reply_to"] == (kind if kind in ANSWERS else "invalid"), reply
            assert reply.get("id") == (request.get("id") if isinstance(request, dict) else None)
            assert reply["type"] in ANSWERS.get(kind, set()) | {"error"}, (request, reply)
            if reply["type"] in ("played", "ready", "asked", "called"):
                assert reply["seat"] == seat  # its own move, not another seat's
        assert all("id" not in m for m in self.got if "in_reply_to" not in m)
        return answers


def test_a_burst_of_300_pings_stays_paired_past_the_frame_limit(tmp_path):
    with running_server(tmp_path, client_frames_per_s=150) as server:
        async def burst():
            peer = await Peer.connect(server.ws)
            for i in range(300):
                await peer.send({"type": "ping", "id": i})
            while sum("in_reply_to" in m for m in peer.got) < 300:
                await peer.next()
            await peer.ws.close()
            return peer

        peer = asyncio.run(burst())
    answers = peer.check_paired()
    assert [(m["type"], m["id"]) for m in answers] == [("pong", i) for i in range(300)]
    notices = [m for m in peer.got if "in_reply_to" not in m]
    assert notices and all(m["code"] == "limit" and "client_frames_per_s" in m["message"]
                           for m in notices)


async def seat_b(peer: Peer, table: str, token: str, go_on: asyncio.Event) -> None:
    """Seat 1 of the match: plays its turns, says `next` only once `go_on` is set."""
    await peer.send({"type": "join", "table": table, "seat": 1, "token": token, "id": "b"})
    while True:
        msg = await peer.next()
        if msg["type"] == "your_turn":
            await peer.send({"type": "play", "card": msg["legal"][0], "ply": msg["ply"],
                             "id": msg["ply"]})
        elif msg["type"] == "hand_over":
            await go_on.wait()
            await peer.send({"type": "next", "id": "b-next"})
        elif msg["type"] == "match_over":
            return


async def seat_a(peer: Peer, go_on: asyncio.Event) -> None:
    """Seat 0: a stale play before each real one; at the hand's end `next`, twice."""
    nexts = 0
    while True:
        msg = await peer.next()
        if msg["type"] == "your_turn":
            await peer.send({"type": "play", "card": msg["legal"][0], "ply": 99, "id": "stale"})
            await peer.send({"type": "play", "card": msg["legal"][0], "ply": msg["ply"],
                             "id": f"ply {msg['ply']}"})
        elif msg["type"] == "hand_over":
            await peer.send({"type": "next", "id": "n1"})
            await peer.send({"type": "next", "id": "n2"})  # said again: answered again
        elif msg["type"] == "ready" and msg.get("in_reply_to") == "next":
            nexts += 1
            if nexts == 2:
                go_on.set()
        elif msg["type"] == "match_over":
            return


def test_every_message_of_a_match_gets_one_answer_and_only_answers_are_marked(tmp_path):
    with running_server(tmp_path) as server:
        async def match():
            a, b, w = [await Peer.connect(server.ws) for _ in range(3)]
            await a.send({"type": "create", "id": "c", "hands": 2, "deal": 5,
                          "seats": ["open", "open", "random", "random"]})
            made = await a.until("created")
            await a.send("not json")
            await a.send({"type": "dance", "id": 7})
            await a.send({"type": "play", "card": "S2", "id": "early"})
            await a.send({"type": "ping"})
            await a.send({"type": "join", "table": made["table"], "seat": 0, "id": 1,
                          "token": made["tokens"]["0"]})
            await a.until("welcome")
            await w.send({"type": "watch", "table": made["table"], "id": "w"})
            go_on = asyncio.Event()
            await asyncio.gather(seat_a(a, go_on), seat_b(b, made["table"], made["tokens"]["1"],
                                                          go_on), w.until("match_over"))
            again = await Peer.connect(server.ws)
            await again.send({"type": "join", "table": made["table"], "seat": 0, "id": "again",
                              "token": made["tokens"]["0"]})
            await again.until("welcome")
            replaced = await a.until("error")
            for peer in (a, b, w, again):
                await peer.ws.close()
            return a, b, w, again, replaced

        a, b, w, again, replaced = asyncio.run(match())
    answers = a.check_paired(seat=0)
    assert [m["code"] for m in answers[1:4]] == ["bad_json", "bad_message", "not_joined"]
    assert answers[4]["type"] == "pong" and "id" not in answers[4]
    stale = [m for m in answers if m.get("id") == "stale"]
    assert len(stale) == 26 and all(m["code"] == "not_your_turn" for m in stale)
    assert [(m["type"], m["id"]) for m in answers if m["in_reply_to"] == "next"] == \
        [("ready", "n1"), ("ready", "n2")]
    b.check_paired(seat=1)
    w.check_paired()
    again.check_paired()
    assert replaced["code"] == "replaced" and "in_reply_to" not in replaced
    # the others' moves reach every socket unmarked
    assert [m["seat"] for m in a.got if m["type"] == "played" and "in_reply_to" not in m] \
        == [m["seat"] for m in w.got if m["type"] == "played" and m["seat"] != 0]


def test_a_fish_socket_gets_one_answer_per_message(tmp_path):
    with running_server(tmp_path) as server:
        async def game():
            peer = await Peer.connect(server.ws + "/fish")
            await peer.send({"type": "fish_create", "id": "f", "seed": 3, "first": 0,
                             "seats": ["open"] + ["random"] * 5})
            made = await peer.until("fish_created")
            await peer.send({"type": "fish_join", "table": made["table"], "seat": 0,
                             "token": made["tokens"]["0"], "id": 0})
            turn = await peer.until("fish_turn")
            target, card = turn["asks"][0]
            await peer.send({"type": "ask", "target": 2, "card": card, "id": "teammate"})
            await peer.send({"type": "ask", "target": target, "card": card,
                             "move": turn["move"], "id": "ask"})
            await peer.send({"type": "ping", "id": "p"})
            await peer.until("pong")
            await peer.ws.close()
            return peer

        peer = asyncio.run(game())
    answers = peer.check_paired(seat=0)
    assert [m["type"] for m in answers] == ["fish_created", "fish_welcome", "error", "asked",
                                            "pong"]
    assert answers[2]["rule"] == "ask-teammate"


OPEN4 = {"type": "create", "seats": ["open"] * 4}
LISTINGS = ["/api/games", "/api/tables", "/api/matches", "/api/fish/tables", "/api/fish/games"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("clarity"), max_page_size=3) as running:
        yield running


@pytest.mark.parametrize("path", LISTINGS)
@pytest.mark.parametrize("query, said", [
    ("limit=0", "limit must be 1..3 (the server's max_page_size), got 0"),
    ("limit=100000", "limit must be 1..3 (the server's max_page_size), got 100000"),
    ("offset=-1", f"offset must be 0..{MAX_GAME_ID}, got -1"),
    (f"offset={MAX_GAME_ID + 1}", f"offset must be 0..{MAX_GAME_ID}, got {MAX_GAME_ID + 1}"),
])
def test_a_page_out_of_bounds_is_refused_naming_the_bounds(server, path, query, said):
    status, got = http(server, f"{path}?{query}")
    assert (status, got["code"], got["message"]) == (400, "bad_message", said)
    assert http(server, f"{path}?limit=3&offset=0")[0] == 200


def test_the_listings_of_matches_and_fish_games_are_newest_first_and_paged(server):
    made = [answer(server, "/api/tables", OPEN4) for _ in range(4)]
    newest = sorted({g["match_id"] for g in answer(server, "/api/games?limit=3")},
                    reverse=True)
    listed = answer(server, "/api/matches")
    assert [m["id"] for m in listed] == newest
    assert [m["game_ids"] for m in listed] == [[g["game_id"]] for g in made[::-1][:3]]
    assert [m["id"] for m in answer(server, "/api/matches?limit=2&offset=1")] == newest[1:3]
    assert all(m["status"] == "waiting" for m in listed)
    assert answer(server, "/api/matches?status=finished") == []
    assert http(server, "/api/matches?status=bogus")[0] == 400
    fish = [answer(server, "/api/fish/tables", {"type": "fish_create", "seed": 4,
                                                "seats": ["open"] * 6}) for _ in range(2)]
    games = answer(server, "/api/fish/games")
    assert [g["id"] for g in games[:2]] == [f["game_id"] for f in fish[::-1]]
    assert all(not {"deal", "seed", "moves"} & set(g) for g in games)  # a game in play shows
    assert [g["id"] for g in answer(server, "/api/fish/games?limit=1&offset=1")] == \
        [fish[0]["game_id"]]
    assert answer(server, "/api/fish/games?status=finished") == []


def test_the_review_of_a_match_in_play_is_refused_as_the_game_review_is(server):
    made = answer(server, "/api/tables", {**OPEN4, "hands": 3})
    match_id = next(g["match_id"] for g in answer(server, "/api/games?limit=1"))
    status, got = http(server, f"/api/matches/{match_id}/review?seat=0")
    assert (status, got["code"]) == (409, "in_play"), got
    assert f"match {match_id} is still in play" in got["message"]
    assert http(server, f"/api/games/{made['game_id']}/review?seat=0")[0] == 409


def cheap_reviews(server) -> None:
    """The server's reviews on 16 deals and a tiny search: the shape of a review, quickly."""
    settings = ReviewSettings(worlds=16, search=MCTSConfig(budget_base=2, budget_per_legal=1))
    play = server.app.state.play
    play["reviews"].shutdown()
    play["reviews"] = Reviews(play["hub"].model, settings=settings)


def test_an_abandoned_games_review_covers_the_moves_played(tmp_path):
    db = str(tmp_path / "games.sqlite")
    with running_server(tmp_path, db=db) as server:
        made = answer(server, "/api/tables", {"type": "create", "deal": 9,
                                              "seats": ["open", "random", "random", "random"]})

        async def two_moves():
            peer = await Peer.connect(server.ws)
            await peer.send({"type": "join", "table": made["table"], "seat": 0,
                             "token": made["tokens"]["0"]})
            for _ in range(2):
                turn = await peer.until("your_turn")
                await peer.send({"type": "play", "card": turn["legal"][0], "ply": turn["ply"]})
            await peer.until("played")
            return peer

        asyncio.run(two_moves())
    with running_server(tmp_path, db=db) as server:  # the game left in play is abandoned
        cheap_reviews(server)
        game = answer(server, f"/api/games/{made['game_id']}")
        assert game["status"] == "abandoned"
        mine = [m["card"] for m in game["moves"] if m["seat"] == 0]
        assert len(mine) == 2
        path = f"/api/games/{made['game_id']}/review?seat=0"
        for _ in range(300):
            got = answer(server, path)
            if got["status"] != "running":
                break
            time.sleep(0.1)
        assert (got["status"], got["total"]) == ("done", 2), got
        assert [m["card"] for m in got["review"]["moves"]] == mine
        assert got["review"]["result"] is None  # the hand did not finish
        of_match = answer(server, f"/api/matches/{game['match_id']}/review?seat=0")
        assert of_match["status"] == "done" and of_match["hands"] == [got]


def test_the_exports_header_reads_back_with_names_holding_spaces(tmp_path):
    records = Records(str(tmp_path / "g.sqlite"))
    deal = format_deal(random_deal(np.random.default_rng(3)))
    name = "Ann Lee, 1 open Bob"  # a name that reads like more seats in a list
    game_id = records.new_game("t", deal, None, 0, [("open", name), ("greed", "Mr. Greed"),
                                                    ("if", "Mr. If"), ("random", "Zoë")], {})
    text = export_text(records.game(game_id))
    records.close()
    (record,) = parse_games(text, "export")
    assert replay(record).num_played == 0
    assert [s["name"] for s in record.info["seats"]] == [name, "Mr. Greed", "Mr. If", "Zoë"]
    assert (record.info["id"], record.info["status"]) == (game_id, "waiting")
    assert text.splitlines()[0].isascii()  # one line, whatever the names hold


def utc(stamp: str) -> datetime:
    when = datetime.fromisoformat(stamp)
    assert when.utcoffset() == timedelta(0), stamp
    return when


def test_every_time_an_answer_gives_has_its_utc_offset(tmp_path):
    records = Records(str(tmp_path / "g.sqlite"))
    match_id = records.new_match("t", 1, None)
    game_id = records.new_game("t", format_deal(random_deal(np.random.default_rng(1))), None, 0,
                               [("open", "a")] * 4, {}, match_id, 1)
    records.add_moves([move_row(game_id, 1, 0, "S2", 5, None, None)])
    records.set_status(game_id, "abandoned")
    records.set_match(match_id, "abandoned", [0, 0])
    game, match = records.game(game_id), records.match(match_id)
    listed = records.list_matches()
    fish = FishRecords(records.engine)
    fish_id = fish.new_game("f", 6, "any_time", 0, None, [[]] * 6, [("open", "a")] * 6, {})
    fish.add_move(fish_move_row(fish_id, 1, 0, "ask", target=1, card="D2", success=False,
                                think_ms=3, fallback=None, belief=None))
    fish_game = fish.game(fish_id)
    records.close()
    times = [game["created_at"], game["finished_at"], game["moves"][0]["played_at"],
             match["created_at"], match["finished_at"], listed[0]["created_at"],
             fish_game["created_at"], fish_game["moves"][0]["played_at"]]
    assert all(utc(t) for t in times)


def test_the_replay_frames_fields_are_the_documented_ones(tmp_path):
    records = Records(str(tmp_path / "g.sqlite"))
    deal = random_deal(np.random.default_rng(2))
    game_id = records.new_game("t", format_deal(deal), None, 0, [("open", "a")] * 4, {})
    state = GongzhuState(list(deal))
    rows = []
    for ply in range(1, 5):
        seat, card = state.current_player, int(state.legal_actions()[0])
        state.apply(card)
        rows.append(move_row(game_id, ply, seat, card_code(card), 1, None, None))
    records.add_moves(rows)
    frames = replay_frames(records.game(game_id))["frames"]
    records.close()
    doc = " ".join(protocol_text().split())
    bullet = doc[doc.index("- `GET /api/games/ID/replay`"):
                 doc.index("- `GET /api/games/ID/export`")]
    said = set(re.findall(r"`(\w+)`", bullet))
    assert set(frames[0]) <= said and set(frames[4]) <= said, set(frames[4]) - said
    assert frames[4]["leader"] == frames[4]["winner"] == state.leader
    assert "`leader`" in bullet and "`winner`" in bullet
