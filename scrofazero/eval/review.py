"""A review of one seat's moves in a played Gongzhu hand: the AI as a coach that calls a move a
mistake only when the loss is beyond the noise of its own estimate.

For each card the seat played, the review samples `worlds` deals of the cards the seat could not
see, from that seat's view at that moment (the full player's sampler: worlds proposed by the
card-location network and weighed by the behaviour network's probability of every play seen;
never the true deal), and searches every deal with every legal card at its root. So all the
cards of a move are valued on the same deals (paired), and the noise of a card's loss against
the AI's card is the spread of the per-deal differences, not of the deals themselves.

A card's value is the expected final team difference of the seat: its team's points minus the
other team's at the end of the hand (docs/rules.md section 4), if that card is played now.
The AI's card is the one of highest value; a card's loss is the AI card's value minus its own,
with the paired standard error of that difference. A card is a **mistake** when its loss is
larger than both `min_loss` points and `z` standard errors; otherwise it is **about as good**.
A move the seat played that this first judgement calls a mistake is judged a second time by
another reviewer, on its own pool of worlds and its own draws and searches: it stays a mistake
only if the second judgement calls it one too, and its loss is the mean of the two. A rare
world with a large difference (the pig taken or not) makes a loss and its error swing from one
set of deals to another; two independent judgements rarely swing the same way.

The review costs far more than a live move (256 deals searched with the paper's play budget
against the live player's 18 with half of it), which it can afford: it runs after the hand, in
the background. Each move uses its own rng seeded by (seed, ply), so a review reproduces.

`review_hand(deal, leader, moves, seat, model, seed)` works on plain card indices and the
policy/value network; the table server (serve/gongzhu/reviews.py) and `python review.py` feed
it records and game files.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated

import numpy as np
from pydantic import Field

from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent, play_sampling
from scrofazero.games.gongzhu.cards import card_code, mask_to_cards
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.search.mcts import MCTSConfig, check_search
from scrofazero.settings import NonNegative, Positive, check_bounds

COSTLIEST = 3  # the mistakes a hand's summary names
MAX_WORLDS = 4096
VERDICTS = ("forced", "best", "as_good", "mistake")


def review_search() -> MCTSConfig:
    """The review's search on each deal: the paper's play budget, 10 + 2 x legal cards (UCB,
    c = 30); every legal card is tried in every deal (UCB visits each once first)."""
    return MCTSConfig(budget_base=10, budget_per_legal=2)


@dataclass
class ReviewSettings:
    """How a move is judged (`python review.py --worlds`, docs/commands.md "Review")."""

    worlds: Annotated[int, Field(ge=2, le=MAX_WORLDS)] = 256  # deals sampled and searched per move
    search: MCTSConfig = field(default_factory=review_search)  # the search on each deal
    # points: a smaller loss is never called a mistake. 15 is a heart and a half; the old review
    # charged up to 15.3 points of pure noise, and 5 called 4.3 % of ScrofaZero's own moves
    # mistakes (benchmarks/review_noise.py, docs/results.md "The coach")
    min_loss: NonNegative = 15.0
    z: Positive = 2.0  # standard errors a loss must exceed to be called a mistake
    # a move the first judgement calls a mistake is judged again on other deals (another pool
    # of worlds) and stays a mistake only if that agrees: the first alone called 30 of 1,664 of
    # ScrofaZero's own moves mistakes, and another review confirmed 9 of them
    confirm: bool = True

    def describe(self) -> dict:
        return {"worlds": int(self.worlds), "budget_base": int(self.search.budget_base),
                "budget_per_legal": int(self.search.budget_per_legal),
                "min_loss": float(self.min_loss), "z": float(self.z),
                "confirm": bool(self.confirm)}


def check_review(settings: ReviewSettings) -> ReviewSettings:
    """`settings` unchanged, or a ValueError naming the bad setting (review.KEY)."""
    check_bounds(settings, "review")
    check_search(settings.search, "review.search")
    if settings.search.budget_per_legal < 1:
        raise ValueError("review.search.budget_per_legal must be >= 1: every legal card must "
                         "be searched in every deal")
    return settings


def make_reviewer(model, settings: ReviewSettings | None = None, **kwargs) -> ScrofaZeroAgent:
    """The full player that reviews: the live player's sampler (models/belief.pt proposals
    weighed by models/behaviour.pt) drawing `settings.worlds` deals from a pool that keeps at
    least as many worlds, searched with `settings.search`; `model` is the policy/value
    network."""
    settings = check_review(settings or ReviewSettings())
    play = play_sampling()
    sampling = dataclasses.replace(play, num_deals=int(settings.worlds),
                                   keep=max(play.keep, int(settings.worlds)))
    return ScrofaZeroAgent(model=model, search=settings.search, sampling=sampling, **kwargs)


def move_rng(seed: int, ply: int) -> np.random.Generator:
    """The rng of the review of the move at `ply` (1-based): seeded by the review's seed and the
    ply alone."""
    return np.random.default_rng([int(seed), int(ply)])


def confirm_rng(seed: int, ply: int) -> np.random.Generator:
    """The rng of the second judgement of a move the first calls a mistake."""
    return np.random.default_rng([int(seed), int(ply), 1])


@dataclass
class Judgement:
    """Every legal card of one move valued on the same deals.

    value [L]: weighted mean over the deals of each card's searched value; value_se [L]: its
    standard error; loss [L]: how much worse than the best card the card is, cross-fitted
    (`judge`), with loss_se [L] the standard error of that paired difference (both 0 for the
    best card); best: index of the AI's card in `legal`."""

    legal: list[int]
    value: np.ndarray
    value_se: np.ndarray
    loss: np.ndarray
    loss_se: np.ndarray
    best: int

    def verdicts(self, settings: ReviewSettings) -> list[str]:
        """best | as_good | mistake for each legal card."""
        mistake = (self.loss > settings.min_loss) & (self.loss > settings.z * self.loss_se)
        return ["best" if i == self.best else "mistake" if mistake[i] else "as_good"
                for i in range(len(self.legal))]


