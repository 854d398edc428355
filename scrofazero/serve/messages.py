"""Every message of the table protocol (docs/protocol.md) as a pydantic model, and its JSON Schema.

Client messages are validated into their models (unknown fields ignored, no type coercion: a
seat "0" is refused); server messages are built from theirs, so nothing goes on the wire that
the schema does not describe. docs/protocol.schema.json is `protocol_schema()` written out
(`python -m scrofazero.serve.messages docs/protocol.schema.json`); a test keeps it current, and
another checks docs/protocol.md's message tables against these models.
"""

from __future__ import annotations

import json
import sys
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, field_validator
from pydantic.json_schema import models_json_schema

from scrofazero.agents import PLAYERS
from scrofazero.games.gongzhu.cards import card_index

PROTOCOL_VERSION = 1  # the one place the version is set; the page reads it from /api/options
MAX_NAME = 40  # characters of a display name
CARD_PATTERN = r"^[SHDC]([2-9]|10|[JQKA])$"
OPEN = "open"  # the seat kind of a person or an outside bot; every other kind is a player's name
ERROR_CODES = ("bad_json", "too_large", "bad_message", "unsupported_version", "unknown_table",
               "unknown_seat", "bad_token", "not_joined", "not_your_turn", "illegal_card",
               "not_started", "game_over", "replaced", "already_joined")
FALLBACKS = ("deadline", "away", "bot_error")  # why the server played a move for a seat
STATUSES = ("waiting", "playing", "finished", "abandoned")


def seat_kinds() -> tuple[str, ...]:
    """What a seat can hold: open, or any registered player (agents/registry.py)."""
    return (OPEN, *PLAYERS)


def _type_required(schema: dict) -> None:
    if "type" not in schema.setdefault("required", []):
        schema["required"].insert(0, "type")


class Message(BaseModel):
    """Fields every message has. Subclasses fix `type` with a one-value Literal."""

    model_config = ConfigDict(json_schema_extra=_type_required)
    v: Literal[PROTOCOL_VERSION] = Field(PROTOCOL_VERSION, description="the protocol version")
    type: str


class ClientMessage(Message):
    # unknown fields are ignored: later versions can add fields
    model_config = ConfigDict(extra="ignore", json_schema_extra=_type_required)


class ServerMessage(Message):
    model_config = ConfigDict(extra="forbid", json_schema_extra=_type_required)


# --- client -> server ------------------------------------------------------------------------
class Join(ClientMessage):
    type: Literal["join"] = "join"
    table: StrictStr = Field(description="a table id")
    seat: StrictInt = Field(description="a seat 0..3")
    token: StrictStr = Field(description="the seat's token")
    name: Optional[StrictStr] = Field(
        None, max_length=MAX_NAME,
        description=f"a display name: one printable line of up to {MAX_NAME} characters")

    @field_validator("name")
    @classmethod
    def _one_printable_line(cls, name: str | None) -> str | None:
        """No line breaks or control characters: a name goes into one line of the export."""
        if name is not None and not name.isprintable():
            raise ValueError(f"'name' must be one printable line (no line breaks or control "
                             f"characters), got {name!r}"[:300])
        return name


class Play(ClientMessage):
    type: Literal["play"] = "play"
    card: StrictStr = Field(pattern=CARD_PATTERN, description="a card code such as 'SQ' or 'H10'")
    ply: Optional[StrictInt] = Field(None, description="the ply number of your_turn")

    @property
    def card_index(self) -> int:
        return card_index(self.card)


class Create(ClientMessage):
    type: Literal["create"] = "create"
    seats: list[StrictStr] = Field(
        description="4 seat kinds: open or a bot (GET /api/options lists them)",
        json_schema_extra=lambda schema: schema.update(minItems=4, maxItems=4, items={
            "type": "string", "enum": list(seat_kinds())}))
    deal: Optional[StrictInt] = Field(None, description="a standard deal number or null")
    leader: StrictInt = Field(0, ge=0, le=3, description="a seat 0..3")
    thinking: Optional[StrictBool] = Field(None, description="true or false")
    live_thinking: Optional[StrictBool] = Field(
        None, description="true or false (true: thinking is sent live, to everyone at the table)")

    @field_validator("seats")
    @classmethod
    def _kinds(cls, seats: list[str]) -> list[str]:
        kinds = seat_kinds()
        if len(seats) != 4 or not all(s in kinds for s in seats):
            raise ValueError(f"'seats' must be 4 of {', '.join(kinds)}, got {seats!r}"[:300])
        return seats


class Watch(ClientMessage):
    type: Literal["watch"] = "watch"
    table: StrictStr = Field(description="a table id")


class Ping(ClientMessage):
    type: Literal["ping"] = "ping"


# --- server -> client ------------------------------------------------------------------------
class PlayerInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seat: int
    kind: str  # open or a bot's name
    name: str
    connected: bool


class PublicState(BaseModel):
    """What every seat sees of a hand: the trick with its seats, captured scoring cards, scores."""

    model_config = ConfigDict(extra="forbid")
    leader: int = Field(description="the seat leading the current trick")
    trick: list[tuple[int, str]] = Field(description="the current trick as [seat, card]")
    captured: list[list[str]] = Field(description="per seat, the scoring cards it has taken")
    scores: list[int] = Field(description="per seat pile scores (mid-game rule)")
    team: list[int] = Field(description="seats 0+2, seats 1+3")


class TableInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    table: str
    game_id: int
    status: Literal[STATUSES]
    first_leader: int
    players: list[PlayerInfo]


class Created(ServerMessage):
    type: Literal["created"] = "created"
    table: str
    game_id: int
    tokens: dict[str, str] = Field(description="seat -> token, one per open seat")


class Welcome(ServerMessage, TableInfo, PublicState):
    type: Literal["welcome"] = "welcome"
    seat: Optional[int] = Field(description="your seat; null for a watcher")
    hand: list[str] = Field(description="your cards now (none for a watcher)")
    history: list[tuple[int, str]] = Field(description="every [seat, card] played so far")
    ply: int = Field(description="cards played so far")
    move_deadline_s: float
    thinking: bool
    live_thinking: bool = Field(description="thinking is sent live, not at game_over")
    returns: Optional[list[int]] = Field(description="per seat at the end; null before")


class Seat(ServerMessage):
    type: Literal["seat"] = "seat"
    seat: int
    name: str
    connected: bool


class Start(ServerMessage, TableInfo):
    type: Literal["start"] = "start"


class YourTurn(ServerMessage):
    type: Literal["your_turn"] = "your_turn"
    table: str
    ply: int = Field(description="1-52, the card about to be played")
    legal: list[str]
    deadline: float = Field(description="Unix time in seconds")
    timeout_s: float


class Played(ServerMessage):
    type: Literal["played"] = "played"
    seat: int
    card: str
    ply: int
    fallback: Optional[Literal[FALLBACKS]]


class CardValue(BaseModel):
    model_config = ConfigDict(extra="forbid")
    card: str
    value: Optional[float] = Field(description="points for the mover's team; null: not searched")


class CardBelief(BaseModel):
    model_config = ConfigDict(extra="forbid")
    card: str
    p: list[float] = Field(description="the probability per seat that it holds the card")


class Thought(BaseModel):
    """What one of our bots weighed for a move (kept in the records with the move)."""

    model_config = ConfigDict(extra="forbid")
    forced: bool
    values: list[CardValue]
    belief: list[CardBelief]
    deals: int
    ess: float


class SeatThought(Thought):
    """A Thought with the move it was for."""

    seat: int
    ply: int


class Thinking(ServerMessage, SeatThought):
    type: Literal["thinking"] = "thinking"


class Trick(ServerMessage):
    type: Literal["trick"] = "trick"
    winner: int
    cards: list[str]
    captured: list[list[str]]
    scores: list[int]
    team: list[int]


class GameOver(ServerMessage):
    type: Literal["game_over"] = "game_over"
    table: str
    game_id: int
    scores: list[int] = Field(description="final pile scores")
    team: list[int]
    returns: list[int] = Field(description="per seat: own team minus other team")
    deal_number: Optional[int] = Field(description="the standard deal played; null: a random "
                                                   "deal (never told before the end)")
    thinking: list[SeatThought] = Field(description="the bots' thinking of the hand, in play "
                                                    "order, when it was held back to the end")


class Error(ServerMessage):
    type: Literal["error"] = "error"
    code: Literal[ERROR_CODES]
    message: str


class Pong(ServerMessage):
    type: Literal["pong"] = "pong"


def _by_type(*models: type[Message]) -> dict[str, type[Message]]:
    return {m.model_fields["type"].default: m for m in models}


CLIENT_MESSAGES = _by_type(Join, Play, Create, Watch, Ping)
SERVER_MESSAGES = _by_type(Created, Welcome, Seat, Start, YourTurn, Played, Thinking, Trick,
                           GameOver, Error, Pong)


def protocol_schema() -> dict:
    """The JSON Schema of every message: a message is one of AnyClientMessage (what a client
    sends) or AnyServerMessage (what the server sends), each one of its messages."""
    models = [(m, "validation") for m in CLIENT_MESSAGES.values()] + \
             [(m, "serialization") for m in SERVER_MESSAGES.values()]
    refs, defs = models_json_schema(models, ref_template="#/$defs/{model}")
    defs = defs["$defs"]
    defs["AnyClientMessage"] = {"oneOf": [refs[(m, "validation")]
                                          for m in CLIENT_MESSAGES.values()]}
    defs["AnyServerMessage"] = {"oneOf": [refs[(m, "serialization")]
                                          for m in SERVER_MESSAGES.values()]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"ScrofaZero table protocol, version {PROTOCOL_VERSION}",
            "description": "Messages over ws://HOST:PORT/ws (docs/protocol.md). Generated by "
                           "`python -m scrofazero.serve.messages docs/protocol.schema.json`.",
            "oneOf": [{"$ref": "#/$defs/AnyClientMessage"}, {"$ref": "#/$defs/AnyServerMessage"}],
            "$defs": defs}


def schema_text() -> str:
    return json.dumps(protocol_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m scrofazero.serve.messages PATH.json")
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(schema_text())
