"""The JSON answers of the Gongzhu HTTP API (docs/protocol.md, "Records", "The lobby",
"Matches", "Review of a seat's moves") as pydantic models; their base and the schema writer are
common/answers.py's. `GONGZHU_ANSWERS` names the model of each endpoint a bot reads (the
export is text, not JSON).
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, Field, RootModel

from scrofazero.serve.common.answers import (
    Answer,
    StoredGame,
    StoredSeat,
    TableCreatedAnswer,
    Time,
)
from scrofazero.serve.common.messages import Fallback, Status, only_when_set
from scrofazero.serve.gongzhu.messages import PublicState, TableInfo, Thought

Verdict = Literal["forced", "best", "as_good", "mistake"]  # a reviewed card's (eval/review.py)
VERDICTS: tuple[str, ...] = get_args(Verdict)


class Bot(Answer):
    kind: str
    name: str
    about: str = Field(description="one line about the player")


class Options(Answer):
    """GET /api/options: the server's choices."""

    protocol: int = Field(description="the protocol version")
    seat_kinds: list[str] = Field(description="what create's seats may hold")
    bots: list[Bot]
    bot_names: dict[str, str] = Field(description="bot kind -> its name")
    default_bots: list[str] = Field(description="the page's default for the three other seats")
    checkpoint: str = Field(description="the network of the scrofazero and raw seats")
    thinking: bool = Field(description="new tables send ScrofaZero's thinking")
    move_deadline_s: float
    reconnect_grace_s: float
    standard_deals: int = Field(description="how many standard deals `deal` may number")
    max_page_size: int = Field(description="the largest `limit` of a listing")


class Tables(RootModel[list[TableInfo]]):
    """GET /api/tables: the live tables, in the order they were made."""


class Claimed(Answer):
    """POST /api/tables/TABLE/claim: the seat's fresh token."""

    seat: int
    token: str


class GameSummary(StoredGame):
    """A game as GET /api/games lists it."""

    deal_number: int | None = Field(description="the standard deal played; null: a random "
                                                   "deal, or its match is not over")
    leader: int = Field(description="the first leader")
    scores: list[int] | None = Field(description="the four final pile scores; null until "
                                                    "the hand is over")
    match_id: int | None = Field(description="null: recorded before matches")
    hand: int | None = Field(description="the hand of its match, from 1")
    seats: list[StoredSeat]


class Games(RootModel[list[GameSummary]]):
    """GET /api/games: the latest games, newest first."""


class GameSettings(Answer):
    """The table's rules as created."""

    move_deadline_s: float
    reconnect_grace_s: float
    thinking: bool
    live_thinking: bool = False  # not recorded before live thinking was offered


class StoredMove(Answer):
    ply: int = Field(description="1-52")
    seat: int
    card: str
    think_ms: int
    fallback: Fallback | None = Field(description="null, or why the server "
                                                               "played it")
    played_at: Time
    thinking: Thought | None = Field(description="what the bot weighed; null: none kept")


class Game(GameSummary):
    """GET /api/games/ID: a game that is over, with its moves."""

    deal: str = Field(description="52 card codes separated by spaces: seat i dealt codes "
                                  "13i .. 13i+12")
    settings: GameSettings
    moves: list[StoredMove]


class DealFrame(PublicState):
    """A replay's frame 0: the deal."""

    ply: Literal[0]
    hands: list[list[str]] = Field(description="every seat's cards, in card index order")


class MoveFrame(PublicState):
    """A replay's frame k >= 1: the state after move k."""

    ply: int = Field(ge=1, le=52)
    seat: int
    card: str
    fallback: Fallback | None
    thinking: Thought | None
    hands: list[list[str]] = Field(description="every seat's cards left, in card index order")
    leader: int = Field(description="the seat leading the trick in progress; on the frame "
                                    "that completes a trick, its winner (who leads the next)")
    trick: list[tuple[int, str]] = Field(description="the trick in progress as [seat, card]; "
                                                     "on the frame that completes a trick, its "
                                                     "four")
    winner: int | None = Field(None, json_schema_extra=only_when_set(
        "on the frame that completes a trick only: the seat that took it"))


class Replay(Answer):
    """GET /api/games/ID/replay: move-by-move frames computed on the rules engine."""

    id: int
    status: Status
    seats: list[StoredSeat]
    leader: int = Field(description="the first leader")
    frames: list[MoveFrame | DealFrame]
    scores: list[int] | None = Field(description="the final pile scores replayed; null: the "
                                                    "hand did not finish")
    recorded_scores: list[int] | None
    match_id: int | None
    hand: int | None


class MatchHead(Answer):
    id: int
    table: str
    status: Status
    hands: int = Field(description="the most hands it plays")
    target: int | None = Field(description="the lead that ends it; null: none")
    created_at: Time
    finished_at: Time | None
    totals: list[int] = Field(description="seats 0+2, seats 1+3: team points of its finished "
                                          "hands")


