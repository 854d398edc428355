"""Hostile or careless clients at the table server, each answered by a clear error.

Invariants: JSON nested deeper than the limit is refused as bad_json (the socket stays open, a
POST gets 400) instead of exhausting the parser; a game id beyond the database's integers is
404; a name that is not one printable line is refused; POST /api/tables stops reading a body as
soon as it passes 4 KiB; a POST without "type" and an unknown `status` filter get 400 naming
what is allowed; every refusal of a GET is the protocol's error object (400 bad_message, 404
not_found, 409 in_play); a second `join` on a socket that holds a seat is refused and keeps the
first; a socket follows one table (a second `watch` elsewhere is refused); a socket dropped as a
slow reader ends as a disconnect at /ws and /ws/fish alike.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import time
import urllib.error
import urllib.request
from dataclasses import replace

import pytest
import websockets
from serve_thread import CHECKPOINT, Client, http, running_server

from scrofazero.serve.app import check_play_config
from scrofazero.serve.common import sockets as sockets_module
from scrofazero.serve.common.config import PlayConfig
from scrofazero.serve.common.messages import STATUSES, Join
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.common.sockets import MAX_QUEUED, SocketClient
from scrofazero.serve.gongzhu.hub import BotClient, Hub, HubSettings
from scrofazero.serve.gongzhu.messages import CARD_PATTERN, CLIENT_MESSAGES, Create, Watch
from scrofazero.serve.gongzhu.protocol import parse_client_message
from scrofazero.serve.gongzhu.records import Records
from scrofazero.serve.gongzhu.table import TableSettings

DEEP = '{"type": "create", "seats": ' + "[" * 2000 + "]" * 2000 + "}"


def error(code: str, message: str) -> dict:
    """The protocol's error object, as every refusal over the socket and HTTP is answered."""
    return {"v": 1, "type": "error", "code": code, "message": message}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("hostile")) as running:
        yield running


def test_deep_json_is_refused_on_the_socket_and_over_http(server):
    async def case():
        client = await Client.connect(server.ws)
        reply = await client.ask(DEEP, "error")
        pong = await client.ask({"type": "ping"}, "pong")  # the socket is still open
        await client.close()
        return reply, pong

    reply, pong = asyncio.run(case())
    assert (reply["code"], reply["message"]) == ("bad_json", "JSON nested 2001 deep; the limit "
                                                             "is 16")
    assert pong["type"] == "pong"
    status, body = http(server, "/api/tables", DEEP.encode())
    assert status == 400 and body["code"] == "bad_json"


@pytest.mark.parametrize("game_id", ["9223372036854775808", "99999999999999999999999", "0"])
def test_a_game_id_beyond_the_database_is_not_found(server, game_id):
    status, body = http(server, f"/api/games/{game_id}")
    assert status == 404 and body == error("not_found", f"no game {game_id}")


@pytest.mark.parametrize("brk", ["\n", "\r", "\u2028", "\x1c", "\t"])
def test_a_name_must_be_one_printable_line(server, brk):
    status, made = http(server, "/api/tables",
                        json.dumps({"type": "create", "seats": ["open"] * 4}).encode())
    assert status == 200

    async def case():
        client = await Client.connect(server.ws)
        reply = await client.ask({"type": "join", "table": made["table"], "seat": 0,
                                  "token": made["tokens"]["0"], "name": f"eve{brk}# game 1"},
                                 "error")
        await client.close()
        return reply

    reply = asyncio.run(case())
    assert reply["code"] == "bad_message" and reply["message"].startswith(
        "'name' must be one printable line")
    assert server.hub.tables[made["table"]].seats[0].conn is None  # not joined


def test_a_long_body_is_refused_before_it_ends(server):
    """A chunked body that passes 4 KiB and never ends: the answer comes without its end."""
    host, port = server.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     b"application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b" " * 5000
        sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400")
    assert b'"too_large"' in answer and b"limit is 4096" in answer


def test_a_post_without_type_is_a_clear_400(server):
    status, body = http(server, "/api/tables", json.dumps({"seats": ["open"] * 4}).encode())
    assert status == 400 and body["code"] == "bad_message"
    assert body["message"] == f"a message needs 'type', one of {', '.join(CLIENT_MESSAGES)}"
    assert "join" in CLIENT_MESSAGES and "ping" in CLIENT_MESSAGES


