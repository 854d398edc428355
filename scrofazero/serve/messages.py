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
               "not_started", "game_over", "replaced", "already_joined", "not_between",
               "storage", "expired", "not_public", "seat_taken", "already_watching", "not_found",
               "in_play", "limit")
FALLBACKS = ("deadline", "away", "bot_error")  # why the server played a move for a seat
# a table's (and its match's) status; a game's is one of them too, never "between"
STATUSES = ("waiting", "playing", "between", "finished", "abandoned", "expired")
MAX_HANDS = 100  # hands a match plays at most
MAX_TARGET = 100_000  # the largest lead a match can be played to


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
def echo(value, most: int = 60) -> str:
    """A refused value as an error message repeats it: its repr, cut to about `most`
    characters (a script's 10,000-character name is not sent back in full)."""
    text = repr(value)
    return text if len(text) <= most else f"{text[:most]}… ({len(str(value))} characters)"


def _one_printable_line(name: str | None) -> str | None:
    """No line breaks or control characters: a name goes into one line of the export; and not
    blank (spaces only), which would leave a seat without a name to call it by."""
    if name is not None and not name.isprintable():
        raise ValueError(f"'name' must be one printable line (no line breaks or control "
                         f"characters), got {echo(name)}"[:300])
    if name is not None and not name.strip():
        raise ValueError(f"'name' must not be blank, got {echo(name)}"[:300])
    return name


def _name_field():
    return Field(None, max_length=MAX_NAME,
                 description=f"a display name: one printable line of up to {MAX_NAME} characters")


class Join(ClientMessage):
    type: Literal["join"] = "join"
    table: StrictStr = Field(description="a table id")
    seat: StrictInt = Field(description="a seat 0..3")
    token: StrictStr = Field(description="the seat's token")
    name: Optional[StrictStr] = _name_field()

    _name = field_validator("name")(_one_printable_line)


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
    hands: StrictInt = Field(1, ge=1, le=MAX_HANDS,
                             description=f"the most hands of the match, 1..{MAX_HANDS}")
    target: Optional[StrictInt] = Field(
        None, ge=1, le=MAX_TARGET,
        description=f"a lead in points 1..{MAX_TARGET} that ends the match, or null")
    public: StrictBool = Field(False, description="true or false (true: anyone may claim its "
                                                  "open seats from the lobby)")

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


class Next(ClientMessage):
    """A seat is ready for the next hand of its match."""

    type: Literal["next"] = "next"


class Claim(BaseModel):
    """The body of POST /api/tables/{table}/claim: an open seat of a public table."""

    model_config = ConfigDict(extra="ignore")
    seat: StrictInt = Field(description="a seat 0..3")
    name: Optional[StrictStr] = _name_field()

    _name = field_validator("name")(_one_printable_line)


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
    match_id: int
    hand: int = Field(description="the hand now or last played, from 1")
    hands: int = Field(description="the most hands of the match")
    target: Optional[int] = Field(description="the lead that ends the match; null: none")
    totals: list[int] = Field(description="seats 0+2, seats 1+3: team points of the finished "
                                          "hands")
    public: bool
    open_seats: list[int] = Field(description="open seats nobody has joined or claimed yet")


class HandResult(BaseModel):
    """One finished hand of a match."""

    model_config = ConfigDict(extra="forbid")
    hand: int
    game_id: int
    team: list[int] = Field(description="that hand's final team points")
    returns: list[int]


class Created(ServerMessage):
    type: Literal["created"] = "created"
    table: str
    game_id: int
    tokens: dict[str, str] = Field(description="seat -> token, one per open seat")


class Welcome(ServerMessage, TableInfo, PublicState):
    """`hand` is the seat's cards here (as before matches); the hand number is `hand_number`."""

    type: Literal["welcome"] = "welcome"
    seat: Optional[int] = Field(description="your seat; null for a watcher")
    hand: list[str] = Field(description="your cards now (none for a watcher)")
    hand_number: int = Field(description="the hand now or last played, from 1")
    match_history: list[HandResult] = Field(description="the match's finished hands")
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
    deal_number: Optional[int] = Field(description="the standard deal played, told only at "
                                                   "the match's last hand; null: a random deal, "
                                                   "or the match goes on")
    thinking: list[SeatThought] = Field(description="the bots' thinking of the hand, in play "
                                                    "order, when it was held back to the end")
    match_id: int
    hand: int


class HandOver(ServerMessage):
    type: Literal["hand_over"] = "hand_over"
    table: str
    match_id: int
    hand: int = Field(description="the hand just finished")
    hands: int
    target: Optional[int]
    totals: list[int]
    history: list[HandResult]
    next_leader: int
    next_hand_at: float = Field(description="Unix time at which the next hand starts anyway")
    ready: list[int] = Field(description="the seats ready for the next hand now")


class MatchOver(ServerMessage):
    type: Literal["match_over"] = "match_over"
    table: str
    match_id: int
    hands_played: int
    totals: list[int]
    history: list[HandResult]
    winner: Optional[int] = Field(description="0: seats 0+2, 1: seats 1+3, null: a tie")
    deal_numbers: list[Optional[int]] = Field(description="per hand, the standard deal played; "
                                                          "null: a random deal")


class Ready(ServerMessage):
    type: Literal["ready"] = "ready"
    table: str
    seat: int


class Error(ServerMessage):
    type: Literal["error"] = "error"
    code: Literal[ERROR_CODES]
    message: str


class Pong(ServerMessage):
    type: Literal["pong"] = "pong"


def _by_type(*models: type[Message]) -> dict[str, type[Message]]:
    return {m.model_fields["type"].default: m for m in models}


CLIENT_MESSAGES = _by_type(Join, Play, Create, Watch, Ping, Next)
SERVER_MESSAGES = _by_type(Created, Welcome, Seat, Start, YourTurn, Played, Thinking, Trick,
                           GameOver, HandOver, MatchOver, Ready, Error, Pong)


def message_schema(client: dict, server: dict, title: str, description: str) -> dict:
    """The JSON Schema of a protocol's messages (type -> model, as CLIENT_MESSAGES): a message
    is one of AnyClientMessage (what a client sends) or AnyServerMessage (what the server
    sends), each one of its messages."""
    models = [(m, "validation") for m in client.values()] + \
             [(m, "serialization") for m in server.values()]
    refs, defs = models_json_schema(models, ref_template="#/$defs/{model}")
    defs = defs["$defs"]
    defs["AnyClientMessage"] = {"oneOf": [refs[(m, "validation")] for m in client.values()]}
    defs["AnyServerMessage"] = {"oneOf": [refs[(m, "serialization")] for m in server.values()]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": title, "description": description,
            "oneOf": [{"$ref": "#/$defs/AnyClientMessage"}, {"$ref": "#/$defs/AnyServerMessage"}],
            "$defs": defs}


def protocol_schema() -> dict:
    """The JSON Schema of every message of /ws."""
    return message_schema(CLIENT_MESSAGES, SERVER_MESSAGES,
                          f"ScrofaZero table protocol, version {PROTOCOL_VERSION}",
                          "Messages over ws://HOST:PORT/ws (docs/protocol.md). Generated by "
                          "`python -m scrofazero.serve.messages docs/protocol.schema.json`.")


def json_text(schema: dict) -> str:
    """A schema as its committed file holds it."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def schema_text() -> str:
    return json_text(protocol_schema())


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m scrofazero.serve.messages PATH.json")
    with open(sys.argv[1], "w", encoding="utf-8") as out:
        out.write(schema_text())
