"""The play server under abuse: every resource bounded, no request stalls the tables.

Invariants: each per-client limit (table_creates_per_minute, max_waiting_tables_per_client,
max_waiting_tables, max_bot_matches, client_requests_per_s) refuses past it with the `limit`
error naming the setting, and client_frames_per_s makes a flooding socket wait (told once, no
frame lost); a waiting Fish table expires after idle_expire_s as a Gongzhu one does; tables of
bots only think in their own threads; listings are paged at max_page_size; a slow replay runs
off the event loop (a socket's ping is answered meanwhile) and many asks for one finished
match's replay compute it once; every page carries the security headers; a blank name and a
chosen deal at a public table are refused; a socket whose writer missed its cancellation ends
anyway; a table's deal seed comes from the operating system's entropy when the server has no
seed.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from serve_thread import Client, answer, finished_game, http, running_server

from scrofazero.serve.common import client_hub
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.common.sockets import SocketClient
from scrofazero.serve.gongzhu import routes as gongzhu_routes
from scrofazero.serve.gongzhu.protocol import parse_claim, parse_client_message

OPEN4 = {"type": "create", "seats": ["open"] * 4}


def refused_by(status_answer, setting: str) -> None:
    status, got = status_answer
    assert status == 429 and got["code"] == "limit", got
    assert setting in got["message"], got


def test_table_creation_is_rated_per_client(tmp_path):
    with running_server(tmp_path, table_creates_per_minute=3) as server:
        for _ in range(3):
            answer(server, "/api/tables", OPEN4)
        refused_by(http(server, "/api/tables", OPEN4), "table_creates_per_minute")
        refused_by(http(server, "/api/fish/tables", {"type": "fish_create",
                                                     "seats": ["open"] * 6}),
                   "table_creates_per_minute")


@pytest.mark.parametrize("settings, named", [
    ({"max_waiting_tables_per_client": 2}, "max_waiting_tables_per_client=2"),
    ({"max_waiting_tables": 2}, "max_waiting_tables=2"),
])
def test_waiting_tables_are_capped(tmp_path, settings, named):
    with running_server(tmp_path, **settings) as server:
        answer(server, "/api/tables", OPEN4)
        answer(server, "/api/fish/tables", {"type": "fish_create", "seats": ["open"] * 6})
        refused_by(http(server, "/api/tables", OPEN4), named)

        async def over_the_socket():
            client = await Client.connect(server.ws)
            got = await client.ask(OPEN4)
            await client.close()
            return got

        got = asyncio.run(over_the_socket())
        assert got["code"] == "limit" and named in got["message"]


def test_bot_matches_have_a_budget_and_threads_of_their_own(tmp_path):
    with running_server(tmp_path, max_bot_matches=1) as server:
        answer(server, "/api/tables", {"type": "create", "seats": ["random"] * 4, "hands": 100})
        refused_by(http(server, "/api/tables", {"type": "create", "seats": ["greed"] * 4}),
                   "max_bot_matches=1")
        mixed = answer(server, "/api/tables", {"type": "create",
                                               "seats": ["open", "random", "random", "random"]})
        hub = server.hub
        bots_only = next(t for t in hub.tables.values() if t.bots_only)
        threads = {c.threads for c, (t, _) in list(hub.where.items()) if hasattr(c, "threads")
                   and t is bots_only}
        assert threads == {hub.bot_match_threads}
        people = hub.tables[mixed["table"]]
        assert {c.threads for c, (t, _) in list(hub.where.items())
                if hasattr(c, "threads") and t is people} == {hub.bot_threads}


def test_a_waiting_fish_table_expires(tmp_path):
    with running_server(tmp_path, idle_expire_s=0.5) as server:
        made = answer(server, "/api/fish/tables", {"type": "fish_create",
                                                   "seats": ["open"] * 2 + ["random"] * 4})

        async def seated():
            client = await Client.connect(server.ws.replace("/ws", "/ws/fish"))
            await client.ask({"type": "fish_join", "table": made["table"], "seat": 0,
                              "token": made["tokens"]["0"]}, "fish_welcome")
            got = await client.next("error", timeout=10)
            await client.close()
            return got

        got = asyncio.run(seated())
        assert got["code"] == "expired"
        assert answer(server, "/api/fish/tables") == []
        deadline = time.time() + 10
        while server.app.state.play["fish_hub"].records.game(made["game_id"])["status"] != \
                "expired":
            assert time.time() < deadline
            time.sleep(0.05)


def test_http_requests_are_rated_per_client(tmp_path):
    with running_server(tmp_path, client_requests_per_s=5) as server:
        results = []

        def ask():
            results.append(http(server, "/api/options"))

        threads = [threading.Thread(target=ask) for _ in range(30)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        statuses = sorted(status for status, _ in results)
        assert statuses.count(200) >= 5 and 429 in statuses  # a second's worth waits, no more
        refused_by(next(r for r in results if r[0] == 429), "client_requests_per_s")


def test_a_socket_flooding_frames_is_read_no_faster(tmp_path):
    with running_server(tmp_path, client_frames_per_s=20) as server:
        async def flood():
            client = await Client.connect(server.ws)
            start = time.monotonic()
            for _ in range(60):
                await client.send({"type": "ping"})
            kinds = [(await client.next(timeout=20))["type"] for _ in range(61)]
            elapsed = time.monotonic() - start
            await client.close()
            return kinds, client.got, elapsed

        kinds, got, elapsed = asyncio.run(flood())
    assert kinds.count("pong") == 60  # every frame handled, none dropped
    notice = next(m for m in got if m["type"] == "error")
    assert notice["code"] == "limit" and "client_frames_per_s" in notice["message"]
    assert elapsed > 1.0  # 40 frames past the burst of 20, at 20 a second


def test_listings_are_paged(tmp_path):
    with running_server(tmp_path, max_page_size=3) as server:
        made = [answer(server, "/api/tables", OPEN4)["table"] for _ in range(5)]
        assert [t["table"] for t in answer(server, "/api/tables")] == made[:3]  # a full page
        assert [t["table"] for t in answer(server, "/api/tables?offset=3")] == made[3:]
        assert len(answer(server, "/api/games?limit=3")) == 3
        assert [g["table"] for g in answer(server, "/api/games?offset=4")] == made[:1]
        public = answer(server, "/api/tables", {**OPEN4, "public": True})["table"]
        assert [t["table"] for t in answer(server, "/api/tables?public=true")] == [public]


def test_a_slow_replay_stalls_no_socket_and_is_computed_once(tmp_path, monkeypatch):
    with running_server(tmp_path) as server:
        match_id = finished_game(server, 2)["match_id"]
        computed = []
        real = gongzhu_routes.replay_frames

        def slow_replay(game):  # in a worker thread: the event loop must go on meanwhile
            computed.append(game["id"])
            time.sleep(0.5)
            return real(game)

        monkeypatch.setattr(gongzhu_routes, "replay_frames", slow_replay)
        answers = []
        threads = [threading.Thread(target=lambda: answers.append(
            http(server, f"/api/matches/{match_id}/replay"))) for _ in range(5)]

        async def ping_meanwhile():
            client = await Client.connect(server.ws)
            await asyncio.sleep(0.2)  # the replays are under way
            start = time.monotonic()
            await client.ask({"type": "ping"}, "pong")
            taken = time.monotonic() - start
            await client.close()
            return taken

        for thread in threads:
            thread.start()
        taken = asyncio.run(ping_meanwhile())
        for thread in threads:
            thread.join()
        assert taken < 0.4  # one replay of the two hands alone takes 1 s
        assert [status for status, _ in answers] == [200] * 5
        assert all(a == answers[0][1] for _, a in answers)
        assert len(computed) == 2  # each hand once, for all five asks
        http(server, f"/api/matches/{match_id}/replay")
        assert len(computed) == 2  # a finished match's replay is kept


def test_pages_and_answers_carry_the_security_headers(tmp_path):
    import urllib.request
    with running_server(tmp_path) as server:
        for path in ("/", "/fish", "/static/help.html", "/api/options", "/api/games/1"):
            try:
                resp = urllib.request.urlopen(server.url + path, timeout=30)
            except urllib.error.HTTPError as err:
                resp = err
            headers = resp.headers
            assert "frame-ancestors 'none'" in headers["Content-Security-Policy"], path
            assert "script-src 'self'" in headers["Content-Security-Policy"], path
            assert headers["X-Frame-Options"] == "DENY", path
            assert headers["X-Content-Type-Options"] == "nosniff", path


@pytest.mark.parametrize("name", [" ", "   ", "\u3000"])
def test_a_blank_name_is_refused(name):
    import json
    with pytest.raises(ProtocolError, match="name"):
        parse_client_message(json.dumps({"type": "join", "table": "t", "seat": 0,
                                         "token": "x", "name": name}))
    with pytest.raises(ProtocolError, match="name"):
        parse_claim(json.dumps({"seat": 0, "name": name}).encode())


def test_a_chosen_deal_is_for_private_tables_only(tmp_path):
    with running_server(tmp_path) as server:
        status, got = http(server, "/api/tables", {**OPEN4, "public": True, "deal": 17})
        assert status == 400 and "private tables only" in got["message"]
        answer(server, "/api/tables", {**OPEN4, "deal": 17})  # private: allowed


class SwallowingSocket:
    """A WebSocket whose send finishes just as it is cancelled, so the cancellation is lost
    (as Python 3.11's wait_for can lose it)."""

    client = None

    def __init__(self):
        self.sending = asyncio.Event()

    async def send_json(self, msg) -> None:
        self.sending.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return  # swallowed

    async def close(self, code: int = 1000, reason: str = "") -> None:
        pass


def test_a_socket_writer_that_missed_its_cancel_still_ends():
    async def case():
        ws = SwallowingSocket()
        client = SocketClient(ws)
        await client.send({"type": "pong"})
        await ws.sending.wait()
        client.stop()
        await asyncio.wait_for(client.stopped(), 2)
        return client._writer.done()

    assert asyncio.run(case())


def test_no_pending_socket_task_is_left_on_disconnect(tmp_path, caplog):
    import gc
    with running_server(tmp_path) as server:
        made = answer(server, "/api/tables", OPEN4)

        async def come_and_go():
            for seat in range(4):
                client = await Client.connect(server.ws)
                await client.ask({"type": "join", "table": made["table"], "seat": seat,
                                  "token": made["tokens"][str(seat)]}, "welcome")
                await client.close()
            await asyncio.sleep(0.3)

        asyncio.run(come_and_go())
        gc.collect()
    assert "Task was destroyed but it is pending" not in caplog.text


def test_a_deal_seed_comes_from_the_systems_entropy(tmp_path, monkeypatch):
    drawn = iter([111, 222, 333, 444])
    monkeypatch.setattr(client_hub.secrets, "randbits", lambda bits: next(drawn))
    with running_server(tmp_path, seed=None) as server:
        made = answer(server, "/api/fish/tables", {"type": "fish_create",
                                                   "seats": ["open"] * 6})
        hub = server.app.state.play["fish_hub"]
        state = hub.rng.bit_generator.state
        assert hub.tables[made["table"]].seed == 111  # not the server's generator's
        answer(server, "/api/fish/tables", {"type": "fish_create", "seats": ["open"] * 6})
        assert hub.rng.bit_generator.state == state  # which is never drawn from


def test_a_forwarded_for_header_picks_no_address(tmp_path):
    # uvicorn by default takes X-Forwarded-For from a local peer: each table below would have
    # counted against an address of the client's choosing, and none would have been refused.
    with running_server(tmp_path, max_waiting_tables_per_client=2) as server:
        for i in range(2):
            status, got = http(server, "/api/tables", OPEN4, X_Forwarded_For=f"203.0.113.{i}")
            assert status == 200, got
        status, got = http(server, "/api/tables", OPEN4, X_Forwarded_For="203.0.113.9")
        refused_by((status, got), "max_waiting_tables_per_client=2")
        assert got["message"].startswith("127.0.0.1 ")
