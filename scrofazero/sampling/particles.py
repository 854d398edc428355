"""Worlds weighed by how likely the plays seen so far are in each (policy-based inference).

For one seat's hand the sampler keeps a pool of candidate worlds across its decisions, each world
the seat that held every card at the start of the hand. At each decision it proposes fresh
worlds from the card-location network's calibrated product model (sampling/belief.py: exact
draws with exact probabilities), scores every world by the product over the other seats' earlier
plays of a play model's probability of the card actually played there (`PlayModel`: the
behaviour network, or a known opponent's own program), each factor floored and tempered, and
weighs the pool by multiple importance sampling: a world's weight is its target probability
(uniform over the consistent worlds, times the likelihood) over the mixture of every proposal
made in the hand so far, so the worlds found early keep their weight late in the hand, when
fresh proposals rarely explain every play (Rebstock et al., "Policy Based Inference in
Trick-Taking Card Games", CoG 2019, weigh worlds by the plays; the pool is our choice). A world
that contradicts a later play (the card was elsewhere, or the seat could have followed suit)
leaves the pool. The deals searched are drawn from the pool by weight (systematic resampling),
equal draws merged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import InfoView, views_before_plays
from scrofazero.nn.belief import Positions, view_positions
from scrofazero.sampling.belief import fitted_weights, log_partition, sample, view_weights
from scrofazero.sampling.uniform import assignment_owners

_SUIT = np.arange(NUM_CARDS) // 13
PRIORS = ("uniform", "belief")


class PublicHistory:
    """The public facts of one hand so far, as each play was made: the views before each play
    (hands unknown, 0) and their Positions (viewer = the seat that played), and a `cache` a play
    model may keep per-ply results in (the hand's history only grows)."""

    def __init__(self) -> None:
        self.history: tuple[tuple[int, int], ...] = ()
        self.views: list[InfoView] = []
        self.positions: Positions | None = None
        self.cards = np.zeros(0, dtype=np.int64)
        self.seats = np.zeros(0, dtype=np.int64)
        self.led = np.zeros(0, dtype=np.int64)  # [n] led suit at each play, -1 when leading
        self.cache: dict[object, Any] = {}

    def update(self, view: InfoView) -> None:
        """Take the history of `view` (which extends the one held)."""
        if view.history == self.history:
            return
        self.history = view.history
        self.views = views_before_plays(view)
        self.positions = view_positions(self.views)
        n = len(view.history)
        self.seats = np.array([s for s, _ in view.history], dtype=np.int64)
        self.cards = np.array([c for _, c in view.history], dtype=np.int64)
        first = np.arange(n) - np.arange(n) % 4
        self.led = np.where(np.arange(n) % 4 != 0, self.cards[first] // 13, -1)


class PlayModel(Protocol):
    """How likely a seat was to make a play, given its hand in a world."""

    def log_probs(self, public: PublicHistory, plies: np.ndarray, hands: np.ndarray
                  ) -> np.ndarray:
        """log P(the card played at each ply | the mover's hand then, the public history).

        Args:
            public: the hand's public history.
            plies: [R] int, the plays asked about (indices into public.history).
            hands: [R, 52] bool, the mover's hand just before each play in each row's world
                (a hand that held the card played and could play it legally).

        Returns:
            [R] float natural logs (-inf: the model rules the play out).
        """
        ...


@dataclass(frozen=True)
class WeighingConfig:
    """How worlds are weighed by the plays (the sampler's policy and posterior methods)."""

    proposals: int = 128  # fresh worlds proposed per decision
    keep: int = 256  # worlds the pool keeps between decisions (the weightiest)
    temperature: float = 1.0  # each play's probability to this power
    floor: float = 0.01  # each play's probability at least this (a model is never certain)
    # uniform: the target is uniform over consistent worlds times the likelihood (the proposal
    # only proposes) | belief: the card-location network's product times the likelihood
    prior: str = "uniform"
    uniform_share: float = 0.25  # of the proposals, drawn uniformly over the consistent worlds
    # propose fresh worlds only while the pool's effective sample size is below this (the
    # first decision of a hand always proposes)
    refresh_ess: float = 16.0


@dataclass
class _Proposal:
    cards: np.ndarray  # [U] the cards unseen when it proposed
    seat_index: np.ndarray  # [4] absolute seat -> column of log_w (-1: the viewer)
    log_w: np.ndarray  # [U, 3] log of the product model's weights
    log_z: float  # log of its normaliser
    count: int  # worlds it proposed


@dataclass
class _Pool:
    key: tuple[int, int, int]  # (seat, first leader, its hand at the start): which hand this is
    public: PublicHistory = field(default_factory=PublicHistory)
    plies: int = 0  # plays taken into the likelihoods
    start: np.ndarray = field(default_factory=lambda: np.zeros((0, NUM_CARDS), np.int8))  # [M]
    log_lik: np.ndarray = field(default_factory=lambda: np.zeros(0))  # [M]
    proposals: list[_Proposal] = field(default_factory=list)
    # the pool as it was before its last decision (plies of history seen, start, log_lik,
    # number of proposals, plies weighed; the arrays are replaced, never changed in place):
    # asked about the same moment again (decide after act), it weighs from there, as the first
    # time
    before: tuple[int, np.ndarray, np.ndarray, int, int] | None = None


@dataclass
class Weighed:
    """One decision's worlds: the deals to search and what the pool says.

    owners [D, 52] int8 (current holders, -1 played) with weights [D] summing to 1 (equal
    draws merged); ess: the pool's effective sample size before resampling; pool: its size;
    marginals [52, 4]: the pool's weighted belief of who holds each card (0 for seen cards)."""

    owners: np.ndarray
    weights: np.ndarray
    ess: float
    pool: int
    marginals: np.ndarray


def _start_hand(view: InfoView) -> int:
    hand = view.hand
    for seat, card in view.history:
        if seat == view.seat:
            hand |= 1 << card
    return hand


def _hands_at(start: np.ndarray, seat: int, played_before: np.ndarray) -> np.ndarray:
    """[M, 52] bool: seat's hand in each world just before a play (cards played before it
    gone)."""
    hands: np.ndarray = (start == seat) & ~played_before[None, :]
    return hands


def _follows(hands: np.ndarray, card: int, led: int) -> np.ndarray:
    """[M] bool: playing `card` was legal for each hand (it holds it; it follows the led suit or
    holds none of it)."""
    ok: np.ndarray = hands[:, card].copy()
    if led >= 0 and _SUIT[card] != led:
        ok &= ~hands[:, led == _SUIT].any(axis=1)
    return ok


class ParticleWeigher:
    """Worlds for a player's decisions, weighed by the plays; one pool per seat it plays (one
    player object may play both partners' seats), started anew with each hand.

    Args:
        config: the weighing settings.
        calibrate: fitting passes of the proposal toward the belief's marginals
            (sampling/belief.py fitted_weights).
        calibrate_above: fit only while more than this many cards are unseen.
    """

    def __init__(self, config: WeighingConfig, calibrate: int = 20, calibrate_above: int = 0):
        if config.prior not in PRIORS:
            raise ValueError(f"unknown prior {config.prior!r}; choose from {', '.join(PRIORS)}")
        self.config = config
        self.calibrate, self.calibrate_above = calibrate, calibrate_above
        self._pools: dict[int, _Pool] = {}

    def _pool(self, view: InfoView) -> _Pool:
        key = (view.seat, view.first_leader, _start_hand(view))
        pool = self._pools.get(view.seat)
        if (pool is None or pool.key != key
                or view.history[:len(pool.public.history)] != pool.public.history):
            pool = self._pools[view.seat] = _Pool(key)
        if pool.before is not None and pool.before[0] == len(view.history):
            _, pool.start, pool.log_lik, count, pool.plies = pool.before
            del pool.proposals[count:]
        else:
            pool.before = (len(view.history), pool.start, pool.log_lik, len(pool.proposals),
                           pool.plies)
        return pool

    def weigh(self, view: InfoView, belief: np.ndarray, models: dict[int, PlayModel],
              num_deals: int,
              rng: np.random.Generator) -> Weighed:
        """The deals to search for `view`, drawn from the pool weighed by the plays.

        Args:
            view: the deciding seat's information.
            belief: [52, 4] the card-location network's belief for `view` (the proposal).
            models: absolute seat -> PlayModel of the seats whose plays weigh the worlds (the
                others' plays only rule out worlds that contradict them).
            num_deals: deals drawn from the pool.
            rng: the random source of the proposals and the draw.
        """
        pool = self._pool(view)
        pool.public.update(view)
        self._take_plays(pool, view, models)
        weights, ess = self._weights(pool, view, belief)
        # Too few worlds left explain the plays (or none is left): propose more.
        if not len(pool.start) or ess < self.config.refresh_ess:
            self._propose(pool, view, belief, models, rng)
            weights, ess = self._weights(pool, view, belief)
        keep = np.argsort(-weights, kind="stable")[:self.config.keep]
        pool.start, pool.log_lik = pool.start[keep], pool.log_lik[keep]
        weights = weights[keep] / weights[keep].sum()
        picked = _systematic(weights, num_deals, rng)
        rows, counts = np.unique(picked, return_counts=True)
        owners = pool.start[rows].copy()
        played = np.zeros(NUM_CARDS, dtype=bool)
        played[pool.public.cards] = True
        owners[:, played] = -1
        marginals = np.zeros((NUM_CARDS, 4))
        unseen = np.array([view.unseen >> c & 1 for c in range(NUM_CARDS)], dtype=bool)
        for seat in range(4):
            marginals[unseen, seat] = weights @ (pool.start[:, unseen] == seat)
        return Weighed(owners, counts / counts.sum(), ess, len(weights), marginals)

    def _weights(self, pool: _Pool, view: InfoView, belief: np.ndarray
                 ) -> tuple[np.ndarray, float]:
        """The pool's normalised weights [M] and their effective sample size (0 for none)."""
        if not len(pool.start):
            return np.zeros(0), 0.0
        log_w = pool.log_lik - self._log_mixture(pool, pool.start)
        if self.config.prior == "belief":  # the belief's own (fitted) product at this decision
            cards, sizes, others, weights = view_weights(view, belief)
            fitted = fitted_weights(weights, sizes, self.calibrate, self.calibrate_above)
            seat_index = np.full(4, -1, dtype=np.int64)
            seat_index[list(others)] = np.arange(3)
            with np.errstate(divide="ignore"):
                log_w = log_w + self._log_q(_Proposal(cards, seat_index, np.log(fitted), 0.0, 1),
                                            pool.start)
        weights = np.exp(log_w - log_w.max())
        weights /= weights.sum()
        return weights, float(1.0 / np.square(weights).sum())

    def _score(self, log_p: np.ndarray) -> np.ndarray:
        """Each play's log-probability floored and tempered (-inf, ruled out, stays)."""
        c = self.config
        floored = np.maximum(log_p, np.log(c.floor))
        return np.where(np.isneginf(log_p), -np.inf, c.temperature * floored)

    def _take_plays(self, pool: _Pool, view: InfoView, models: dict[int, PlayModel]) -> None:
        """The plays made since the pool's last decision: worlds that contradict one leave,
        the others' likelihoods take them in."""
        public = pool.public
        for t in range(pool.plies, len(view.history)):
            seat, card = view.history[t]
            if seat == view.seat or not len(pool.start):
                continue
            before = np.zeros(NUM_CARDS, dtype=bool)
            before[public.cards[:t]] = True
            hands = _hands_at(pool.start, seat, before)
            alive = _follows(hands, card, int(public.led[t]))
            pool.start, pool.log_lik, hands = pool.start[alive], pool.log_lik[alive], hands[alive]
            if seat in models and len(pool.start):
                pool.log_lik = pool.log_lik + self._score(
                    models[seat].log_probs(public, np.full(len(hands), t), hands))
            alive = np.isfinite(pool.log_lik)
            pool.start, pool.log_lik = pool.start[alive], pool.log_lik[alive]
        pool.plies = len(view.history)

    def _propose(self, pool: _Pool, view: InfoView, belief: np.ndarray,
                 models: dict[int, PlayModel],
                 rng: np.random.Generator) -> None:
        """Fresh worlds, with their likelihood of every earlier play: most from the belief's
        calibrated product model, a share exactly uniform over the consistent worlds (so that
        a confident wrong belief cannot hide the true world from the pool: defensive
        importance sampling)."""
        cards, sizes, others, weights = view_weights(view, belief)
        n = self.config.proposals
        n_uniform = int(round(self.config.uniform_share * n))
        seat_index = np.full(4, -1, dtype=np.int64)
        seat_index[list(others)] = np.arange(3)
        starts = []
        if len(cards):
            fitted = fitted_weights(weights, sizes, self.calibrate, self.calibrate_above)
            for w, count in ((fitted, n - n_uniform), ((weights > 0).astype(float), n_uniform)):
                with np.errstate(divide="ignore"):
                    proposal = _Proposal(cards, seat_index, np.log(w), log_partition(w, sizes),
                                         count)
                if count:
                    starts.append(self._draw(pool, view, cards, sizes, others, w, count, rng))
                    pool.proposals.append(proposal)
        else:  # nothing unseen: the one world there is
            starts.append(self._draw(pool, view, cards, sizes, others, weights, n, rng))
            pool.proposals.append(_Proposal(cards, seat_index, np.zeros((0, 3)), 0.0, n))
        start = np.concatenate(starts)
        public = pool.public
        log_lik = np.zeros(len(start))
        for seat, model in models.items():
            plies = np.flatnonzero(public.seats == seat)
            if not len(plies):
                continue
            hands = np.concatenate([_hands_at(start, seat, np.isin(np.arange(NUM_CARDS),
                                                                   public.cards[:t]))
                                    for t in plies])  # [P * N, 52], ply-major
            scored = self._score(model.log_probs(public, np.repeat(plies, len(start)), hands))
            log_lik += scored.reshape(len(plies), len(start)).sum(axis=0)
        alive = np.isfinite(log_lik)
        pool.start = np.concatenate([pool.start, start[alive]])
        pool.log_lik = np.concatenate([pool.log_lik, log_lik[alive]])

    @staticmethod
    def _draw(pool: _Pool, view: InfoView, cards: np.ndarray, sizes: tuple[int, ...],
              others: tuple[int, ...], weights: np.ndarray, count: int,
              rng: np.random.Generator) -> np.ndarray:
        """[count, 52] worlds (who held each card at the start) drawn from the product model of
        `weights` under the view's hand sizes."""
        assign = (sample(weights, sizes, count, rng) if len(cards)
                  else np.zeros((count, 0), dtype=np.int8))  # [N, U]
        start = assignment_owners(view, cards, others, assign)  # [N, 52], -1 for played
        start[:, pool.public.cards] = pool.public.seats.astype(np.int8)  # who played them
        return start

    @staticmethod
    def _log_q(proposal: _Proposal, start: np.ndarray) -> np.ndarray:
        """[M] log-probability that `proposal` draws each world (its cards' holders)."""
        if not len(proposal.cards):
            return np.zeros(len(start))
        column = proposal.seat_index[start[:, proposal.cards]]  # [M, U]
        picked = proposal.log_w[np.arange(len(proposal.cards))[None, :], column]
        log_q: np.ndarray = picked.sum(axis=1) - proposal.log_z
        return log_q

    def _log_mixture(self, pool: _Pool, start: np.ndarray) -> np.ndarray:
        """[M] log of the sum over the hand's proposals of (worlds proposed) x (probability of
        proposing each world): the denominator of multiple importance sampling."""
        terms = np.stack([np.log(p.count) + self._log_q(p, start) for p in pool.proposals])
        top = terms.max(axis=0)
        log_mixture: np.ndarray = top + np.log(np.exp(terms - top).sum(axis=0))
        return log_mixture


def _systematic(weights: np.ndarray, num: int, rng: np.random.Generator) -> np.ndarray:
    """[num] indices drawn in proportion to `weights` by systematic resampling (one uniform)."""
    edges = np.cumsum(weights)
    edges[-1] = 1.0
    points = (rng.random() + np.arange(num)) / num
    return np.searchsorted(edges, points, side="right")
