"""The envelope every message of both table protocols has, and the messages and checks both use.

Client messages are validated into their models (unknown fields ignored, no type coercion: a
seat "0" is refused); server messages are built from theirs, so nothing goes on the wire that
the schema does not describe. `message_schema` writes a protocol's JSON Schema from its models
(gongzhu/messages.py and fish/messages.py each list their own), and `write_schema` is the
command that writes it to a file.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    StringConstraints,
    field_validator,
    model_serializer,
)
from pydantic.json_schema import JsonSchemaMode, models_json_schema

# the one place the version is set (mypy checks that the two agree); the page reads it from
# /api/options
ProtocolVersion = Literal[1]
PROTOCOL_VERSION: ProtocolVersion = 1
MAX_NAME = 40  # characters of a display name
MAX_ID_CHARS = 64  # a client message's `id`: a string of at most this many characters,
MAX_ID_INT = 2**63 - 1  # or an integer of at most this size (either sign)
OPEN = "open"  # the seat kind of a person or an outside bot; every other kind is a player's name
# the error codes of /ws and of every HTTP refusal (the Fish protocol has its own list)
ErrorCode = Literal["bad_json", "too_large", "bad_message", "unsupported_version",
                    "unknown_table", "unknown_seat", "bad_token", "not_joined", "not_your_turn",
                    "illegal_card", "not_started", "game_over", "replaced", "already_joined",
                    "not_between", "storage", "expired", "not_public", "seat_taken",
                    "already_watching", "not_found", "in_play", "limit"]
ERROR_CODES: tuple[str, ...] = get_args(ErrorCode)
Fallback = Literal["deadline", "away", "bot_error"]  # why the server played a move for a seat
FALLBACKS: tuple[str, ...] = get_args(Fallback)
# a table's (and its match's) status; a game's is one of them too, never "between"
Status = Literal["waiting", "playing", "between", "finished", "abandoned", "expired"]
STATUSES: tuple[str, ...] = get_args(Status)


def _type_required(schema: dict) -> None:
    if "type" not in schema.setdefault("required", []):
        schema["required"].insert(0, "type")


class Message(BaseModel):
    """Fields every message has. Subclasses fix `type` with a one-value Literal."""

    model_config = ConfigDict(json_schema_extra=_type_required)
    v: ProtocolVersion = Field(PROTOCOL_VERSION, description="the protocol version")
    type: str


RequestId = (Annotated[StrictStr, StringConstraints(max_length=MAX_ID_CHARS)]
             | Annotated[StrictInt, Field(ge=-MAX_ID_INT, le=MAX_ID_INT)])
ANSWER_FIELDS = ("in_reply_to", "id")  # what only the answer to a client message carries


class ClientMessage(Message):
    # unknown fields are ignored: later versions can add fields
    model_config = ConfigDict(extra="ignore", json_schema_extra=_type_required)
    id: RequestId | None = Field(
        None, description=f"your own tag of the message, an integer or a string of at most "
                          f"{MAX_ID_CHARS} characters: its answer carries it back")


def only_when_set(description: str) -> Callable[[dict], None]:
    """The JSON Schema edit of an optional field that is left out when unset: its value's
    schema, without null and without a default."""
    def edit(field: dict) -> None:
        kinds = [k for k in field.pop("anyOf") if k != {"type": "null"}]
        field.pop("default", None)
        field.update(kinds[0] if len(kinds) == 1 else {"anyOf": kinds}, description=description)
    return edit


class ServerMessage(Message):
    """A message the server sends. `in_reply_to` and `id` are only on the one message that
    answers a client message (common/replies.py stamps them as it is sent); elsewhere they are
    left out, never null."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_type_required)
    in_reply_to: str | None = Field(None, json_schema_extra=only_when_set(
        "on the answer to a client message only: that message's type ('invalid': a frame that "
        "is no message of the protocol)"))
    id: RequestId | None = Field(None, json_schema_extra=only_when_set(
        "on the answer to a client message that carried an id only: that id"))

    @model_serializer(mode="wrap")
    def _answer_fields_when_set(self, handler):
        data = handler(self)
        for key in ANSWER_FIELDS:
            if data.get(key) is None:
                data.pop(key, None)
        return data


# --- client -> server ------------------------------------------------------------------------
def echo(value, most: int = 60) -> str:
    """A refused value as an error message repeats it: its repr, cut to about `most`
    characters (a script's 10,000-character name is not sent back in full)."""
    text = repr(value)
    return text if len(text) <= most else f"{text[:most]}… ({len(str(value))} characters)"