def test_an_unknown_status_filter_names_the_allowed_values(server):
    status, body = http(server, "/api/games?status=bogus")
    assert status == 400 and body == error(
        "bad_message", f"status must be one of {', '.join(STATUSES)}, got 'bogus'")
    status, games = http(server, "/api/games?status=waiting")
    assert status == 200 and isinstance(games, list)


@pytest.mark.parametrize("path, status, code, words", [
    ("/api/games?limit=many", 400, "bad_message", "query parameter 'limit'"),
    ("/api/games/seven", 400, "bad_message", "path parameter 'game_id'"),
    ("/api/matches/999", 404, "not_found", "no match 999"),
    ("/api/fish/games/999", 404, "not_found", "no Fish game 999"),
    ("/api/nothing", 404, "not_found", "Not Found"),
])
def test_every_get_refusal_is_the_protocols_error_object(server, path, status, code, words):
    got, body = http(server, path)
    assert (got, set(body), body["code"]) == (status, {"v", "type", "code", "message"}, code)
    assert body["type"] == "error" and words in body["message"], body


def test_a_record_in_play_is_refused_with_in_play(server):
    status, made = http(server, "/api/tables",
                        json.dumps({"type": "create", "seats": ["open"] * 4}).encode())
    got, body = http(server, f"/api/games/{made['game_id']}")
    assert (status, got) == (200, 409)
    assert body == error("in_play", f"game {made['game_id']} is still in play; its record "
                                    "opens when it ends")


def test_a_second_join_on_one_socket_is_refused(server):
    status, made = http(server, "/api/tables",
                        json.dumps({"type": "create", "seats": ["open"] * 4}).encode())
    tokens = made["tokens"]

    async def case():
        client = await Client.connect(server.ws)
        await client.ask({"type": "join", "table": made["table"], "seat": 0,
                          "token": tokens["0"]}, "welcome")
        reply = await client.ask({"type": "join", "table": made["table"], "seat": 1,
                                  "token": tokens["1"]}, "error")
        table = server.hub.tables[made["table"]]
        held = [s.conn is not None for s in table.seats]
        await client.close()
        return reply, held

    reply, held = asyncio.run(case())
    assert reply["code"] == "already_joined" and "holds seat 0" in reply["message"]
    assert held == [True, False, False, False]  # the first seat is kept


def test_a_socket_follows_one_table_only(server):
    """played, trick, seat and thinking name no table: a socket that watches one table, or
    holds a seat, cannot watch another; watching the same table again is a fresh welcome."""
    made = [http(server, "/api/tables", json.dumps({"type": "create",
                                                    "seats": ["open"] * 4}).encode())[1]
            for _ in range(2)]
    first, second = (m["table"] for m in made)

    async def case():
        watcher, seated = [await Client.connect(server.ws) for _ in range(2)]
        await watcher.ask({"type": "watch", "table": first}, "welcome")
        replies = [await watcher.ask({"type": "watch", "table": second}),
                   await watcher.ask({"type": "watch", "table": first})]
        await seated.ask({"type": "join", "table": first, "seat": 0,
                          "token": made[0]["tokens"]["0"]}, "welcome")
        replies += [await seated.ask({"type": "watch", "table": t}, "error")
                    for t in (second, first)]
        watchers = [len(server.hub.tables[t].observers) for t in (first, second)]
        await watcher.close()
        await seated.close()
        return replies, watchers

    replies, watchers = asyncio.run(case())
    assert [r["type"] for r in replies] == ["error", "welcome", "error", "error"]
    assert replies[0]["code"] == "already_watching" and first in replies[0]["message"]
    assert replies[1]["table"] == first and replies[1]["seat"] is None
    assert [r["code"] for r in replies[2:]] == ["already_joined", "already_joined"]
    assert "holds seat 0" in replies[2]["message"]
    assert watchers == [1, 0]  # the watcher at the first table only, the seat at none


class StuckSocket:
    """A WebSocket whose peer reads its first `reads` messages, then stops reading: every later
    send, and the close, waits forever (as a full TCP window makes them)."""

    def __init__(self, reads: int):
        self.reads = reads
        self.got: list[dict] = []

    async def send_json(self, data: dict) -> None:
        if len(self.got) >= self.reads:
            await asyncio.Event().wait()
        self.got.append(data)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await asyncio.Event().wait()


