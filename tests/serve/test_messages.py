"""The protocols' message models (scrofazero/serve/gongzhu/messages.py, fish/messages.py) against
their documents and the wire.

Invariants: docs/protocol.schema.json and docs/protocol_fish.schema.json are what the models
generate; docs/protocol.md's message tables name exactly the models' messages and fields, and
its error table exactly the error codes; every client message has one handler; a refused
client message gets one line naming the field and what it must be, with no coercion; every
message a real game sends validates against the committed JSON Schema.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from protocol_doc import doc_table, model_fields, protocol_text
from serve_thread import Client, running_server
from toy_player import ToyPlayer, ToySettings

from scrofazero.agents import PLAYERS, PlayerSpec
from scrofazero.serve.common.messages import ERROR_CODES, PROTOCOL_VERSION
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.fish.messages import (
    FISH_CLIENT_MESSAGES,
    FISH_SERVER_MESSAGES,
    fish_schema_text,
)
from scrofazero.serve.gongzhu.hub import Hub
from scrofazero.serve.gongzhu.messages import CLIENT_MESSAGES, SERVER_MESSAGES, schema_text
from scrofazero.serve.gongzhu.protocol import parse_client_message

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_committed_schema_is_what_the_models_generate():
    committed = (DOCS / "protocol.schema.json").read_text()
    assert committed == schema_text(), ("docs/protocol.schema.json is stale: run python -m "
                                        "scrofazero.serve.messages docs/protocol.schema.json")


def test_committed_fish_schema_is_what_the_models_generate():
    committed = (DOCS / "protocol_fish.schema.json").read_text()
    assert committed == fish_schema_text(), (
        "docs/protocol_fish.schema.json is stale: run python -m scrofazero.serve.fish_messages "
        "docs/protocol_fish.schema.json")
    kinds = {d["properties"]["type"]["const"] for d in json.loads(committed)["$defs"].values()
             if "type" in d.get("properties", {})}
    assert kinds == set(FISH_CLIENT_MESSAGES) | set(FISH_SERVER_MESSAGES)


@pytest.mark.parametrize("header, models", [("| you send |", CLIENT_MESSAGES),
                                            ("| the server sends |", SERVER_MESSAGES)])
def test_the_documents_tables_are_the_schemas(header, models):
    doc = doc_table(protocol_text(), header)
    assert set(doc) == set(models)
    for kind, model in models.items():
        assert doc[kind] == model_fields(model), kind


def test_the_documents_error_codes_are_the_servers():
    assert list(doc_table(protocol_text(), "| code |")) == list(ERROR_CODES)


def test_every_client_message_has_one_handler():
    assert set(Hub.handlers) == set(CLIENT_MESSAGES.values())


@pytest.mark.parametrize("msg, code, line", [
    ({"type": "join", "table": "t", "token": "x"}, "bad_message",
     "'join' needs 'seat' (a seat 0..3)"),
    ({"type": "join", "table": "t", "seat": "0", "token": "x"}, "bad_message",
     "'seat' must be a seat 0..3, got '0'"),
    ({"type": "join", "table": "t", "seat": True, "token": "x"}, "bad_message",
     "'seat' must be a seat 0..3, got True"),
    ({"type": "join", "table": "t", "seat": 0, "token": "x", "name": "n" * 41}, "bad_message",
     "'name' must be a display name: one printable line of up to 40 characters, got 'nnnn"),
    *[({"type": "join", "table": "t", "seat": 0, "token": "x", "name": f"a{brk}b"}, "bad_message",
       "'name' must be one printable line (no line breaks or control characters)")
      for brk in ("\n", "\r", "\u2028", "\x1c")],
    ({"seats": ["open"] * 4}, "bad_message",
     "a message needs 'type', one of join, play, create, watch, ping, next"),
    ({"type": "play", "card": "ZZ"}, "bad_message",
     "'card' must be a card code such as 'SQ' or 'H10', got 'ZZ'"),
    ({"type": "play", "card": "S2", "ply": 1.5}, "bad_message",
     "'ply' must be the ply number of your_turn, got 1.5"),
    ({"type": "create", "seats": ["open"] * 4, "leader": 4}, "bad_message",
     "'leader' must be a seat 0..3, got 4"),
    ({"type": "create", "seats": ["open"] * 4, "thinking": "yes"}, "bad_message",
     "'thinking' must be true or false, got 'yes'"),
    ({"type": "create", "seats": ["open", "chess", "open", "open"]}, "bad_message",
     "'seats' must be 4 of open, scrofazero, raw, greed, if, random, got"),
    ({"type": "dance"}, "bad_message",
     "unknown message type 'dance'; expected join, play, create, watch, ping, next"),
    ({"v": 2, "type": "ping"}, "unsupported_version", "protocol version 2; this server speaks 1"),
    ({"type": "create", "seats": ["open"] * 4, "hands": 0}, "bad_message",
     "'hands' must be the most hands of the match, 1..100, got 0"),
    ({"type": "create", "seats": ["open"] * 4, "target": 100001}, "bad_message",
     "'target' must be a lead in points 1..100000 that ends the match, or null, got 100001"),
    ({"type": "create", "seats": ["open"] * 4, "public": 1}, "bad_message",
     "'public' must be true or false"),
])
def test_a_refused_message_gets_one_line_naming_the_field(msg, code, line):
    with pytest.raises(ProtocolError) as caught:
        parse_client_message(json.dumps(msg))
    assert caught.value.code == code and caught.value.message.startswith(line)
    assert "\n" not in caught.value.message


def test_deep_nesting_is_refused_before_parsing():
    deep = '{"type": "ping", "x": ' + "[" * 2000 + "]" * 2000 + "}"
    with pytest.raises(ProtocolError) as caught:
        parse_client_message(deep)
    assert (caught.value.code, caught.value.message) == (
        "bad_json", "JSON nested 2001 deep; the limit is 16")
    # brackets inside strings are text, not nesting
    ping = parse_client_message('{"type": "ping", "x": "' + "[" * 100 + '"}')
    assert ping.type == "ping"


def test_a_checked_message_is_its_model():
    play = parse_client_message(json.dumps({"v": PROTOCOL_VERSION, "type": "play", "card": "H10",
                                            "ply": 3, "later": "ignored"}))
    assert type(play) is CLIENT_MESSAGES["play"] and play.card_index == 13 + 8 and play.ply == 3
    create = parse_client_message(b'{"type": "create", "seats": ["open", "greed", "if", "raw"]}')
    assert create.leader == 0 and create.deal is None and create.thinking is None


def test_every_message_on_the_wire_fits_the_schema(tmp_path, monkeypatch):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((DOCS / "protocol.schema.json").read_text())
    server_side = jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/AnyServerMessage", "$defs": schema["$defs"]})
    client_side = jsonschema.Draft202012Validator(
        {"$ref": "#/$defs/AnyClientMessage", "$defs": schema["$defs"]})
    # a fast bot that explains its moves, so that the table sends thinking too
    monkeypatch.setitem(PLAYERS, "toy", PlayerSpec("toy", ToyPlayer, ToySettings, "Toy", "toy"))
    with running_server(tmp_path, move_deadline_s=5.0) as server:
        async def case():
            client = await Client.connect(server.ws)
            create = {"type": "create", "deal": 2, "live_thinking": True, "hands": 2,
                      "seats": ["open", "toy", "random", "random"]}
            made = await client.ask(create, "created")
            join = {"type": "join", "table": made["table"], "seat": 0,
                    "token": made["tokens"]["0"], "name": "me"}
            client_side.validate(join)
            await client.send(join)
            await client.ask({"type": "play", "card": "S2", "ply": 99}, "error")
            await client.ask({"type": "ping"}, "pong")
            while True:
                msg = await client.next(timeout=60)
                if msg["type"] == "your_turn":
                    play = {"type": "play", "card": msg["legal"][0], "ply": msg["ply"]}
                    client_side.validate(play)
                    await client.send(play)
                elif msg["type"] == "hand_over":  # two hands: every match message is sent
                    client_side.validate({"type": "next"})
                    await client.send({"type": "next"})
                elif msg["type"] == "match_over":
                    await client.close()
                    return client.got

        got = asyncio.run(case())
    for msg in got:
        server_side.validate(msg)
    kinds = {m["type"] for m in got}
    assert kinds == set(SERVER_MESSAGES)  # every server message was sent and checked
    with pytest.raises(jsonschema.ValidationError):  # the schema does refuse a wrong message
        server_side.validate({**got[-1], "scores": "high"})
