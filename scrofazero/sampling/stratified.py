"""Stratified sampling of the hidden hands on a few important cards (docs/rules.md section 13).

The owner of a handful of cards (the pig, the sheep, the doubler, the top cards of the led
suit) decides most of a Gongzhu hand's value. Instead of leaving their placement to chance, the
sampler picks `num_important` unseen important cards by situation, enumerates every assignment
of them to the three other seats that some consistent deal allows (a "stratum"), and draws the
same number of deals inside each stratum, the rest of the cards exactly uniform given the pins
(sampling/uniform.py).

Each draw carries a prior weight. With `stratum_weights="exact"` (our default) it is the
stratum's exact probability under the uniform distribution (its share of the consistent deals)
divided by the draws per stratum, so weighted averages stay unbiased estimates of the uniform
expectation and only their variance shrinks; `stratum_weights="equal"` gives every draw the same
weight, as the original code did, which overweights unlikely strata. `SamplingConfig` and `draw`
are the player's settings and entry point (stratified or uniform).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from scrofazero.games.gongzhu.cards import C10, DJ, SQ, card_index
from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.sampling.belief import sample_belief
from scrofazero.sampling.oracle import oracle_owners
from scrofazero.sampling.uniform import (
    assignment_owners,
    count_assignments,
    sample_assignment,
    view_constraints,
)

STRATUM_WEIGHTS = ("exact", "equal")
METHODS = ("stratified", "uniform", "belief", "belief_stratified", "oracle", "oracle_important")
BELIEFS = ("belief", "belief_stratified")  # deals from the card-location network
ORACLES = ("oracle", "oracle_important")  # evaluation only: they see the true deal


@dataclass
class SamplingConfig:
    """How the ScrofaZero player draws the deals it searches (`scrofazero.sampling` of
    evaluate.py). Paper: stratified on 2 important cards, 1 deal per stratum (up to 9 deals)."""

    # stratified (on important cards) | uniform | belief (num_deals draws from the card-location
    # network) | belief_stratified (per_stratum draws in each stratum, strata weighted by the
    # network) | oracle (the true deal: evaluation only) | oracle_important (the deciding cards'
    # holders told: evaluation only)
    method: str = "stratified"
    num_important: int = 2  # important cards pinned per decision (strata: every placement of them)
    per_stratum: int = 1  # deals drawn in each stratum
    num_deals: int = 9  # deals per decision with method=uniform, belief or oracle_important
    # exact (each stratum's uniform probability) | equal (the original)
    stratum_weights: str = "exact"
    # method=belief*: the card-location network file ("" = the shipped models/belief.pt)
    beliefs: str = ""
    # method=belief*: fitting passes that give the deals the network's marginals under the exact
    # hand sizes (0: the raw product)
    calibrate: int = 20
    # method=belief*: fit only while more than this many cards are unseen, the raw product after
    # (0: fit whenever a card is unseen; 15, the product from trick 9 on, has the better late
    # log-loss but played -2.8 (1.5) raw, docs/results.md)
    calibrate_above: int = 0

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"unknown sampling method {self.method!r}; choose from "
                             f"{', '.join(METHODS)}")
        if self.stratum_weights not in STRATUM_WEIGHTS:
            raise ValueError(f"unknown stratum_weights {self.stratum_weights!r}; choose from "
                             f"{', '.join(STRATUM_WEIGHTS)}")
        for key in ("num_important", "per_stratum", "num_deals", "calibrate", "calibrate_above"):
            low = 0 if key in ("num_important", "calibrate", "calibrate_above") else 1
            if getattr(self, key) < low:
                raise ValueError(f"sampling {key} must be >= {low}, got {getattr(self, key)}")


def _cards(codes: str) -> tuple[int, ...]:
    return tuple(card_index(c) for c in codes.split())


# Leading: each group counts while its condition card (None: always) has not been played.
_LEAD_GROUPS = (
    (SQ, _cards("SQ SA SK")),
    (DJ, _cards("DJ DA DK DQ")),
    (None, _cards("HA HK HQ")),
    (C10, _cards("C10 CA CK CQ CJ")),
)
# Following: the five top cards of the led suit, the suit's special card first.
_FOLLOW = (
    _cards("SQ SA SK SJ S10"),
    _cards("HA HK HQ HJ H10"),
    _cards("DJ DA DK DQ D10"),
    _cards("C10 CA CK CQ CJ"),
)


def important_cards(view: InfoView, num: int) -> tuple[int, ...]:
    """Up to `num` important cards among those `view` cannot see, most important first.

    Leading: SQ, SA, SK while SQ is unplayed; DJ, DA, DK, DQ while DJ is unplayed; HA, HK, HQ;
    C10, CA, CK, CQ, CJ while C10 is unplayed. Following: the led suit's five top cards (C10
    first for clubs, DJ for diamonds, SQ for spades); when fewer than `num` of those are unseen
    the leading order fills the rest (our choice: the published rule is silent, and fewer
    important cards would mean fewer strata, so fewer deals).

    Args:
        view: the deciding seat's information.
        num: the most important cards wanted (0: none).

    Returns:
        Card ids, at most `num`, most important first.
    """
    if num < 0:
        raise ValueError(f"the number of important cards must be >= 0, got {num}")
    unseen, played = view.unseen, view.played
    order: list[int] = []
    if view.trick:
        order.extend(_FOLLOW[view.trick[0] // 13])
    for condition, cards in _LEAD_GROUPS:
        if condition is None or not played >> condition & 1:
            order.extend(cards)
    picked: list[int] = []
    for card in order:
        if len(picked) == num:
            break
        if unseen >> card & 1 and card not in picked:
            picked.append(card)
    return tuple(picked)


@dataclass
class DealSample:
    """Sampled deals of one view with their prior weights.

    owners [D, 52] int8 (-1 played, else the holding seat); weights [D] float64 prior weight
    of each draw, summing to 1;
    stratum [D] int64 stratum index of each draw; important: the pinned cards; strata [S, k]
    int8 absolute seat holding each important card in each stratum; stratum_prob [S] float64
    exact probability of each stratum under uniform sampling."""

    owners: np.ndarray
    weights: np.ndarray
    stratum: np.ndarray
    important: tuple[int, ...]
    strata: np.ndarray
    stratum_prob: np.ndarray

    def take(self, idx) -> "DealSample":
        """Draws `idx` with their weights renormalised (strata tables kept)."""
        weights = self.weights[idx]
        return DealSample(self.owners[idx], weights / weights.sum(), self.stratum[idx],
                          self.important, self.strata, self.stratum_prob)


def sample_stratified(view: InfoView, num_important: int, per_stratum: int,
                      rng: np.random.Generator, stratum_weights: str = "exact") -> DealSample:
    """Deals of the unseen cards, `per_stratum` in each consistent placement of the important
    cards (so D = S x per_stratum with S <= 3 ** num_important). Raises ValueError when no deal
    is consistent or an argument is out of range.

    Args:
        view: the deciding seat's information.
        num_important: important cards pinned (important_cards); their placements are the
            strata.
        per_stratum: deals drawn in each stratum, at least 1.
        rng: the random source of the draws.
        stratum_weights: "exact", each stratum weighted by its probability under uniform
            sampling, or "equal", every draw alike (see the module docstring).
    """
    if stratum_weights not in STRATUM_WEIGHTS:
        raise ValueError(f"unknown stratum_weights {stratum_weights!r}; choose from "
                         f"{', '.join(STRATUM_WEIGHTS)}")
    if per_stratum < 1:
        raise ValueError(f"per_stratum must be >= 1, got {per_stratum}")
    cards, sizes, voids, others = view_constraints(view)
    important = important_cards(view, num_important)
    where = np.searchsorted(cards, important).astype(np.int64)  # positions in `cards` [k]
    patterns, counts = [], []
    for combo in itertools.product(range(3), repeat=len(important)):
        fixed = np.full(cards.size, -1, dtype=np.int64)
        fixed[where] = combo
        count = count_assignments(cards, sizes, voids, fixed)
        if count:
            patterns.append(fixed)
            counts.append(count)
    if not patterns:
        raise ValueError("no consistent deal: the view's voids and hand sizes allow none")
    total = sum(counts)  # exact integers; equals count_assignments without pins
    stratum_prob = np.array([c / total for c in counts], dtype=np.float64)  # [S]
    stratum = np.repeat(np.arange(len(patterns)), per_stratum)  # [D]
    assign = sample_assignment(cards, sizes, voids, stratum.size, rng,
                               fixed=np.stack(patterns)[stratum])  # [D, U]
    if stratum_weights == "exact":
        weights = stratum_prob[stratum] / per_stratum
    else:
        weights = np.full(stratum.size, 1.0 / stratum.size)
    seat_of = np.array(others, dtype=np.int8)
    strata = seat_of[np.stack(patterns)[:, where]] if important else np.zeros((1, 0), np.int8)
    return DealSample(
        owners=assignment_owners(view, cards, others, assign),
        weights=weights / weights.sum(),
        stratum=stratum,
        important=important,
        strata=strata,
        stratum_prob=stratum_prob,
    )


def sample_uniform(view: InfoView, num_deals: int, rng: np.random.Generator) -> DealSample:
    """`num_deals` (at least 1) exactly uniform deals of `view`'s unseen cards, as a DealSample
    (one stratum, equal weights); `rng` draws them."""
    if num_deals < 1:
        raise ValueError(f"num_deals must be >= 1, got {num_deals}")
    cards, sizes, voids, others = view_constraints(view)
    assign = sample_assignment(cards, sizes, voids, num_deals, rng)
    return plain_sample(assignment_owners(view, cards, others, assign))


def plain_sample(owners: np.ndarray) -> DealSample:
    """Deals owners [D, 52] as one stratum of equally weighted draws."""
    d = len(owners)
    return DealSample(owners=owners, weights=np.full(d, 1.0 / d),
                      stratum=np.zeros(d, dtype=np.int64), important=(),
                      strata=np.zeros((1, 0), dtype=np.int8), stratum_prob=np.ones(1))


def draw(view: InfoView, config: SamplingConfig, rng: np.random.Generator,
         draws: int = 1, belief=None, hands=None) -> DealSample:
    """`draws` x the configured number of deals (per stratum, or uniform) for `view`.

    Args:
        view: the deciding seat's information.
        config: the sampling settings; `config.method` picks the sampler.
        rng: the random source of the draws.
        draws: multiplies the number of deals (per stratum where there are strata).
        belief: [52, 4] card-location probabilities over absolute seats (the belief methods).
        hands: the true current hands, 4 masks (the oracle methods; given by the evaluation
            arena only).
    """
    if config.method == "stratified":
        return sample_stratified(view, config.num_important, config.per_stratum * draws, rng,
                                 config.stratum_weights)
    if config.method in BELIEFS:
        if belief is None:
            raise ValueError(f"sampling method {config.method} needs the card-location "
                             "network's belief")
        if config.method == "belief":
            important, per = (), config.num_deals * draws
        else:
            important, per = important_cards(view, config.num_important), config.per_stratum * draws
        owners, weights, stratum, strata, prob = sample_belief(view, belief, important, per, rng,
                                                               config.calibrate,
                                                               config.calibrate_above)
        return DealSample(owners, weights, stratum, important, strata, prob)
    if config.method in ORACLES:
        return plain_sample(oracle_owners(view, hands, config.num_deals * draws, rng,
                                          config.method == "oracle_important"))
    return sample_uniform(view, config.num_deals * draws, rng)