class MatchSummary(MatchHead):
    """A match as GET /api/matches lists it."""

    game_ids: list[int] = Field(description="its hands' games, in hand order")


class Matches(RootModel[list[MatchSummary]]):
    """GET /api/matches: the latest matches, newest first."""


class Match(MatchHead):
    """GET /api/matches/ID."""

    games: list[GameSummary] = Field(description="its hands, in order")


class MatchReplay(Answer):
    """GET /api/matches/ID/replay: the replay of every hand that is over."""

    match: Match
    hands: list[Replay]


# --- reviews (eval/review.py's format) ---------------------------------------------------------
class ReviewSettings(Answer):
    worlds: int = Field(description="deals sampled and searched per move")
    budget_base: int
    budget_per_legal: int
    min_loss: float = Field(description="points: a smaller loss is never a mistake")
    z: float = Field(description="standard errors a loss must exceed to be a mistake")
    confirm: bool = Field(description="a move called a mistake is judged again on other deals "
                                      "and stays one only if that agrees")


class TableCard(Answer):
    seat: int
    card: str


class CardReview(Answer):
    """One legal card of a reviewed move."""

    card: str
    value: float | None = Field(description="the expected final margin of the seat's team "
                                               "if played now; null: not valued (forced)")
    se: float | None = Field(description="the value's standard error; null: unknown (too "
                                            "few distinct deals)")
    loss: float = Field(description="the AI card's value minus this card's")
    loss_se: float | None = Field(description="the paired standard error of loss; null: "
                                                 "unknown (too few distinct deals), never a "
                                                 "mistake")
    verdict: Verdict


class ReviewedMove(Answer):
    ply: int = Field(ge=1, le=52)
    trick: int = Field(ge=1, le=13)
    position: int = Field(ge=1, le=4, description="1: led the trick")
    leader: int = Field(description="the seat that led this trick")
    table: list[TableCard] = Field(description="the cards already on the table in this trick")
    hand: list[str] = Field(description="the seat's cards before it played, card index order")
    card: str = Field(description="the card played")
    ai_card: str = Field(description="the AI's card (the best value)")
    forced: bool = Field(description="one legal card")
    verdict: Verdict
    loss: float
    loss_se: float | None = Field(description="null: unknown (too few distinct deals)")
    given_up: float = Field(description="loss when the verdict is mistake, else 0")
    values: list[CardReview] = Field(description="every legal card, card index order")


class Costly(Answer):
    ply: int
    trick: int
    position: int
    card: str
    ai_card: str
    given_up: float


class HandOutcome(Answer):
    team: int = Field(description="the seat's team's final points")
    other: int = Field(description="the other team's")


class Review(Answer):
    """The review of one seat's moves in one hand."""

    seat: int
    seed: int
    settings: ReviewSettings
    moves: list[ReviewedMove] = Field(description="the seat's moves in play order")
    mistakes: int
    total_given_up: float = Field(description="the sum of given_up")
    costliest: list[Costly] = Field(description="at most 3 mistakes, costliest first")
    result: HandOutcome | None = Field(description="null: the hand did not finish")
    explanation: str = Field(description="one plain sentence about the hand's total")


class ReviewJob(Answer):
    """GET /api/games/ID/review?seat=S: the review's state, and the review once done."""

    game_id: int
    seat: int
    player: str = Field(description="the reviewing player")
    status: Literal["running", "done", "failed"]
    done: int = Field(description="moves reviewed so far")
    total: int = Field(description="the seat's moves to review")
    review: Review | None = Field(None, json_schema_extra=only_when_set(
        "when status is done only"))
    error: str | None = Field(None, json_schema_extra=only_when_set(
        "when status is failed only: why"))


class MatchReviewSummary(Answer):
    hands: int
    mistakes: int
    total_given_up: float
    per_hand: list[float] = Field(description="total_given_up of each hand, in order")


class MatchReview(Answer):
    """GET /api/matches/ID/review?seat=S: the reviews of every hand of a match that is over."""

    match_id: int
    seat: int
    player: str
    status: Literal["running", "done", "failed"]
    hands: list[ReviewJob]
    summary: MatchReviewSummary | None = Field(description="null until every hand is done")


GONGZHU_ANSWERS: dict[str, type[BaseModel]] = {
    "GET /api/options": Options,
    "GET /api/tables": Tables,
    "POST /api/tables": TableCreatedAnswer,
    "POST /api/tables/TABLE/claim": Claimed,
    "GET /api/games": Games,
    "GET /api/games/ID": Game,
    "GET /api/games/ID/replay": Replay,
    "GET /api/games/ID/review": ReviewJob,
    "GET /api/matches": Matches,
    "GET /api/matches/ID": Match,
    "GET /api/matches/ID/replay": MatchReplay,
    "GET /api/matches/ID/review": MatchReview,
}
