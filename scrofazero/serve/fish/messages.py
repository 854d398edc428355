"""Every message of the Fish table protocol (docs/protocol.md section "Fish") as a pydantic model.

The Fish tables speak over their own WebSocket, `/ws/fish`, with the envelope of the Gongzhu
protocol (`v`, `type`; client messages ignore unknown fields and coerce no types, server messages
carry nothing their model does not describe). Seats are 0..5 or 0..7, teams alternate (seats 0,
2, ... are team 0); cards are the Fish codes of docs/rules.md section 17 (`H9`, `ST`, `*B`), sets
their ids 0..8. `parse_fish_message` turns one frame into its model or raises FishProtocolError
with the error code and the one-line message sent back. docs/protocol_fish.schema.json is
`fish_protocol_schema()` written out (`python -m scrofazero.serve.fish_messages
docs/protocol_fish.schema.json`, the command the committed schema names); a test keeps it
current.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, field_validator

from scrofazero.fish.players.roster import FISH_PLAYERS
from scrofazero.games.fish.cards import TABLE_SIZES
from scrofazero.games.fish.rules import CALL_MODES
from scrofazero.serve.common.messages import (
    OPEN,
    PROTOCOL_VERSION,
    ClientMessage,
    Fallback,
    JoinSeat,
    Ping,
    PlayerInfo,
    Pong,
    Seat,
    ServerMessage,
    Status,
    TableCreated,
    WatchTable,
    by_type,
    checked_seats,
    json_text,
    message_schema,
)
from scrofazero.serve.common.protocol import Refusal, parse_frame

FISH_CARD_PATTERN = r"^([DCHS][2-9TJQKA]|\*[SB])$"
MAX_SEED = 2**63 - 1
FishErrorCode = Literal["bad_json", "too_large", "bad_message", "unsupported_version",
                        "unknown_table", "unknown_seat", "bad_token", "not_joined",
                        "not_your_turn", "not_started", "game_over", "replaced",
                        "already_joined", "illegal_ask", "illegal_call", "stale_move",
                        "already_watching", "expired", "limit"]
FISH_ERROR_CODES: tuple[str, ...] = get_args(FishErrorCode)
CallMode = Literal["any_time", "own_turn"]  # rules.CALL_MODES, as a type
assert get_args(CallMode) == CALL_MODES


def fish_seat_kinds() -> tuple[str, ...]:
    """What a Fish seat can hold: open, or a Fish player's name (fish/players/roster.py)."""
    return (OPEN, *FISH_PLAYERS)


class FishProtocolError(Refusal):
    """A Fish message refused; `code` is one of FISH_ERROR_CODES, `rule` the rules engine's id
    of the broken rule for illegal_ask and illegal_call. Nothing changes on the server."""

    def __init__(self, code: str, message: str, rule: str | None = None):
        assert code in FISH_ERROR_CODES, code
        super().__init__(message)
        self.code, self.message, self.rule = code, message, rule

    def to_message(self) -> dict:
        return FishError(code=self.code, message=self.message, rule=self.rule).model_dump()


# --- client -> server ------------------------------------------------------------------------
class FishCreate(ClientMessage):
    type: Literal["fish_create"] = "fish_create"
    seats: list[StrictStr] = Field(
        description="6 or 8 seat kinds: open or a Fish bot (GET /api/fish/options lists them)",
        json_schema_extra=lambda schema: schema.update(minItems=6, maxItems=8, items={
            "type": "string", "enum": list(fish_seat_kinds())}))
    seed: StrictInt | None = Field(None, ge=0, le=MAX_SEED,
                                      description=f"a deal seed 0..{MAX_SEED} or null")
    deal: list[list[StrictStr]] | None = Field(
        None, description="the hands dealt, one list of card codes per seat, or null")
    first: StrictInt = Field(0, ge=0, le=7, description="the seat that moves first")
    calls: CallMode | None = Field(
        None, description="any_time or own_turn (null: the server's default)")

    @field_validator("seats")
    @classmethod
    def _kinds(cls, seats: list[str]) -> list[str]:
        return checked_seats(seats, fish_seat_kinds(), TABLE_SIZES, "6 or 8")


class FishJoin(JoinSeat):
    type: Literal["fish_join"] = "fish_join"
    seat: StrictInt = Field(description="a seat 0..5 or 0..7")


class FishAsk(ClientMessage):
    type: Literal["ask"] = "ask"
    target: StrictInt = Field(description="the opponent's seat")
    card: StrictStr = Field(pattern=FISH_CARD_PATTERN,
                            description="a Fish card code such as 'H9', 'ST' or '*B'")
    move: StrictInt | None = Field(None, description="the `move` of the fish_turn answered")


class FishCall(ClientMessage):
    type: Literal["call"] = "call"
    set: StrictInt = Field(description="a set id 0..8")
    holders: dict[StrictStr, StrictInt] = Field(
        description="card code -> seat of your team, for each of the set's 6 cards")
    move: StrictInt | None = Field(
        None, description="the number this call gets: the moves made so far + 1 (a stale call "
                          "is refused)")

    @field_validator("holders")
    @classmethod
    def _codes(cls, holders: dict[str, int]) -> dict[str, int]:
        bad = [code for code in holders if not re.match(FISH_CARD_PATTERN, code)]
        if bad:
            raise ValueError(f"'holders' keys must be Fish card codes, got {bad[0]!r}"[:300])
        return holders


