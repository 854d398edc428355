"""Tests of the exactly uniform hidden-hand sampler (scrofazero/sampling/uniform.py).

Invariants covered:
- every sampled deal respects the view: played cards -1, own cards at the viewer, each other
  seat gets exactly its hand size, never a card of a suit it is void in, pinned cards stay put;
  owners_to_hands agrees with the owners and GongzhuState.from_view accepts the hands;
- exact uniformity: on end-games small enough to enumerate by brute force, the exact count
  equals the enumeration and a chi-square test against uniform over the enumerated deals passes;
- the chi-square test has power: a sampler uniform over suit-count tables (not deals) fails it;
- card-by-seat marginals on a mid-game view with voids match a slow rejection sampler;
- the same seed gives the same deals; impossible constraints raise a ValueError saying so.
"""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from scipy.stats import chisquare

from scrofazero.games.gongzhu.cards import card_index, mask_to_cards
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.sampling.uniform import (
    count_assignments,
    count_consistent_deals,
    owners_to_hands,
    sample_assignment,
    sample_hands,
    sample_owners,
)

P_MIN = 1e-3  # seeded tests: the fixed draws must not look non-uniform at this level


def play_random(seed: int, num_played: int) -> GongzhuState:
    rng = np.random.default_rng(seed)
    state = GongzhuState(seed=seed)
    for _ in range(num_played):
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return state