def test_a_watcher_that_stops_reading_stalls_no_table(tmp_path):
    """Three bot tables, each watched by a socket that reads its welcome and then nothing, end
    as soon as an unwatched control table does (a send to it no longer waits on its socket)."""
    async def case():
        records = Records(str(tmp_path / "records.sqlite"))
        hub = Hub(records, HubSettings(checkpoint=CHECKPOINT, seed=0, table=TableSettings(
            move_deadline_s=0.2, reconnect_grace_s=0.2)))
        made = [await hub.create_table(Create(seats=["open", "random", "random", "random"]))
                for _ in range(4)]
        watchers = [SocketClient(StuckSocket(reads=1)) for _ in made[1:]]
        for watcher, (table, _) in zip(watchers, made[1:]):
            await hub.receive(watcher, Watch(table=table.id).model_dump_json())
        taken = []
        for seed, (table, tokens) in enumerate(made):  # made[0] is the control: unwatched
            start = time.monotonic()
            await hub.receive(BotClient(hub, hub.make_bot("random"), seed, hub.bot_threads),
                              Join(table=table.id, seat=0, token=tokens[0]).model_dump_json())
            await asyncio.wait_for(table.done.wait(), 60)
            taken.append(time.monotonic() - start)
        got = [m for watcher in watchers for m in watcher.ws.got]
        for watcher in watchers:
            watcher.stop()
        await hub.shutdown()
        records.close()
        return taken, got

    taken, got = asyncio.run(case())
    assert [m["type"] for m in got] == ["welcome"] * 3  # each read its welcome, then nothing
    assert all(t < taken[0] + 3.0 for t in taken[1:]), taken


def test_a_client_that_stops_reading_is_closed(monkeypatch):
    """send never waits: a client with MAX_QUEUED unread messages, or one whose send takes over
    SEND_TIMEOUT_S, is closed, and every later send raises ConnectionError (a disconnect)."""
    async def case():
        flooded = SocketClient(StuckSocket(reads=0))
        start = time.monotonic()
        with pytest.raises(ConnectionError):
            for _ in range(MAX_QUEUED + 2):  # the writer holds one; MAX_QUEUED wait; one more
                await flooded.send({"type": "pong"})
        flooded_s = time.monotonic() - start
        monkeypatch.setattr(sockets_module, "SEND_TIMEOUT_S", 0.2)
        slow = SocketClient(StuckSocket(reads=0))
        await slow.send({"type": "pong"})  # returns at once
        open_after_send = not slow.closed
        await asyncio.sleep(0.6)
        with pytest.raises(ConnectionError):
            await slow.send({"type": "pong"})
        flooded.stop()
        slow.stop()
        return flooded_s, open_after_send, flooded.closed, slow.closed

    flooded_s, open_after_send, flooded_closed, slow_closed = asyncio.run(case())
    assert flooded_s < 1.0 and flooded_closed
    assert open_after_send and slow_closed


@pytest.mark.parametrize("path", ["/ws", "/ws/fish"])
def test_a_socket_dropped_as_a_slow_reader_ends_cleanly(tmp_path, monkeypatch, path):
    """A client dropped for unread messages makes its next send raise ConnectionError; both
    sockets' loops take it as a disconnect (no error escapes to the server's log), and the
    server goes on."""
    monkeypatch.setattr(Hub, "warm", lambda self: {})
    errors = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = errors.append
    logger = logging.getLogger("uvicorn.error")
    with running_server(tmp_path) as server:
        logger.addHandler(handler)
        try:
            async def case():
                monkeypatch.setattr(sockets_module, "MAX_QUEUED", 0)  # the first answer drops it
                dropped = await websockets.connect(server.ws.replace("/ws", path))
                await dropped.send(json.dumps({"type": "ping"}))
                with pytest.raises(websockets.ConnectionClosed):
                    await asyncio.wait_for(dropped.recv(), 10)
                monkeypatch.setattr(sockets_module, "MAX_QUEUED", 256)
                client = await Client.connect(server.ws.replace("/ws", path))
                pong = await client.ask({"type": "ping"}, "pong")
                await client.close()
                return pong

            pong = asyncio.run(case())
            time.sleep(0.2)  # a failed endpoint is logged as it ends
        finally:
            logger.removeHandler(handler)
    assert pong["type"] == "pong"
    assert [r.getMessage() for r in errors] == []


