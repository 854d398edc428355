"""The sampler's set DP (fish/belief/set_dp.py `SetDP`) and the tracker's count DP
(fish/belief/fast.py through fish/belief/tracker.py) compute the same thing.

Why two forms: the tracker's count (numba, sparse supports) weighs deals by soft evidence and
ask models and keeps only what the marginals need (a backward pass of rest weights); the
sampler needs hard evidence only and every forward table kept, dense, to draw backwards. Both
push the same items (one per constrained set, grouped by count vector, or a lone card with
forbidden seats) through the seats' capacities and fill the rest from the exchangeable pool.

Invariant: on positions of random games (6 and 8 players, with and without trolling, hidden
counts), SetDP's number of consistent deals equals the tracker's (hard evidence, soft = 0), and
on positions small enough to enumerate, the brute-force count (fish/belief/reference.py).
"""

import math

import pytest
from fish_games import random_game

from scrofazero.fish.belief.reference import enumerate_consistent_deals
from scrofazero.fish.belief.sampling import _Problem
from scrofazero.fish.belief.set_dp import SetDP
from scrofazero.fish.belief.tracker import BeliefTracker

CASES = [(6, {}), (8, {}), (8, {"ask_held_allowed": True}), (8, {"public_counts": False}),
         (6, {"ask_held_allowed": True, "ask_needs_other": False})]


def tracker_at(state, observer: int, k: int) -> BeliefTracker:
    tracker = BeliefTracker(state.num_players, observer, state.initial_hands[observer],
                            ask_held_allowed=state.params.ask_held_allowed,
                            ask_needs_other=state.params.ask_needs_other)
    tracker.extend(state.events[:k])
    return tracker


def set_dp_log_count(tracker: BeliefTracker) -> float:
    dp = SetDP(_Problem(tracker))
    assert dp.run()
    return dp.log_count


@pytest.mark.parametrize("num_players,params", CASES)
def test_set_dp_counts_what_the_tracker_counts(num_players, params):
    checked = 0
    for seed in range(3):
        state = random_game(seed, num_players, **params)
        observer = seed % num_players
        for k in range(len(state.events) // 3, len(state.events), 9):
            tracker = tracker_at(state, observer, k)
            if SetDP(_Problem(tracker)).box > 100_000:
                continue
            assert set_dp_log_count(tracker) == pytest.approx(
                tracker.log_num_consistent_deals(), abs=1e-9), (seed, k)
            checked += 1
    assert checked >= 6


@pytest.mark.parametrize("num_players,params", CASES[:3])
def test_set_dp_counts_the_enumerated_deals(num_players, params):
    checked = 0
    for seed in range(20):
        state = random_game(seed, num_players, **params)
        observer = seed % num_players
        rules = {"ask_held_allowed": state.params.ask_held_allowed,
                 "ask_needs_other": state.params.ask_needs_other}
        for k in range(len(state.events) - 1, 0, -5):
            try:
                deals = enumerate_consistent_deals(num_players, observer,
                                                   state.initial_hands[observer],
                                                   state.events[:k], limit=3000, **rules)
            except ValueError:
                break
            if len(deals) < 2:
                continue
            assert set_dp_log_count(tracker_at(state, observer, k)) == pytest.approx(
                math.log(len(deals)), abs=1e-9), (seed, k)
            checked += 1
        if checked >= 4:
            return
    pytest.fail(f"only {checked} enumerable positions found")


def test_the_count_check_can_fail():
    """A SetDP that ignores failed asks (every free card allowed at every seat) is caught."""
    for seed in range(10):
        state = random_game(seed, 6)
        tracker = tracker_at(state, 0, len(state.events) // 2)
        problem = _Problem(tracker)
        if problem.allowed.all() or SetDP(problem).box > 100_000:
            continue
        problem.allowed[:] = True
        dp = SetDP(problem)
        assert dp.run()
        assert dp.log_count != pytest.approx(tracker.log_num_consistent_deals(), abs=1e-6)
        return
    pytest.fail("no position with a forbidden seat")