def one_printable_line(name: str | None) -> str | None:
    """No line breaks or control characters: a name goes into one line of the export; and not
    blank (spaces only), which would leave a seat without a name to call it by."""
    if name is not None and not name.isprintable():
        raise ValueError(f"'name' must be one printable line (no line breaks or control "
                         f"characters), got {echo(name)}"[:300])
    if name is not None and not name.strip():
        raise ValueError(f"'name' must not be blank, got {echo(name)}"[:300])
    return name


def name_field():
    return Field(None, max_length=MAX_NAME,
                 description=f"a display name: one printable line of up to {MAX_NAME} characters")


class JoinSeat(ClientMessage):
    """Take a seat (each protocol's join message sets its `type`)."""

    table: StrictStr = Field(description="a table id")
    seat: StrictInt = Field(description="a seat 0..3")
    token: StrictStr = Field(description="the seat's token")
    name: StrictStr | None = name_field()

    _name = field_validator("name")(one_printable_line)


class Join(JoinSeat):
    type: Literal["join"] = "join"


class Ping(ClientMessage):
    type: Literal["ping"] = "ping"


class WatchTable(ClientMessage):
    """Follow a table without a seat (each protocol's watch message sets its `type`)."""

    table: StrictStr = Field(description="a table id")


def checked_seats(seats: list[str], kinds: tuple[str, ...], sizes: tuple[int, ...],
                  sizes_said: str) -> list[str]:
    """A create message's `seats` as they are when there are `sizes` of them, each one of
    `kinds`; else ValueError in the one line the client is sent (`sizes_said`: "4", "6 or 8")."""
    if len(seats) not in sizes or not all(s in kinds for s in seats):
        raise ValueError(f"'seats' must be {sizes_said} of {', '.join(kinds)}, "
                         f"got {seats!r}"[:300])
    return seats


# --- server -> client ------------------------------------------------------------------------
class PlayerInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seat: int
    kind: str  # open or a bot's name
    name: str
    connected: bool


class Seat(ServerMessage):
    type: Literal["seat"] = "seat"
    seat: int
    name: str
    connected: bool


class Error(ServerMessage):
    type: Literal["error"] = "error"
    code: ErrorCode
    message: str


class Pong(ServerMessage):
    type: Literal["pong"] = "pong"


class TableCreated(ServerMessage):
    """The answer to a create message (each protocol's sets its `type`)."""

    table: str
    game_id: int
    tokens: dict[str, str] = Field(description="seat -> token, one per open seat")

    @classmethod
    def of(cls, table, tokens: dict[int, str]):
        """The answer for `table` (a table of either game) whose open seats have `tokens`."""
        # (no `type` here: each subclass sets its own)
        fields: dict[str, Any] = dict(table=table.id, game_id=table.game_id,
                                      tokens={str(k): v for k, v in tokens.items()})
        return cls(**fields)


def by_type(*models: type[Message]) -> dict[str, type[Message]]:
    """A protocol's messages by their `type`."""
    return {m.model_fields["type"].default: m for m in models}


def message_schema(client: Mapping[str, type[BaseModel]], server: Mapping[str, type[BaseModel]],
                   title: str, description: str) -> dict:
    """The JSON Schema of a protocol's messages (type -> model, as CLIENT_MESSAGES): a message
    is one of AnyClientMessage (what a client sends) or AnyServerMessage (what the server
    sends), each one of its messages."""
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = \
        [(m, "validation") for m in client.values()] + \
        [(m, "serialization") for m in server.values()]
    refs, defs = models_json_schema(models, ref_template="#/$defs/{model}")
    defs = defs["$defs"]
    defs["AnyClientMessage"] = {"oneOf": [refs[(m, "validation")] for m in client.values()]}
    defs["AnyServerMessage"] = {"oneOf": [refs[(m, "serialization")] for m in server.values()]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": title, "description": description,
            "oneOf": [{"$ref": "#/$defs/AnyClientMessage"}, {"$ref": "#/$defs/AnyServerMessage"}],
            "$defs": defs}


def json_text(schema: dict) -> str:
    """A schema as its committed file holds it."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def write_schema(argv: list[str], schema_text: Callable[[], str], command: str) -> None:
    """`python -m COMMAND PATH.json` (argv: its sys.argv): write `schema_text()` to PATH; an
    option such as --help is not taken for a path (it prints the usage)."""
    if len(argv) != 2 or argv[1].startswith("-"):
        sys.exit(f"usage: python -m {command} PATH.json")
    with open(argv[1], "w", encoding="utf-8") as out:
        out.write(schema_text())