def weighted_mean_se(x: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weighted mean of x [D, ...] over its first axis and its standard error: the weighted
    variance over (ESS - 1), ESS = 1 / sum(w^2) (weights summing to 1). For D equal weights this
    is the usual s / sqrt(D); deals drawn more than once count once in the ESS, which errs on
    the side of a larger error. One deal alone has an infinite error."""
    w = weights.reshape((-1,) + (1,) * (x.ndim - 1))
    mean = (w * x).sum(axis=0)
    ess = 1.0 / float((weights ** 2).sum())
    if ess <= 1.0 + 1e-9:
        return mean, np.full(mean.shape, np.inf)
    var = (w * (x - mean) ** 2).sum(axis=0) / (ess - 1.0)
    return mean, np.sqrt(var)


def judge(q: np.ndarray, weights: np.ndarray, legal: Sequence[int]) -> Judgement:
    """The Judgement of a move from the searched values q [D, L] of its legal cards in D deals
    with weights [D] (summing to 1).

    The AI's card is the one of highest value over all the deals. A card's loss is cross-fitted,
    so that no card is charged for the luck of the deals that made the AI's choice: the deals
    are split into two halves (alternate rows); the card each half finds best is compared with
    the card on the other half, and the loss is the mean of the two comparisons (floored at 0),
    its standard error that of the two independent halves' paired differences. Measured on the
    deals that chose it, the best card's lead would be inflated by their noise (with 10 cards
    alike, the best of 10 noisy means stands out by chance). A card some deal's search did not
    reach takes that deal's worst value for the card, so it is never favoured by a gap (UCB
    reaches all of them once the budget covers the legal cards)."""
    q = np.where(np.isnan(q), np.nanmin(q, axis=1, keepdims=True), q)
    value, value_se = weighted_mean_se(q, weights)
    best = int(np.argmax(value))  # ties -> the lowest card
    even = np.arange(len(q)) % 2 == 0
    losses, variances = [], []
    for pick, other in ((even, ~even), (~even, even)):
        chosen = int(np.argmax(weights[pick] @ q[pick]))
        w = weights[other] / weights[other].sum()
        loss, se = weighted_mean_se(q[other][:, [chosen]] - q[other], w)
        losses.append(loss)
        variances.append(se ** 2)
    loss = np.maximum(0.0, (losses[0] + losses[1]) / 2)
    loss_se = np.sqrt(variances[0] + variances[1]) / 2
    loss[best], loss_se[best] = 0.0, 0.0
    return Judgement([int(c) for c in legal], value, value_se, loss, loss_se, best)


def context(state: GongzhuState, seat: int) -> dict:
    """Where a move happens: the trick's number and leader, the seat's place in it, the cards
    already on the table and the seat's hand."""
    trick = state.num_played // 4 + 1
    return {"trick": trick, "position": len(state.trick) + 1, "leader": state.leader,
            "table": [{"seat": (state.leader + i) % 4, "card": card_code(c)}
                      for i, c in enumerate(state.trick)],
            "hand": [card_code(c) for c in mask_to_cards(state.hands[seat])]}