class FishWatch(WatchTable):
    type: Literal["fish_watch"] = "fish_watch"


# --- server -> client ------------------------------------------------------------------------
class FishSetInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    set: int
    name: str = Field(description="e.g. 'low H', 'high S', '8s+jokers'")
    cards: list[str]
    team: int | None = Field(description="the team that got it; null while uncalled")


class FishTableInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    table: str
    game_id: int
    status: Status
    num_players: int
    calls: CallMode
    first_player: int
    players: list[PlayerInfo]


class FishCreated(TableCreated):
    type: Literal["fish_created"] = "fish_created"


class Asked(ServerMessage):
    type: Literal["asked"] = "asked"
    move: int = Field(description="1, 2, ...: the moves of the game in order")
    seat: int
    target: int
    card: str
    hit: bool = Field(description="the card was handed over")
    turn: int | None = Field(description="the seat to move now; null at the end")
    hand_counts: list[int]
    fallback: Fallback | None


class Called(ServerMessage):
    type: Literal["called"] = "called"
    move: int
    seat: int
    set: int
    holders: dict[str, int] = Field(description="card -> seat as the caller named them")
    right: bool = Field(description="every card was where named")
    team: int = Field(description="the team that got the set")
    removed: list[int] = Field(description="per seat, the cards it gave up")
    turn: int | None
    hand_counts: list[int]
    score: list[int] = Field(description="sets won by team 0 and team 1")
    fallback: Fallback | None


class FishWelcome(ServerMessage, FishTableInfo):
    type: Literal["fish_welcome"] = "fish_welcome"
    seat: int | None = Field(description="your seat; null for a watcher")
    hand: list[str] = Field(description="your cards now (none for a watcher)")
    hand_counts: list[int]
    sets: list[FishSetInfo]
    score: list[int] = Field(description="sets won by team 0 and team 1")
    history: list[Asked | Called] = Field(description="every move so far")
    turn: int | None = Field(description="the seat to move; null before the start and at the "
                                            "end")
    move: int = Field(description="moves made so far")
    move_deadline_s: float


class FishStart(ServerMessage, FishTableInfo):
    type: Literal["fish_start"] = "fish_start"
    turn: int


class FishTurn(ServerMessage):
    type: Literal["fish_turn"] = "fish_turn"
    table: str
    move: int = Field(description="the number the next move gets")
    asks: list[tuple[int, str]] = Field(description="every legal ask as [target, card]")
    must_call: bool = Field(description="no ask is legal: you must call a set")
    deadline: float = Field(description="Unix time in seconds")
    timeout_s: float


class FishBelief(BaseModel):
    model_config = ConfigDict(extra="forbid")
    card: str
    seat: int = Field(description="the seat the bot thought likeliest to hold it")
    p: float = Field(description="its probability of that")
    holder: int = Field(description="the seat that held it")


class FishThought(BaseModel):
    """A bot's belief when it moved: each card it could not see, in an uncalled set."""

    model_config = ConfigDict(extra="forbid")
    seat: int
    move: int
    kind: str
    cards: list[FishBelief]


class FishOver(ServerMessage):
    type: Literal["fish_over"] = "fish_over"
    table: str
    game_id: int
    score: list[int] = Field(description="sets won by team 0 and team 1")
    winner: int | None = Field(description="the team with more sets; null: a draw")
    returns: list[int] = Field(description="per seat: +1 won, -1 lost, 0 a draw")
    deal: list[list[str]] = Field(description="the hands dealt (told only now)")
    beliefs: list[FishThought] = Field(description="the bots' beliefs at their moves, in move "
                                                   "order (told only now)")


class FishError(ServerMessage):
    type: Literal["error"] = "error"
    code: FishErrorCode
    message: str
    rule: str | None = Field(None, description="the rules engine's id of the broken rule")


FISH_CLIENT_MESSAGES = by_type(FishCreate, FishJoin, FishAsk, FishCall, FishWatch, Ping)
FISH_SERVER_MESSAGES = by_type(FishCreated, FishWelcome, Seat, FishStart, FishTurn, Asked,
                                Called, FishOver, FishError, Pong)


def fish_protocol_schema() -> dict:
    """The JSON Schema of every message of /ws/fish."""
    return message_schema(FISH_CLIENT_MESSAGES, FISH_SERVER_MESSAGES,
                          f"ScrofaZero Fish table protocol, version {PROTOCOL_VERSION}",
                          "Messages over ws://HOST:PORT/ws/fish (docs/protocol.md, section "
                          "Fish). Generated by `python -m scrofazero.serve.fish_messages "
                          "docs/protocol_fish.schema.json`.")


def fish_schema_text() -> str:
    return json_text(fish_protocol_schema())


def parse_fish_message(text: str | bytes) -> ClientMessage:
    """One client frame of /ws/fish -> its checked message. Raises FishProtocolError."""
    return parse_frame(text, FISH_CLIENT_MESSAGES, FishProtocolError)

