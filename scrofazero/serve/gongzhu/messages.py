"""Every message of the Gongzhu table protocol (docs/protocol.md) as a pydantic model, and its
JSON Schema; the envelope and the messages both protocols share are common/messages.py's.

docs/protocol.schema.json is `protocol_schema()` written out
(`python -m scrofazero.serve.messages docs/protocol.schema.json`, the command the committed
schema names); a test keeps it current, and another checks docs/protocol.md's message tables
against these models.
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from scrofazero.agents import PLAYERS
from scrofazero.games.gongzhu.cards import card_index
from scrofazero.serve.common.messages import (
    OPEN,
    PROTOCOL_VERSION,
    ClientMessage,
    Error,
    Fallback,
    Join,
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
    name_field,
    one_printable_line,
)

CARD_PATTERN = r"^[SHDC]([2-9]|10|[JQKA])$"
MAX_HANDS = 100  # hands a match plays at most
MAX_TARGET = 100_000  # the largest lead a match can be played to


def seat_kinds() -> tuple[str, ...]:
    """What a seat can hold: open, or any registered player (agents/registry.py)."""
    return (OPEN, *PLAYERS)


def _deal_list_bounds(schema: dict) -> None:
    """The JSON Schema edit of create's `deal`: its list of deal numbers holds 1..MAX_HANDS."""
    schema["anyOf"][1].update(minItems=1, maxItems=MAX_HANDS)


# --- client -> server ------------------------------------------------------------------------
class Play(ClientMessage):
    type: Literal["play"] = "play"
    card: StrictStr = Field(pattern=CARD_PATTERN, description="a card code such as 'SQ' or 'H10'")
    ply: StrictInt | None = Field(None, description="the ply number of your_turn")

    @property
    def card_index(self) -> int:
        return card_index(self.card)


class Create(ClientMessage):
    type: Literal["create"] = "create"
    seats: list[StrictStr] = Field(
        description="4 seat kinds: open or a bot (GET /api/options lists them)",
        json_schema_extra=lambda schema: schema.update(minItems=4, maxItems=4, items={
            "type": "string", "enum": list(seat_kinds())}))
    deal: StrictInt | list[StrictInt] | None = Field(
        None, description=f"a standard deal number (hand 1), a list of 1 to {MAX_HANDS} of "
                          "them (hands 1, 2, ...; later hands random) or null (all random)",
        json_schema_extra=_deal_list_bounds)
    leader: StrictInt = Field(0, ge=0, le=3, description="a seat 0..3")
    thinking: StrictBool | None = Field(None, description="true or false")
    live_thinking: StrictBool | None = Field(
        None, description="true or false (true: thinking is sent live, to everyone at the table)")
    hands: StrictInt = Field(1, ge=1, le=MAX_HANDS,
                             description=f"the most hands of the match, 1..{MAX_HANDS}")
    target: StrictInt | None = Field(
        None, ge=1, le=MAX_TARGET,
        description=f"a lead in points 1..{MAX_TARGET} that ends the match, or null")
    public: StrictBool = Field(False, description="true or false (true: anyone may claim its "
                                                  "open seats from the lobby)")

    @field_validator("seats")
    @classmethod
    def _kinds(cls, seats: list[str]) -> list[str]:
        return checked_seats(seats, seat_kinds(), (4,), "4")

    @model_validator(mode="after")
    def _deals_fit_the_match(self) -> Create:
        if isinstance(self.deal, list) and not 1 <= len(self.deal) <= self.hands:
            raise ValueError(f"'deal' lists {len(self.deal)} standard deals; give 1 to 'hands' "
                             f"({self.hands}) of them, one per hand from the first")
        return self

    def chosen_deals(self) -> list[int]:
        """The standard deal numbers of hands 1, 2, ... the creator chose (none: all random)."""
        if self.deal is None:
            return []
        return [self.deal] if isinstance(self.deal, int) else list(self.deal)


class Watch(WatchTable):
    type: Literal["watch"] = "watch"


class Next(ClientMessage):
    """A seat is ready for the next hand of its match."""

    type: Literal["next"] = "next"


class Claim(BaseModel):
    """The body of POST /api/tables/{table}/claim: an open seat of a public table."""

    model_config = ConfigDict(extra="ignore")
    seat: StrictInt = Field(description="a seat 0..3")
    name: StrictStr | None = name_field()

    _name = field_validator("name")(one_printable_line)


