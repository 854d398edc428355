"""The JSON answers of the Fish HTTP API (docs/protocol.md, section "Fish") as pydantic models;
their base and the schema writer are common/answers.py's. `FISH_ANSWERS` names the model of each
endpoint a bot reads (the export is text, not JSON).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, RootModel

from scrofazero.serve.common.answers import (
    Answer,
    StoredGame,
    StoredSeat,
    TableCreatedAnswer,
    Time,
)
from scrofazero.serve.common.messages import Fallback, Status
from scrofazero.serve.fish.messages import CallMode, FishTableInfo, FishThought


class FishBot(Answer):
    kind: str
    about: str = Field(description="one line about the player")


class FishOptions(Answer):
    """GET /api/fish/options: the server's Fish choices."""

    protocol: int = Field(description="the protocol version")
    seat_kinds: list[str] = Field(description="what fish_create's seats may hold")
    bots: list[FishBot]
    table_sizes: list[int]
    call_modes: list[CallMode]
    calls: CallMode = Field(description="the call mode of a table made without one")
    move_deadline_s: float
    reconnect_grace_s: float
    max_moves: int = Field(description="past this many moves the seat to move must call")
    max_page_size: int = Field(description="the largest `limit` of a listing")


class FishTables(RootModel[list[FishTableInfo]]):
    """GET /api/fish/tables: the live Fish tables, in the order they were made."""


class FishGameSummary(StoredGame):
    """A Fish game as GET /api/fish/games lists it: nothing of its cards."""

    num_players: int
    calls: CallMode
    first_player: int
    score: list[int] | None = Field(description="sets of team 0 and team 1; null until over")
    seats: list[StoredSeat]


class FishGames(RootModel[list[FishGameSummary]]):
    """GET /api/fish/games: the latest Fish games, newest first."""


class FishSettings(Answer):
    move_deadline_s: float
    reconnect_grace_s: float
    max_moves: int


class MoveRecord(Answer):
    move: int = Field(description="1, 2, ...")
    seat: int = Field(description="the asker or the caller")
    success: bool = Field(description="an ask's hit, a call's right")
    think_ms: int
    fallback: Fallback | None
    played_at: Time
    belief: FishThought | None = Field(description="a bot's belief when it moved; null: none")


class AskRecord(MoveRecord):
    kind: Literal["ask"]
    target: int
    card: str


class CallRecord(MoveRecord):
    kind: Literal["call"]
    set: int
    holders: dict[str, int] = Field(description="card -> seat as the caller named them")


class FishGame(FishGameSummary):
    """GET /api/fish/games/ID: a game that is over, with its deal and moves."""

    seed: int | None = Field(description="the deal's seed; null: a chosen deal")
    deal: list[list[str]] = Field(description="the hands dealt, card codes per seat")
    settings: FishSettings
    moves: list[AskRecord | CallRecord]


class FrameState(Answer):
    hands: list[list[str]] = Field(description="every seat's cards")
    hand_counts: list[int]
    score: list[int]
    turn: int | None = Field(description="the seat to move; null at the end")


class FishDealFrame(FrameState):
    """A replay's frame 0: the deal."""

    move: Literal[0]


class AskFrame(AskRecord, FrameState):
    """A replay's frame after an ask: the move as recorded and the state after it."""


class CallFrame(CallRecord, FrameState):
    """A replay's frame after a call: the move as recorded and the state after it."""


class FishReplay(Answer):
    """GET /api/fish/games/ID/replay: move-by-move frames computed on the rules engine."""

    id: int
    status: Status
    num_players: int
    calls: CallMode
    first_player: int
    seats: list[StoredSeat]
    frames: list[FishDealFrame | AskFrame | CallFrame]
    score: list[int] | None = Field(description="the engine's final score; null: the game "
                                                   "did not finish")
    recorded_score: list[int] | None


FISH_ANSWERS: dict[str, type[BaseModel]] = {
    "GET /api/fish/options": FishOptions,
    "GET /api/fish/tables": FishTables,
    "POST /api/fish/tables": TableCreatedAnswer,
    "GET /api/fish/games": FishGames,
    "GET /api/fish/games/ID": FishGame,
    "GET /api/fish/games/ID/replay": FishReplay,
}