def brute_force(cards, sizes, voids, fixed=None) -> np.ndarray:
    """Every consistent assignment of cards [U] to seats 0..2, as rows [N, U] (plain loops)."""
    rows = []
    for assign in itertools.product(range(3), repeat=len(cards)):
        if any(assign.count(j) != sizes[j] for j in range(3)):
            continue
        if any(voids[j] >> (card // 13) & 1 for card, j in zip(cards, assign)):
            continue
        if fixed is not None and any(f >= 0 and f != j for f, j in zip(fixed, assign)):
            continue
        rows.append(assign)
    return np.array(rows, dtype=np.int64).reshape(len(rows), len(cards))


def codes(rows: np.ndarray) -> np.ndarray:
    """Base-3 code of each assignment row [N, U] -> [N]."""
    return np.asarray(rows, dtype=np.int64) @ (3 ** np.arange(rows.shape[1], dtype=np.int64))


def uniformity_pvalue(draws: np.ndarray, support: np.ndarray) -> float:
    """Chi-square p-value of draws [N, U] against uniform over support [M, U]; every draw must
    lie in the support."""
    support_codes = np.sort(codes(support))
    drawn = codes(draws)
    where = np.searchsorted(support_codes, drawn)
    assert np.all(support_codes[np.minimum(where, len(support_codes) - 1)] == drawn), \
        "a draw outside the consistent deals"
    observed = np.bincount(where, minlength=len(support_codes))
    return chisquare(observed).pvalue


def view_assignments(view, owners: np.ndarray):
    """The unseen cards [U] of a view and the draws as indices 0..2 into the other seats."""
    cards = np.array(mask_to_cards(view.unseen))
    return cards, (owners[:, cards].astype(np.int64) - view.seat - 1) % 4


def view_problem(view):
    others = [(view.seat + 1 + j) % 4 for j in range(3)]
    return ([view.hand_sizes[s] for s in others], [view.voids[s] for s in others])


# --- a small hand-built problem: 9 cards, seat 0 void in hearts, seat 1 void in spades ------
SMALL_CARDS = [card_index(c) for c in "S2 S3 S4 H2 H3 H4 D2 D3 C2".split()]
SMALL_SIZES = (3, 3, 3)
SMALL_VOIDS = (0b0010, 0b0001, 0)


def test_constraints_hold_on_random_mid_game_views():
    rng = np.random.default_rng(7)
    for seed in range(60):
        # Depths 0..52 with the first and last seeds at the very start and end of a game.
        depth = 0 if seed == 0 else 52 if seed == 59 else int(rng.integers(0, 53))
        state = play_random(seed, depth)
        view = state.view(int(rng.integers(4)))
        owners = sample_owners(view, 25, rng)
        assert owners.shape == (25, 52) and owners.dtype == np.int8
        played = [c for _, c in view.history]
        assert np.all(owners[:, played] == -1)
        assert np.all(owners[:, mask_to_cards(view.hand)] == view.seat)
        hands = owners_to_hands(owners)
        for d in range(25):
            for seat in range(4):
                held = np.flatnonzero(owners[d] == seat)
                assert len(held) == view.hand_sizes[seat]
                if seat != view.seat:
                    assert not any(view.voids[seat] >> (c // 13) & 1 for c in held)
                assert int(hands[d, seat]) == sum(1 << int(c) for c in held)
            GongzhuState.from_view(view, [int(h) for h in hands[d]])


def test_pinned_cards_stay_with_their_seat():
    rng = np.random.default_rng(3)
    fixed = np.full((400, len(SMALL_CARDS)), -1)
    fixed[:200, 0] = 0  # S2 pinned to seat 0 in half the draws
    fixed[200:, 6] = 1  # D2 pinned to seat 1 in the other half
    draws = sample_assignment(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS, 400, rng, fixed=fixed)
    assert np.all(draws[:200, 0] == 0) and np.all(draws[200:, 6] == 1)
    support = brute_force(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS)
    assert np.isin(codes(draws), codes(support)).all()


def test_small_problem_count_and_uniformity():
    support = brute_force(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS)
    assert count_assignments(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS) == len(support)
    draws = sample_assignment(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS, 30000,
                              np.random.default_rng(11))
    assert uniformity_pvalue(draws, support) > P_MIN


def test_uniformity_with_a_pinned_card():
    fixed = [-1, -1, 2, -1, -1, -1, -1, 0, -1]  # S4 to seat 2, D3 to seat 0
    support = brute_force(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS, fixed)
    assert count_assignments(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS, fixed) == len(support)
    draws = sample_assignment(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS, 20000,
                              np.random.default_rng(12), fixed=np.array(fixed))
    assert uniformity_pvalue(draws, support) > P_MIN


def wrong_table_uniform_sampler(support, cards, num, rng):
    """The documented mistake: a suit-count table uniformly, then a deal inside it."""
    suits = np.array(cards) // 13
    tables = [tuple(np.sum((row == j) & (suits == s)) for j in range(3) for s in range(4))
              for row in support]
    by_table: dict[tuple, list[int]] = {}
    for i, table in enumerate(tables):
        by_table.setdefault(table, []).append(i)
    groups = list(by_table.values())
    picks = [groups[k][rng.integers(len(groups[k]))] for k in rng.integers(len(groups), size=num)]
    return support[picks]


def test_chi_square_rejects_uniform_over_tables():
    support = brute_force(SMALL_CARDS, SMALL_SIZES, SMALL_VOIDS)
    rng = np.random.default_rng(13)
    draws = wrong_table_uniform_sampler(support, SMALL_CARDS, 30000, rng)
    assert uniformity_pvalue(draws, support) < 1e-6


def end_game_views():
    """One end-game view (6-9 unseen cards) per depth 40..43, so with different hand sizes,
    where voids rule out some but not all deals; distinct problems, deterministic."""
    found: dict[int, tuple] = {}
    problems = set()
    for seed in range(200):
        for depth in (40, 41, 42, 43):
            state = play_random(seed, depth)
            for seat in range(4):
                view = state.view(seat)
                cards = mask_to_cards(view.unseen)
                sizes, voids = view_problem(view)
                key = (tuple(cards), tuple(sizes), tuple(voids))
                if depth in found or key in problems or not 6 <= len(cards) <= 9 or not any(voids):
                    continue
                support = brute_force(cards, sizes, voids)
                unconstrained = brute_force(cards, sizes, (0, 0, 0))
                if 30 <= len(support) < len(unconstrained):
                    found[depth] = (view, support)
                    problems.add(key)
        if len(found) == 4:
            break
    return list(found.values())


def test_end_game_views_count_and_uniformity():
    views = end_game_views()
    assert len(views) == 4
    for i, (view, support) in enumerate(views):
        assert count_consistent_deals(view) == len(support)
        owners = sample_owners(view, 25 * len(support), np.random.default_rng(100 + i))
        _, draws = view_assignments(view, owners)
        assert uniformity_pvalue(draws, support) > P_MIN


def rejection_owners(view, num, rng):
    """Slow, obviously right reference: shuffle the unseen cards into the hand sizes, keep
    deals where nobody holds a suit it is void in. Returns [num, U] seat indices 0..2."""
    cards = np.array(mask_to_cards(view.unseen))
    sizes, voids = view_problem(view)
    seat_of_slot = np.repeat([0, 1, 2], sizes)  # [U]
    kept = []
    while sum(len(k) for k in kept) < num:
        slots = np.argsort(rng.random((20000, len(cards))), axis=1)  # card i -> slot
        seats = seat_of_slot[slots]  # [B, U]
        void_hit = (np.array(voids)[seats] >> (cards // 13)) & 1
        kept.append(seats[~void_hit.any(axis=1)])
    return np.concatenate(kept)[:num]


def test_marginals_match_rejection_sampling():
    view = play_random(1, 26).view(2)
    sizes, voids = view_problem(view)
    # Two seats void in different suits: the deal counts per suit-count table differ.
    assert len({v for v in voids if v}) >= 2, "the fixed game no longer shows two void patterns"
    num = 20000
    _, fast = view_assignments(view, sample_owners(view, num, np.random.default_rng(21)))
    slow = rejection_owners(view, num, np.random.default_rng(22))
    for j in range(3):
        p_fast, p_slow = (fast == j).mean(axis=0), (slow == j).mean(axis=0)  # [U]
        pooled = (p_fast + p_slow) / 2
        se = np.sqrt(pooled * (1 - pooled) * 2 / num) + 1e-12
        assert np.max(np.abs(p_fast - p_slow) / se) < 4.5
        # Void suits get probability exactly 0 in both.
        assert np.array_equal(p_fast == 0, p_slow == 0)


def test_same_seed_same_deals():
    view = play_random(9, 21).view(2)
    a = sample_owners(view, 50, np.random.default_rng(4))
    b = sample_owners(view, 50, np.random.default_rng(4))
    c = sample_owners(view, 50, np.random.default_rng(5))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert np.array_equal(sample_hands(view, 50, np.random.default_rng(4)), owners_to_hands(a))
    assert sample_owners(view, 0, np.random.default_rng(4)).shape == (0, 52)


def test_inconsistent_constraints_raise():
    rng = np.random.default_rng(0)
    view = play_random(2, 10).view(0)
    unseen_suit = mask_to_cards(view.unseen)[0] // 13
    everyone_void = tuple(
        v if s == view.seat else v | 1 << unseen_suit for s, v in enumerate(view.voids)
    )
    bad_view = dataclasses.replace(view, voids=everyone_void)
    assert count_consistent_deals(bad_view) == 0
    with pytest.raises(ValueError, match="no consistent deal"):
        sample_owners(bad_view, 5, rng)
    # Seat 0 may only hold the two spades but must take three cards.
    cards = [card_index(c) for c in "S2 S3 H2 H3".split()]
    assert count_assignments(cards, (3, 1, 0), (0b0010, 0, 0)) == 0
    with pytest.raises(ValueError, match="no consistent deal"):
        sample_assignment(cards, (3, 1, 0), (0b0010, 0, 0), 5, rng)
    with pytest.raises(ValueError, match="no consistent deal.*sum to"):
        sample_assignment(cards, (2, 1, 0), (0, 0, 0), 5, rng)
    with pytest.raises(ValueError, match="no consistent deal.*pinned"):
        sample_assignment(cards, (2, 1, 1), (0b0010, 0, 0), 5, rng, fixed=[-1, -1, 0, -1])
    with pytest.raises(ValueError, match="voids"):
        sample_assignment(cards, (2, 1, 1), (16, 0, 0), 5, rng)
    with pytest.raises(ValueError, match="repeat"):
        sample_assignment([0, 0, 1, 2], (2, 1, 1), (0, 0, 0), 5, rng)
