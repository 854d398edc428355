"""Hostile or careless clients at the table server, each answered by a clear error.

Invariants: JSON nested deeper than the limit is refused as bad_json (the socket stays open, a
POST gets 400) instead of exhausting the parser; a game id beyond the database's integers is
404; a name that is not one printable line is refused; POST /api/tables stops reading a body as
soon as it passes 4 KiB; a POST without "type" and an unknown `status` filter get 400 naming
what is allowed; a second `join` on a socket that holds a seat is refused and keeps the first.
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.error
import urllib.request

import pytest
from serve_thread import Client, running_server

DEEP = '{"type": "create", "seats": ' + "[" * 2000 + "]" * 2000 + "}"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("hostile")) as running:
        yield running


def http(server, path: str, body: bytes | None = None) -> tuple[int, dict]:
    req = urllib.request.Request(server.url + path, data=body,
                                 method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


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
    assert status == 404 and body["detail"] == f"no game {game_id}"


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
        sock.sendall(b"POST /api/tables HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                     b"\r\nTransfer-Encoding: chunked\r\n\r\n")
        chunk = b" " * 5000
        sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 400")
    assert b'"too_large"' in answer and b"limit is 4096" in answer


def test_a_post_without_type_is_a_clear_400(server):
    status, body = http(server, "/api/tables", json.dumps({"seats": ["open"] * 4}).encode())
    assert status == 400 and body["code"] == "bad_message"
    assert body["message"] == "a message needs 'type', one of join, play, create, watch, ping"


def test_an_unknown_status_filter_names_the_allowed_values(server):
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(server.url + "/api/games?status=bogus", timeout=30)
    assert caught.value.code == 400
    assert json.loads(caught.value.read())["detail"] == (
        "status must be one of waiting, playing, finished, abandoned, got 'bogus'")
    status, games = http(server, "/api/games?status=waiting")
    assert status == 200 and isinstance(games, list)


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