def review_move(reviewers: Reviewers, view: InfoView, played: int, ply: int, seed: int
                ) -> dict:
    """The review of one move: `played` (a card index) at `view`, the seat's information."""
    legal = [int(c) for c in view.legal_actions()]
    if len(legal) == 1:
        return {"card": card_code(played), "ai_card": card_code(legal[0]), "forced": True,
                "verdict": "forced", "loss": 0.0, "loss_se": 0.0, "given_up": 0.0,
                "values": [{"card": card_code(legal[0]), "value": None, "se": 0.0, "loss": 0.0,
                            "loss_se": 0.0, "verdict": "forced"}]}
    settings = reviewers.settings
    _, weights, _, q = reviewers.first.search_worlds(view, move_rng(seed, ply))
    j = judge(q, weights, legal)
    verdicts = j.verdicts(settings)
    loss, loss_se = j.loss.copy(), j.loss_se.copy()
    i = legal.index(played)
    if verdicts[i] == "mistake" and settings.confirm:
        # a second judgement on its own deals (another pool of worlds, other draws, other
        # searches): the move is a mistake only if it agrees, and the loss is their mean
        _, weights2, _, q2 = reviewers.second().search_worlds(view, confirm_rng(seed, ply))
        j2 = judge(q2, weights2, legal)
        verdicts[i] = "mistake" if j2.verdicts(settings)[i] == "mistake" else "as_good"
        loss[i] = (j.loss[i] + j2.loss[i]) / 2
        loss_se[i] = float(np.hypot(j.loss_se[i], j2.loss_se[i])) / 2
    mine = (round(float(loss[i]), 2), points(loss_se[i]))
    return {"card": card_code(played), "ai_card": card_code(legal[j.best]), "forced": False,
            "verdict": verdicts[i], "loss": mine[0], "loss_se": mine[1],
            "given_up": mine[0] if verdicts[i] == "mistake" else 0.0,
            "values": [{"card": card_code(c), "value": round(float(j.value[k]), 2),
                        "se": points(j.value_se[k]), "loss": round(float(loss[k]), 2),
                        "loss_se": points(loss_se[k]), "verdict": verdicts[k]}
                       for k, c in enumerate(legal)]}


def points(error: float) -> float | None:
    """A standard error for the answer: rounded, or None where too few distinct deals leave it
    unknown (an infinite error, which JSON cannot hold; such a loss is never a mistake)."""
    return round(float(error), 2) if np.isfinite(error) else None


class Reviewers:
    """The review's two players on one network: `first` judges every move; `second()`, made
    on the first ask, judges again on its own deals the moves the first calls mistakes."""

    def __init__(self, model, settings: ReviewSettings):
        self.model, self.settings = model, settings
        self.first = make_reviewer(model, settings)
        self._second: ScrofaZeroAgent | None = None

    def second(self) -> ScrofaZeroAgent:
        if self._second is None:
            self._second = make_reviewer(self.model, self.settings)
        return self._second


