"""Exactly uniform sampling of the hidden hands consistent with one seat's information.

Deals the unseen cards of an `InfoView` to the other three seats, uniformly over all deals that
respect their hand sizes and shown voids (docs/rules.md section 10). Used by Mr. Greed and
by imperfect-information search; `sample_assignment` is the view-free core (with optional pinned
cards) that the stratified sampler reuses.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from scrofazero.games.gongzhu.cards import NUM_CARDS, mask_to_cards
from scrofazero.games.gongzhu.rules import InfoView

# Cards are grouped by the set of seats allowed to hold them (3-bit mask, 1..7). Two cards with
# the same allowed set are interchangeable for the constraints, so a "table" (how many cards of
# each group every seat gets) holds prod_g multinomial(n_g; k_g) deals. Order: single-seat groups
# (forced) first, the unconstrained group 7 last, where its split is implied by the capacities.
_GROUP_ORDER = tuple(sorted(range(1, 8), key=lambda m: (bin(m).count("1"), m)))
_SEAT_BITS = (1, 2, 4)


def _multinomial(n: int, ks: Iterable[int]) -> int:
    out, left = 1, n
    for k in ks:
        out *= math.comb(left, k)
        left -= k
    return out


def _splits(n: int, allowed: int, caps: tuple[int, ...]) -> Iterator[tuple[int, int, int]]:
    """Every (k0, k1, k2) summing to n with k_j = 0 off `allowed` and k_j <= caps[j]."""
    hi = [min(n, caps[j]) if allowed & _SEAT_BITS[j] else 0 for j in range(3)]
    for k0 in range(hi[0] + 1):
        for k1 in range(min(hi[1], n - k0) + 1):
            k2 = n - k0 - k1
            if k2 <= hi[2]:
                yield (k0, k1, k2)


@functools.lru_cache(maxsize=4096)
def _tables(groups: tuple[tuple[int, int], ...], caps: tuple[int, ...]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """All consistent tables for `groups` ((allowed mask, size) in _GROUP_ORDER) and seat
    capacities `caps` (summing to the number of cards). Returns (within [U], lo [T, U],
    hi [T, U], cum [T] cumulative deal counts, total: exact int); T = 0 when no deal is
    consistent."""
    rows: list[tuple[tuple[int, ...], ...]] = []
    counts: list[int] = []

    def extend(i: int, left: tuple[int, ...], prefix: tuple[tuple[int, ...], ...],
               count: int) -> None:
        if i == len(groups):
            rows.append(prefix)
            counts.append(count)
            return
        mask, n = groups[i]
        if i == len(groups) - 1:
            # The last group takes exactly what is left (the capacities sum to its size).
            if all(left[j] == 0 or mask & _SEAT_BITS[j] for j in range(3)):
                rows.append(prefix + (left,))
                counts.append(count * _multinomial(n, left))
            return
        for k in _splits(n, mask, left):
            rest = (left[0] - k[0], left[1] - k[1], left[2] - k[2])
            extend(i + 1, rest, prefix + (k,), count * _multinomial(n, k))

    extend(0, caps, (), 1)
    total = sum(counts)
    tables = np.array(rows, dtype=np.int64).reshape(len(rows), len(groups), 3)
    # Cards sorted by group: sorted position p holds rank `within[p]` inside its group, and the
    # card of that rank goes to seat 0 below lo[t, p], seat 1 below hi[t, p], else seat 2.
    sizes = [n for _, n in groups]
    pos_group = np.repeat(np.arange(len(groups)), sizes)  # [U]
    within = np.arange(pos_group.size) - np.repeat(np.cumsum([0] + sizes)[:-1], sizes)  # [U]
    lo = tables[:, pos_group, 0]  # [T, U]
    hi = lo + tables[:, pos_group, 1]  # [T, U]
    cum: np.ndarray
    if total < 2**63:
        # Integer draws keep the table probabilities exact (Gongzhu: at most 39!/13!^3 ~ 8e16).
        cum = np.cumsum(np.array(counts, dtype=np.int64))  # [T]
    else:
        cum = np.cumsum(np.array(counts, dtype=np.float64)) / float(total)  # [T]
    for arr in (within, lo, hi, cum):
        arr.setflags(write=False)
    return within, lo, hi, cum, total


def _check_inputs(cards: npt.ArrayLike, sizes: Iterable[int], voids: Iterable[int],
                  fixed: npt.ArrayLike | None
                  ) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...], np.ndarray | None]:
    cards = np.asarray(cards)
    if cards.ndim != 1 or (cards.size and not np.issubdtype(cards.dtype, np.integer)):
        raise ValueError(f"cards must be a 1-D integer array, got shape {cards.shape}")
    cards = cards.astype(np.int64)
    if cards.size and (cards.min() < 0 or cards.max() >= NUM_CARDS):
        raise ValueError("cards must be card indices 0..51")
    if cards.size and np.bincount(cards, minlength=NUM_CARDS).max() > 1:
        raise ValueError("cards must not repeat")
    sizes = tuple(int(s) for s in sizes)
    voids = tuple(int(v) for v in voids)
    if len(sizes) != 3 or min(sizes) < 0:
        raise ValueError(f"sizes must be three non-negative hand sizes, got {sizes}")
    if len(voids) != 3 or not all(0 <= v < 16 for v in voids):
        raise ValueError(f"voids must be three 4-bit suit masks, got {voids}")
    if sum(sizes) != cards.size:
        raise ValueError(
            f"no consistent deal: hand sizes {sizes} sum to {sum(sizes)} but {cards.size} "
            "cards are to be dealt"
        )
    if fixed is not None:
        fixed = np.asarray(fixed)
        if fixed.size and not np.issubdtype(fixed.dtype, np.integer):
            raise ValueError("fixed must hold integers")
        fixed = fixed.astype(np.int64)
        if fixed.shape[-1:] != cards.shape or fixed.ndim not in (1, 2):
            raise ValueError(f"fixed must have shape [U] or [num, U], U={cards.size}")
        if fixed.size and (fixed.min() < -1 or fixed.max() > 2):
            raise ValueError("fixed entries must be -1 (free) or a seat index 0..2")
    return cards, sizes, voids, fixed


def _grouping(cards: np.ndarray, sizes: tuple[int, ...], voids: tuple[int, ...],
              fixed: np.ndarray | None
              ) -> tuple[tuple[tuple[int, int], ...], tuple[int, ...], np.ndarray] | str:
    """Group cards by allowed seats. Returns (groups, caps, group_of [U]) or a reason string
    when no deal is consistent."""
    suit_allowed = np.array(
        [sum(_SEAT_BITS[j] for j in range(3) if not voids[j] >> s & 1) for s in range(4)]
    )
    allowed = suit_allowed[cards // 13]  # [U]
    if fixed is not None:
        pinned = fixed >= 0
        seat_bit = np.left_shift(1, np.where(pinned, fixed, 0))
        if np.any(pinned & ((allowed & seat_bit) == 0)):
            return "a pinned card lies in a suit its seat is void in"
        allowed = np.where(pinned, seat_bit, allowed)
    if np.any(allowed == 0):
        return "some unseen card belongs to a suit all three other seats are void in"
    present = np.bincount(allowed, minlength=8)
    groups = tuple((m, int(present[m])) for m in _GROUP_ORDER if present[m])
    index_of = np.zeros(8, dtype=np.int64)
    for g, (m, _) in enumerate(groups):
        index_of[m] = g
    return groups, tuple(sizes), index_of[allowed]


def count_assignments(cards: npt.ArrayLike, sizes: Iterable[int], voids: Iterable[int],
                      fixed: npt.ArrayLike | None = None) -> int:
    """Exact number of ways to deal `cards` to three seats; 0 when the voids or pins allow none,
    ValueError for malformed input.

    Args:
        cards: [U] card ids to deal.
        sizes: (3,) cards each seat gets, summing to U.
        voids: (3,) 4-bit masks of the suits each seat may not hold.
        fixed: None, or [U] int: -1 for a free card, else the seat 0..2 it is pinned to.
    """
    cards, sizes, voids, fixed = _check_inputs(cards, sizes, voids, fixed)
    if fixed is not None and fixed.ndim != 1:
        raise ValueError("count_assignments takes fixed of shape [U]")
    grouping = _grouping(cards, sizes, voids, fixed)
    if isinstance(grouping, str):
        return 0
    return _tables(grouping[0], grouping[1])[4]


def _sample_free(cards: np.ndarray, sizes: tuple[int, ...], voids: tuple[int, ...],
                 fixed: np.ndarray | None, num: int, rng: np.random.Generator) -> np.ndarray:
    """sample_assignment for fixed None or [U]: returns [num, U] int8."""
    grouping = _grouping(cards, sizes, voids, fixed)
    if isinstance(grouping, str):
        raise ValueError(f"no consistent deal: {grouping}")
    groups, caps, group_of = grouping
    within, lo, hi, cum, total = _tables(groups, caps)
    if total == 0:
        raise ValueError(
            f"no consistent deal: hand sizes {sizes} cannot be met with voids {voids}"
            + (" and the pinned cards" if fixed is not None and np.any(fixed >= 0) else "")
        )
    u = cards.size
    # Random keys offset by group id: each row sorts the cards group by group, in uniformly
    # random order inside a group, so the same sorted layout as `within` in every row.
    order = np.argsort(rng.random((num, u)) + group_of, axis=1)  # [num, U]
    if cum.size == 1:
        seat_at = (within >= lo[0]).astype(np.int8) + (within >= hi[0])  # [U]
    else:
        # Table t with probability count_t / total (docs/rules.md section 10).
        draw: np.ndarray
        if cum.dtype == np.int64:
            draw = rng.integers(0, total, size=num, dtype=np.int64)
        else:
            draw = rng.random(num)
        t = np.searchsorted(cum, draw, side="right")  # [num]
        seat_at = (within >= lo[t]).astype(np.int8) + (within >= hi[t])  # [num, U]
    out = np.empty((num, u), dtype=np.int8)
    out[np.arange(num)[:, None], order] = seat_at
    return out


def sample_assignment(cards: npt.ArrayLike, sizes: Iterable[int], voids: Iterable[int],
                      num: int, rng: np.random.Generator,
                      fixed: npt.ArrayLike | None = None) -> np.ndarray:
    """Deal `cards` to three seats, exactly uniformly over consistent assignments. Raises
    ValueError when no assignment is consistent.

    Args:
        cards: [U] card ids to deal.
        sizes: (3,) cards per seat, summing to U.
        voids: (3,) 4-bit masks of the suits each seat may not hold.
        num: how many assignments to draw.
        rng: the random source of the draws.
        fixed: None, [U] or [num, U] int with -1 for a free card and 0..2 for a card pinned to
            that seat (per draw when 2-D; each draw is then uniform given its own pins).

    Returns:
        [num, U] int8 seat indices 0..2.
    """
    cards, sizes, voids, fixed = _check_inputs(cards, sizes, voids, fixed)
    num = int(num)
    if num < 0:
        raise ValueError(f"num must be >= 0, got {num}")
    if fixed is None or fixed.ndim == 1:
        return _sample_free(cards, sizes, voids, fixed, num, rng)
    if fixed.shape[0] != num:
        raise ValueError(f"fixed has {fixed.shape[0]} rows for {num} draws")
    out = np.empty((num, cards.size), dtype=np.int8)
    patterns, which = np.unique(fixed, axis=0, return_inverse=True)
    for i, pattern in enumerate(patterns):
        rows = np.flatnonzero(which.reshape(-1) == i)
        out[rows] = _sample_free(cards, sizes, voids, pattern, rows.size, rng)
    return out


def view_constraints(view: InfoView
                     ) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The sampling problem of a view; ValueError when the view contradicts itself.

    Args:
        view: the deciding seat's information.

    Returns:
        (cards [U] int64 unseen, sizes (3,), voids (3,), others (3,)) where others[j] is the
        seat (view.seat + 1 + j) % 4 and sizes and voids are those seats' hand sizes and
        4-bit void masks.
    """
    others = tuple((view.seat + 1 + j) % 4 for j in range(3))
    hand = view.hand
    played = 0
    for _, card in view.history:
        played |= 1 << card
    if hand & played:
        raise ValueError("the view's hand contains cards already played")
    if bin(hand).count("1") != view.hand_sizes[view.seat]:
        raise ValueError(f"seat {view.seat} holds {bin(hand).count('1')} cards, "
                         f"hand_sizes says {view.hand_sizes[view.seat]}")
    unseen = ((1 << NUM_CARDS) - 1) & ~hand & ~played
    cards = np.array(mask_to_cards(unseen), dtype=np.int64)
    sizes = tuple(view.hand_sizes[s] for s in others)
    voids = tuple(view.voids[s] for s in others)
    return cards, sizes, voids, others


