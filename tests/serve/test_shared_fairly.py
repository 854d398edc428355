"""The play server shared fairly between its clients (issue 49 items 3, 6 and 7), each client a
real loopback source address (Linux routes all of 127.0.0.0/8 to loopback).

Invariants: one client's many tables get one share of the bots' threads, so ScrofaZero at
another client's table keeps its pace while that client's open seats answer at once, and the
tables with our bots one client has in play are capped (`max_bot_tables_per_client`); when the
server's waiting tables are full a newcomer's table still gets made, in place of the oldest
waiting table (one nobody sits at first) of the client holding the most, whose sockets are told
why, and a waiting table nobody sits at expires after `empty_table_expire_s`; the HTTP requests
and WebSocket frames of a flood behind one address slow the flooding connections only, not a
quiet connection beside them (per connection first, the address a backstop shared fairly).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from http.client import HTTPConnection
from urllib.parse import urlsplit

import websockets
from serve_thread import Client, answer, running_server

from scrofazero.serve.gongzhu import hub as gongzhu_hub

OPEN4 = {"type": "create", "seats": ["open"] * 4}
VS_BOTS = {"type": "create", "seats": ["open", "random", "random", "random"]}


class Kept:
    """A keep-alive HTTP connection from the client address `source` (one connection, as a
    browser keeps one)."""

    def __init__(self, server, source: str):
        url = urlsplit(server.url)
        self.conn = HTTPConnection(url.hostname, url.port, timeout=30, source_address=(source, 0))

    def ask(self, path: str, body=None) -> tuple[int, dict]:
        data = None if body is None else json.dumps(body)
        headers = {} if body is None else {"Content-Type": "application/json"}
        self.conn.request("GET" if body is None else "POST", path, data, headers)
        resp = self.conn.getresponse()
        return resp.status, json.loads(resp.read())

    def close(self) -> None:
        self.conn.close()


def ask_from(server, source: str, path: str, body=None) -> tuple[int, dict]:
    """(status, answer) of one request from `source` on a connection of its own."""
    kept = Kept(server, source)
    try:
        return kept.ask(path, body)
    finally:
        kept.close()


async def socket_from(server, source: str) -> Client:
    return Client(await websockets.connect(server.ws, local_addr=(source, 0)))


async def seat_at(server, source: str, made: dict, seat: int = 0) -> Client:
    client = await socket_from(server, source)
    await client.ask({"type": "join", "table": made["table"], "seat": seat,
                      "token": made["tokens"][str(seat)]}, "welcome")
    return client


async def play_at_once(client: Client) -> None:
    """An open seat that answers every turn at once (and `next`), until cancelled."""
    while True:
        msg = await client.next(timeout=600)
        if msg["type"] == "your_turn":
            await client.send({"type": "play", "card": msg["legal"][0], "ply": msg["ply"]})
        elif msg["type"] == "hand_over":
            await client.send({"type": "next"})


# --- item 3: the bots' threads ------------------------------------------------------------------
THINK_S = 0.1  # each bot decision's thinking, a sleep: the threads are the bottleneck, not a core


def test_one_clients_many_tables_get_one_share_of_the_bots_threads(tmp_path, monkeypatch):
    """Ten tables [open, bot, bot, bot] of 100 hands from one address, its open seats answering
    at once, keep ten decisions waiting on the two bot threads. A person's table from another
    address keeps its pace, one thread its share (a queue in arrival order made each bot move
    there wait ~0.55 s, 5.5 times its thinking)."""
    with running_server(tmp_path, bot_threads=2) as server:
        real = gongzhu_hub.decide
        monkeypatch.setattr(gongzhu_hub, "decide", lambda *args: (time.sleep(THINK_S),
                                                                   real(*args))[1])

        async def case():
            flood = [answer_from(server, "127.0.0.2", {**VS_BOTS, "hands": 100})
                     for _ in range(10)]
            seats = [await seat_at(server, "127.0.0.2", made) for made in flood]
            tasks = [asyncio.ensure_future(play_at_once(s)) for s in seats]
            await asyncio.sleep(0.5)  # every flooding table has a decision waiting
            mine = await seat_at(server, "127.0.0.3", answer_from(server, "127.0.0.3", VS_BOTS))
            before = [len(s.got) for s in seats]
            per_move = []
            turn = await mine.next("your_turn")
            for _ in range(4):
                await mine.send({"type": "play", "card": turn["legal"][0], "ply": turn["ply"]})
                start, seen = time.monotonic(), len(mine.got)
                turn = await mine.next("your_turn", timeout=30)
                bots = sum(1 for m in mine.got[seen:] if m["type"] == "played" and m["seat"])
                per_move.append((time.monotonic() - start) / bots)
            flood_bot_moves = sum(1 for s, n in zip(seats, before) for m in s.got[n:]
                                  if m["type"] == "played" and m["seat"])
            for task in tasks:
                task.cancel()
            return per_move, flood_bot_moves

        per_move, flood_bot_moves = asyncio.run(case())
    assert flood_bot_moves >= 10  # the flood went on meanwhile
    assert sum(per_move) / len(per_move) < 2 * THINK_S, per_move  # quiet: THINK_S


def answer_from(server, source: str, body: dict) -> dict:
    status, got = ask_from(server, source, "/api/tables", body)
    assert status == 200, got
    return got


def test_tables_with_bots_in_play_are_capped_per_client(tmp_path):
    with running_server(tmp_path, max_bot_tables_per_client=1) as server:
        answer_from(server, "127.0.0.2", VS_BOTS)
        status, got = ask_from(server, "127.0.0.2", "/api/tables", VS_BOTS)
        assert status == 429 and "max_bot_tables_per_client=1" in got["message"], got
        answer_from(server, "127.0.0.2", OPEN4)  # a table of people only is not one
        answer_from(server, "127.0.0.3", VS_BOTS)  # nor is another client's


# --- item 6: waiting tables ---------------------------------------------------------------------
def test_a_newcomer_gets_a_table_when_the_waiting_tables_are_full(tmp_path):
    """Two clients fill the server's 6 waiting tables; a newcomer's table takes the place of the
    oldest empty one of a client holding the most (once refused: 429 for everyone until they
    expired), and the newcomer can sit at it. The flooder cannot do the same to the others."""
    with running_server(tmp_path, max_waiting_tables=6, max_waiting_tables_per_client=3) as \
            server:
        made = {source: [answer_from(server, source, OPEN4) for _ in range(3)]
                for source in ("127.0.0.2", "127.0.0.3")}
        flood = {source: [m["table"] for m in tables] for source, tables in made.items()}

        async def case():
            # the first flooder sits at its first table and watches its second
            seated = await seat_at(server, "127.0.0.2", made["127.0.0.2"][0])
            watcher = await socket_from(server, "127.0.0.2")
            await watcher.ask({"type": "watch", "table": flood["127.0.0.2"][1]}, "welcome")
            mine = answer_from(server, "127.0.0.4", OPEN4)
            newcomer = await seat_at(server, "127.0.0.4", mine)
            told = await watcher.next("error")
            refused = ask_from(server, "127.0.0.2", "/api/tables", OPEN4)
            for client in (seated, watcher, newcomer):
                await client.close()
            return mine, told, refused

        mine, told, refused = asyncio.run(case())
        listed = [t["table"] for t in answer(server, "/api/tables")]
    assert mine["table"] in listed and len(listed) == 6
    assert flood["127.0.0.2"][1] not in listed  # the oldest nobody sat at, of one of the most
    assert flood["127.0.0.2"][0] in listed and set(flood["127.0.0.3"]) <= set(listed)
    assert told["code"] == "expired" and "max_waiting_tables=6" in told["message"]
    assert refused[0] == 429 and "max_waiting_tables=6" in refused[1]["message"]


def test_a_waiting_table_nobody_sits_at_expires_soon(tmp_path):
    with running_server(tmp_path, empty_table_expire_s=0.5) as server:
        empty = answer(server, "/api/tables", OPEN4)
        kept = answer(server, "/api/tables", OPEN4)

        async def case():
            seated = await seat_at(server, "127.0.0.1", kept)
            await asyncio.sleep(1.5)
            mid = [t["table"] for t in answer(server, "/api/tables")]
            await seated.close()  # nobody sits there now either
            deadline = time.monotonic() + 5
            while any(t["table"] == kept["table"] for t in answer(server, "/api/tables")):
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
            return mid

        mid = asyncio.run(case())
        status = server.hub.records.game(empty["game_id"])["status"]
    assert mid == [kept["table"]] and status == "expired"


# --- item 7: shared addresses -------------------------------------------------------------------
def test_a_request_flood_on_a_shared_address_slows_only_the_flooding_connections(tmp_path):
    """24 connections from 127.0.0.2 ask as fast as answered, over the address's backstop; a
    quiet keep-alive connection from the same address (a person behind the same NAT, a request
    a second or so) gets every answer at once. Once they shared the address's one budget: it
    waited a second or got 429."""
    settings = {"connection_requests_per_s": 10, "client_requests_per_s": 20}
    with running_server(tmp_path, **settings) as server:
        stop, statuses = threading.Event(), []
        quiet = Kept(server, "127.0.0.2")
        quiet.ask("/api/options")  # a connection the server knows

        def flood():
            kept = Kept(server, "127.0.0.2")
            while not stop.is_set():
                status, _ = kept.ask("/api/options")
                statuses.append(status)
                if status == 429:
                    time.sleep(0.02)  # spare the test's cores, not the server
            kept.close()

        threads = [threading.Thread(target=flood) for _ in range(24)]
        for thread in threads:
            thread.start()
        time.sleep(1.0)
        taken = []
        for _ in range(3):
            start = time.monotonic()
            status, _ = quiet.ask("/api/options")
            taken.append((status, time.monotonic() - start, _))
            time.sleep(1.2)
        stop.set()
        for thread in threads:
            thread.join()
        quiet.close()
    assert 429 in statuses  # the flood was over the address's backstop
    assert all(t[0] == 200 for t in taken), taken
    assert max(t[1] for t in taken) < 0.3, taken


def test_pinging_sockets_on_a_players_address_do_not_slow_its_moves(tmp_path):
    """24 sockets from the player's own address ping as fast as answered, past the address's
    client_frames_per_s; the player's moves, one a second, are read at once (once they waited
    their turn behind every ping: ~1.2 s a move)."""
    with running_server(tmp_path, client_frames_per_s=20) as server:
        async def case():
            made = answer_from(server, "127.0.0.2", VS_BOTS)
            player = await seat_at(server, "127.0.0.2", made)
            pingers = [await socket_from(server, "127.0.0.2") for _ in range(24)]

            async def ping(client):
                while True:
                    await client.ask({"type": "ping"}, "pong")

            tasks = [asyncio.ensure_future(ping(p)) for p in pingers]
            await asyncio.sleep(1.0)  # the pings are queued a second and more deep
            taken = []
            for _ in range(2):
                turn = await player.next("your_turn")
                start = time.monotonic()
                await player.send({"type": "play", "card": turn["legal"][0], "ply": turn["ply"]})
                while (msg := await player.next("played", timeout=10)).get("in_reply_to") != \
                        "play":
                    pass
                taken.append(time.monotonic() - start)
                await asyncio.sleep(1.0)  # a person's pace
            for task in tasks:
                task.cancel()
            return taken, msg

        taken, echo = asyncio.run(case())
    assert echo["seat"] == 0
    assert max(taken) < 0.3, taken
