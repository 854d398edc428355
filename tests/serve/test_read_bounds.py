"""Reads of the records under abuse, and the edges of their queries.

Invariants: a finished hand's replay is built once and kept even while its match goes on (a
flood of a live match's replay rebuilds none of its finished hands); a listing's offset as large
as the bound allows answers an empty page (never a 500); a server error's answer carries the
security headers too.
"""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request

from serve_thread import Client, answer, http, running_server

from scrofazero.serve.common.sockets import MAX_GAME_ID
from scrofazero.serve.gongzhu import routes as gongzhu_routes


async def play_a_hand(server, made: dict) -> None:
    """Seat 0 of `made` plays its cards of the first hand, and says nothing after it (the match
    waits between hands)."""
    person = await Client.connect(server.ws)
    await person.send({"type": "join", "table": made["table"], "seat": 0,
                       "token": made["tokens"]["0"]})
    while True:
        msg = await person.next()
        if msg["type"] == "your_turn":
            await person.send({"type": "play", "card": msg["legal"][0], "ply": msg["ply"]})
        elif msg["type"] == "hand_over":
            break
    await person.close()


def test_a_live_matchs_finished_hand_is_replayed_once(tmp_path, monkeypatch):
    with running_server(tmp_path, next_hand_s=60.0) as server:
        made = answer(server, "/api/tables", {"type": "create", "hands": 2,
                                              "seats": ["open", "random", "random", "random"]})
        asyncio.run(play_a_hand(server, made))
        deadline = time.time() + 30
        while (got := http(server, f"/api/games/{made['game_id']}"))[0] != 200:
            assert time.time() < deadline, got  # its result is being written
            time.sleep(0.05)
        game = got[1]
        assert answer(server, f"/api/matches/{game['match_id']}")["status"] != "finished"
        built = []
        real = gongzhu_routes.replay_frames

        def counted(record):
            built.append(record["id"])
            return real(record)

        monkeypatch.setattr(gongzhu_routes, "replay_frames", counted)
        replays = [answer(server, f"/api/matches/{game['match_id']}/replay") for _ in range(3)]
        alone = answer(server, f"/api/games/{game['id']}/replay")
        assert built == [game["id"]]  # once, for all four asks
        assert all(r == replays[0] for r in replays)
        assert replays[0]["match"]["id"] == game["match_id"]
        assert replays[0]["hands"] == [alone] and len(alone["frames"]) == 53


def test_the_largest_offset_answers_an_empty_page(tmp_path):
    with running_server(tmp_path) as server:
        answer(server, "/api/tables", {"type": "create", "seats": ["open"] * 4})
        for path in ("/api/tables", "/api/fish/tables", "/api/games", "/api/matches",
                     "/api/fish/games"):
            assert answer(server, f"{path}?offset={MAX_GAME_ID}") == [], path


def test_a_server_error_carries_the_security_headers(tmp_path, monkeypatch):
    def broken(*_):
        raise RuntimeError("a bug")

    with running_server(tmp_path) as server:
        monkeypatch.setattr(gongzhu_routes, "options_answer", broken)
        try:
            urllib.request.urlopen(server.url + "/api/options", timeout=30)
            raise AssertionError("no error")
        except urllib.error.HTTPError as err:
            assert err.code == 500
            headers = err.headers
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
