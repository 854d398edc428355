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
weight, as the original code did, which overweights unlikely strata. The players draw through
sampling/sampler.py, which picks this sampler or another by their settings.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from scrofazero.games.gongzhu.cards import C10, DJ, SQ, card_index
from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.sampling.uniform import (
    assignment_owners,
    count_assignments,
    sample_assignment,
    view_constraints,
)

STRATUM_WEIGHTS = ("exact", "equal")


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
    exact probability of each stratum under uniform sampling. Deals drawn from a weighed pool
    of worlds (sampling/particles.py) also carry the pool's size `worlds`, its effective sample
    size `ess` and its weighted belief `marginals` [52, 4]; None otherwise."""

    owners: np.ndarray
    weights: np.ndarray
    stratum: np.ndarray
    important: tuple[int, ...]
    strata: np.ndarray
    stratum_prob: np.ndarray
    ess: float | None = None
    marginals: np.ndarray | None = None
    worlds: int | None = None

    def take(self, idx: np.ndarray) -> DealSample:
        """Draws `idx` with their weights renormalised (strata tables kept)."""
        weights = self.weights[idx]
        return DealSample(self.owners[idx], weights / weights.sum(), self.stratum[idx],
                          self.important, self.strata, self.stratum_prob, self.ess,
                          self.marginals, self.worlds)


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