def test_half_sent_requests_are_timed_out(tmp_path):
    """50 connections sending half a request line, and one a body it never finishes: a normal
    request is served meanwhile, and request_timeout_s later all of them are closed."""
    with running_server(tmp_path, request_timeout_s=1.0) as server:
        host, port = server.url.removeprefix("http://").split(":")
        hanging = []
        for _ in range(50):
            sock = socket.create_connection((host, int(port)), timeout=10)
            sock.sendall(b"GET /api/opt")
            hanging.append(sock)
        sock = socket.create_connection((host, int(port)), timeout=10)
        sock.sendall(b"POST /api/tables HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 100\r\n\r\n{\"type\"")
        hanging.append(sock)
        status, options = http(server, "/api/options")
        start = time.monotonic()
        answers = [s.recv(1024) for s in hanging]  # b"": closed by the server
        waited = time.monotonic() - start
        for s in hanging:
            s.close()
    assert status == 200 and "protocol" in options
    assert answers == [b""] * 51 and waited < 8.0, waited


FOREIGN = "http://evil.example"


def test_a_host_header_not_allowed_is_refused(server):
    """DNS rebinding: a page of evil.example resolved to this machine sends Host: evil.example."""
    port = server.url.rsplit(":", 1)[1]
    request = urllib.request.Request(server.url + "/api/options",
                                     headers={"Host": f"evil.example:{port}"})
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request, timeout=30)
    assert caught.value.code == 400 and caught.value.read() == b"Invalid host header"
    assert http(server, "/api/options", Host=f"localhost:{port}")[0] == 200


def test_a_foreign_page_can_neither_post_nor_open_a_socket(server):
    create = json.dumps({"type": "create", "seats": ["open"] * 4}).encode()
    before = len(server.hub.tables)
    status, body = http(server, "/api/tables", create, Origin=FOREIGN)
    assert status == 403 and "evil.example" in body["detail"]
    for kind in ("text/plain", "application/x-www-form-urlencoded"):  # no CORS preflight
        status, body = http(server, "/api/tables", create, Content_Type=kind)
        assert status == 415 and kind in body["detail"]
    assert len(server.hub.tables) == before  # nothing was created
    status, made = http(server, "/api/tables", create, Origin=server.url)  # its own page
    assert status == 200 and made["table"] in server.hub.tables

    async def sockets():
        with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
            await websockets.connect(server.ws, origin=FOREIGN)
        own = Client(await websockets.connect(server.ws, origin=server.url))
        pong = await own.ask({"type": "ping"}, "pong")
        await own.close()
        return refused.value.response.status_code, pong

    code, pong = asyncio.run(sockets())
    assert code == 403 and pong["type"] == "pong"


def test_allowed_hosts_and_origins_extend_the_defaults(tmp_path):
    with running_server(tmp_path, allowed_hosts=["games.example"],
                        allowed_origins=["https://games.example"]) as server:
        port = server.url.rsplit(":", 1)[1]
        create = json.dumps({"type": "create", "seats": ["open"] * 4}).encode()
        named = http(server, "/api/options", Host=f"games.example:{port}")[0]
        proxied = http(server, "/api/tables", create, Origin="https://games.example")[0]
        direct = http(server, "/api/tables", create, Origin=f"http://games.example:{port}")[0]
        other = http(server, "/api/tables", create, Origin="https://other.example")[0]
    assert (named, proxied, direct, other) == (200, 200, 200, 403)


@pytest.mark.parametrize("key, value", [("allowed_hosts", "games.example:8000"),
                                        ("allowed_hosts", "evil*.example"),
                                        ("allowed_origins", "games.example"),
                                        ("allowed_origins", "http://games.example/path")])
def test_a_malformed_allow_list_entry_is_named(key, value):
    with pytest.raises(ValueError, match=f"^{key} entries .*got {re.escape(repr(value))}$"):
        check_play_config(replace(PlayConfig(), **{key: [value]}))


@pytest.mark.parametrize("card", ["\u017fq", "sq", "Sq", "\uff33Q", "SQ\n", "H1\u0660",
                                  "S\u0661\u0660", "D\u212a"])
def test_a_card_code_is_ascii_upper_case_only(card):
    """Look-alikes of SQ, H10, DK (the long s, full-width S, Arabic-Indic digits, the Kelvin
    sign) and case variants are refused, not folded to a card."""
    with pytest.raises(ProtocolError, match="'card' must be a card code"):
        parse_client_message(json.dumps({"type": "play", "card": card}))
    assert re.fullmatch(CARD_PATTERN, card) is None