def seat_moves(deal: Sequence[int], leader: int, moves: Sequence[int], seat: int):
    """(ply, the state before the seat played, the card it played) for each of `seat`'s moves
    among `moves` (card indices in play order), replayed on the rules engine; the state is
    replayed on after it is yielded, so use it (or its view) before asking for the next."""
    state = GongzhuState(list(deal), leader=leader)
    for ply, card in enumerate(moves, start=1):
        if state.current_player == seat:
            yield ply, state, int(card)
        state.apply(int(card))


def hand_result(deal: Sequence[int], leader: int, moves: Sequence[int], seat: int
                ) -> dict | None:
    """The seat's team's final points and the other team's, or None for an unfinished hand."""
    state = GongzhuState(list(deal), leader=leader)
    for card in moves:
        state.apply(int(card))
    if not state.is_terminal():
        return None
    piles = state.pile_scores()
    return {"team": piles[seat] + piles[(seat + 2) % 4],
            "other": piles[(seat + 1) % 4] + piles[(seat + 3) % 4]}


def review_hand(deal: Sequence[int], leader: int, moves: Sequence[int], seat: int, model,
                seed: int = 0, settings: ReviewSettings | None = None,
                progress: Callable[[int, int], None] | None = None) -> dict:
    """The review of `seat`'s moves of one hand by reviewers on `model` (the policy/value
    network) with `settings`, and its summary. `progress(done, total)` is called after each
    move."""
    settings = check_review(settings or ReviewSettings())
    reviewers = Reviewers(model, settings)
    total = sum(1 for _ in seat_moves(deal, leader, moves, seat))
    reviewed = []
    for ply, state, card in seat_moves(deal, leader, moves, seat):
        where = context(state, seat)
        move = review_move(reviewers, state.view(seat), card, ply, seed)
        reviewed.append({"ply": ply, **where, **move})
        if progress is not None:
            progress(len(reviewed), total)
    result = hand_result(deal, leader, moves, seat)
    out = {"seat": seat, "seed": int(seed), "settings": settings.describe(), "moves": reviewed,
           **summary(reviewed), "result": result}
    out["explanation"] = explain(out)
    return out


def summary(reviewed: list[dict]) -> dict:
    """The mistakes of reviewed moves: how many, the points they gave up, the costliest."""
    mistakes = [m for m in reviewed if m["verdict"] == "mistake"]
    costly = sorted(mistakes, key=lambda m: (-m["given_up"], m["ply"]))[:COSTLIEST]
    return {"mistakes": len(mistakes),
            "total_given_up": round(sum(m["given_up"] for m in mistakes), 2),
            "costliest": [{k: m[k] for k in ("ply", "trick", "position", "card", "ai_card",
                                             "given_up")} for m in costly]}


def explain(review: dict) -> str:
    """The hand's total in one plain sentence."""
    result = review["result"]
    ended = "" if result is None else (
        f"Your team finished with {result['team']} points to the other team's "
        f"{result['other']}; ")
    n, moves = review["mistakes"], len(review["moves"])
    if n == 0:
        return (f"{ended}{'n' if ended else 'N'}one of your {moves} moves was a mistake beyond "
                "the noise of the AI's estimate.")
    return (f"{ended}{'y' if ended else 'Y'}our {n} mistake{'s' if n > 1 else ''} of {moves} "
            f"moves cost about {review['total_given_up']:.0f} points of expected margin in all, "
            "each measured against the AI's card from what you could see at that moment, so "
            "the total is not the hand's result, which the deal and the other players decide "
            "too.")


def match_summary(hands: list[dict]) -> dict:
    """A match's summary from the reviews of its hands (in order)."""
    return {"hands": len(hands), "mistakes": sum(h["mistakes"] for h in hands),
            "total_given_up": round(sum(h["total_given_up"] for h in hands), 2),
            "per_hand": [h["total_given_up"] for h in hands]}