# --- server -> client ------------------------------------------------------------------------
class PublicState(BaseModel):
    """What every seat sees of a hand: the trick with its seats, captured scoring cards, scores."""

    model_config = ConfigDict(extra="forbid")
    leader: int = Field(description="the seat leading the current trick")
    trick: list[tuple[int, str]] = Field(description="the current trick as [seat, card]")
    captured: list[list[str]] = Field(description="per seat, the scoring cards it has taken")
    scores: list[int] = Field(description="per seat pile scores (mid-game rule)")
    team: list[int] = Field(description="seats 0+2, seats 1+3")


class TableFields(BaseModel):
    """The fields of TableInfo, which Welcome has too; `hand` is each one's own (TableInfo's the
    hand number, Welcome's the seat's cards)."""

    model_config = ConfigDict(extra="forbid")
    table: str
    game_id: int
    status: Status
    first_leader: int
    players: list[PlayerInfo]
    match_id: int
    hand: int | list[str]
    hands: int = Field(description="the most hands of the match")
    target: int | None = Field(description="the lead that ends the match; null: none")
    totals: list[int] = Field(description="seats 0+2, seats 1+3: team points of the finished "
                                          "hands")
    public: bool
    open_seats: list[int] = Field(description="open seats nobody has joined or claimed yet")
    open_deal: bool = Field(description="true: an open deal, told before anyone joins: the "
                                        "first open_hands hands play standard deals its creator "
                                        "chose, and the standard deals are public, so each "
                                        "seat's own cards name its deal and with it every hand "
                                        "(duplicate practice, not a fair game); false: every "
                                        "hand is dealt at random")
    open_hands: int = Field(description="how many first hands of the match play a chosen "
                                        "standard deal (0: none)")


class TableInfo(TableFields):
    hand: int = Field(description="the hand now or last played, from 1")


class HandResult(BaseModel):
    """One finished hand of a match."""

    model_config = ConfigDict(extra="forbid")
    hand: int
    game_id: int
    team: list[int] = Field(description="that hand's final team points")
    returns: list[int]


class Created(TableCreated):
    type: Literal["created"] = "created"


class Welcome(ServerMessage, TableFields, PublicState):
    """`hand` is the seat's cards here (as before matches); the hand number is `hand_number`."""

    type: Literal["welcome"] = "welcome"
    seat: int | None = Field(description="your seat; null for a watcher")
    hand: list[str] = Field(description="your cards now (none for a watcher)")
    hand_number: int = Field(description="the hand now or last played, from 1")
    match_history: list[HandResult] = Field(description="the match's finished hands")
    history: list[tuple[int, str]] = Field(description="every [seat, card] played so far")
    ply: int = Field(description="cards played so far")
    move_deadline_s: float
    thinking: bool
    live_thinking: bool = Field(description="thinking is sent live, not at game_over")
    returns: list[int] | None = Field(description="per seat at the end; null before")


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
    fallback: Fallback | None


class CardValue(BaseModel):
    model_config = ConfigDict(extra="forbid")
    card: str
    value: float | None = Field(description="the mover's team's expected final margin (its "
                                               "points minus the other team's); null: not "
                                               "searched")


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
    deal_number: int | None = Field(description="the standard deal played, told only at "
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
    target: int | None
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
    winner: int | None = Field(description="0: seats 0+2, 1: seats 1+3, null: a tie")
    deal_numbers: list[int | None] = Field(description="per hand, the standard deal played; "
                                                          "null: a random deal")


class Ready(ServerMessage):
    type: Literal["ready"] = "ready"
    table: str
    seat: int


CLIENT_MESSAGES = by_type(Join, Play, Create, Watch, Ping, Next)
SERVER_MESSAGES = by_type(Created, Welcome, Seat, Start, YourTurn, Played, Thinking, Trick,
                           GameOver, HandOver, MatchOver, Ready, Error, Pong)


def protocol_schema() -> dict:
    """The JSON Schema of every message of /ws."""
    return message_schema(CLIENT_MESSAGES, SERVER_MESSAGES,
                          f"ScrofaZero table protocol, version {PROTOCOL_VERSION}",
                          "Messages over ws://HOST:PORT/ws (docs/protocol.md). Generated by "
                          "`python -m scrofazero.serve.messages docs/protocol.schema.json`.")


def schema_text() -> str:
    return json_text(protocol_schema())