def count_consistent_deals(view: InfoView) -> int:
    """Exact number of deals of the unseen cards to the other seats consistent with `view`'s
    hand sizes and voids."""
    cards, sizes, voids, _ = view_constraints(view)
    return count_assignments(cards, sizes, voids)


def sample_owners(view: InfoView, num_deals: int, rng: np.random.Generator) -> np.ndarray:
    """Deals of the unseen cards, exactly uniform over those consistent with `view`. Raises
    ValueError when no deal is consistent.

    Args:
        view: the deciding seat's information.
        num_deals: how many deals to draw.
        rng: the random source of the draws.

    Returns:
        [num_deals, 52] int8 owner seat of every card per deal: -1 for played cards, view.seat
        for the viewer's hand, another seat for each unseen card.
    """
    cards, sizes, voids, others = view_constraints(view)
    assign = sample_assignment(cards, sizes, voids, num_deals, rng)  # [D, U]
    return assignment_owners(view, cards, others, assign)


def assignment_owners(view: InfoView, cards: np.ndarray, others: Sequence[int],
                      assign: np.ndarray) -> np.ndarray:
    """Whole deals from sampled assignments of the unseen cards.

    Args:
        view: the deciding seat's information.
        cards: [U] the view's unseen cards, as view_constraints returns them.
        others: (3,) the other seats, as view_constraints returns them.
        assign: [D, U] index into `others` of each card's seat, per deal.

    Returns:
        [D, 52] int8 owners: -1 played, view.seat for the viewer's own hand.
    """
    base = np.full(NUM_CARDS, -1, dtype=np.int8)
    base[mask_to_cards(view.hand)] = view.seat
    out = np.tile(base, (assign.shape[0], 1))  # [D, 52]
    out[:, cards] = np.array(others, dtype=np.int8)[assign]
    return out


_CARD_WEIGHTS = 2.0 ** np.arange(NUM_CARDS)  # [52]


def owners_to_hands(owners: npt.ArrayLike) -> np.ndarray:
    """Hands as 52-bit masks from owners [D, 52] (or [52]): returns [D, 4] (or [4]) uint64."""
    owners = np.asarray(owners)
    if owners.shape[-1:] != (NUM_CARDS,) or owners.ndim not in (1, 2):
        raise ValueError(f"owners must have shape [D, 52] or [52], got {owners.shape}")
    flat = owners.reshape(-1, NUM_CARDS)
    onehot = (flat[:, None, :] == np.arange(4)[None, :, None]).astype(np.float64)  # [D, 4, 52]
    # A sum of distinct powers 2^0..2^51 is below 2^52, so float64 holds it exactly.
    hands: np.ndarray = (onehot @ _CARD_WEIGHTS).astype(np.uint64)  # [D, 4]
    return hands[0] if owners.ndim == 1 else hands


def sample_hands(view: InfoView, num_deals: int, rng: np.random.Generator) -> np.ndarray:
    """[num_deals, 4] uint64 hand masks of deals drawn as sample_owners draws them, from the
    same arguments."""
    return owners_to_hands(sample_owners(view, num_deals, rng))
