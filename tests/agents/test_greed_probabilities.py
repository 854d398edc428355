"""Mr. Greed's play probabilities and the public replay that inference feeds them.

Invariants covered: the per-deal kernel's rows sum to greed_scores_q exactly (first, second and
third to play; every row is the exact score when last to play); a forced card has probability
[1.0]; last to play, the probabilities are exactly uniform over the tied best cards of
greed_scores (a brute-force restatement); off the exact cases the bootstrap estimate matches
the frequencies of MrGreed.act on fixed seeded views, one per trick position and one with an
exact tie; the estimate is a distribution and is reproducible from its rng; an illegal card has
probability 0; views_before_plays equals the replayed engine's views (hand set to 0) at every
ply of seeded games, also from a history that stops inside a trick, and rejects a play out of
turn.
"""

import dataclasses

import numpy as np
import pytest
from positions import random_position, random_positions

from scrofazero.agents.greed_kernel import greed_sample_scores_q, greed_scores_q
from scrofazero.agents.mr_greed import (
    MrGreed,
    _kernel_args,
    greed_scores,
    play_probabilities,
    play_probability,
)
from scrofazero.games.gongzhu.rules import GongzhuState, views_before_plays
from scrofazero.sampling.uniform import sample_owners


def to_move(state: GongzhuState):
    return state.view(state.current_player)


def test_per_deal_rows_sum_to_the_summed_kernel():
    rng = np.random.default_rng(5)
    positions_seen = set()
    for state in random_positions(6, seed=3)[::3]:
        if state.is_terminal():
            continue
        view = to_move(state)
        legal = view.legal_actions()
        args = _kernel_args(view, legal)
        n = len(view.trick)
        owners = sample_owners(view, int(rng.integers(1, 30)), rng)
        rows = greed_sample_scores_q(owners, *args)
        assert rows.shape == (len(owners), len(legal)) and rows.dtype == np.int64
        if n == 3:
            # The deal does not matter to the last seat: each row is the one exact evaluation.
            assert (rows == greed_scores_q(owners[:0], *args)).all()
        else:
            assert (rows.sum(axis=0) == greed_scores_q(owners, *args)).all()
            assert (rows[:1] == greed_scores_q(owners[:1], *args)).all()
        positions_seen.add(n)
    assert positions_seen == {0, 1, 2, 3}


def test_forced_card_is_certain():
    forced = 0
    for state in random_positions(3, seed=1):
        if state.is_terminal() or len(state.legal_actions()) != 1:
            continue
        view = to_move(state)
        legal, probs = play_probabilities(view, rng=np.random.default_rng(0))
        assert legal == view.legal_actions() and probs.tolist() == [1.0]
        assert play_probability(view, legal[0]) == 1.0
        forced += 1
    assert forced >= 10


def test_last_to_play_is_uniform_over_exact_ties():
    checked = tied = 0
    for state in random_positions(24, seed=2):
        if len(state.trick) != 3 or len(state.legal_actions()) < 2:
            continue
        view = to_move(state)
        legal, scores = greed_scores(view)
        best = [c for c, s in zip(legal, scores) if s == max(scores)]
        expected = [1 / len(best) if c in best else 0.0 for c in legal]
        # No rng: the exact case must not sample.
        got_legal, probs = play_probabilities(view, rng=None)
        assert got_legal == legal and probs.tolist() == expected
        checked += 1
        tied += len(best) > 1
    assert checked >= 150 and tied >= 5, (checked, tied)


# (deal seed, plies) of views where Greed's choice is uncertain: leading (5 cards possible),
# second (3 cards), third (3 close cards), third with two cards exactly tied in every deal.
UNCERTAIN = [(16, 8), (8, 9), (34, 22), (15, 30)]


@pytest.mark.parametrize("seed, plies", UNCERTAIN)
def test_estimate_matches_greeds_frequencies(seed, plies):
    view = to_move(random_position(seed, plies))
    legal = view.legal_actions()
    assert len(view.trick) < 3 and len(legal) >= 3
    greed = MrGreed()
    acts = 3000
    plays = [greed.act(view, np.random.default_rng([seed, plies, i])) for i in range(acts)]
    freq = np.array([plays.count(c) for c in legal]) / acts  # [K]
    got_legal, probs = play_probabilities(view, draws=20000, bootstraps=8000,
                                          rng=np.random.default_rng(seed))
    assert got_legal == legal
    assert (probs >= 0).all() and probs.sum() == pytest.approx(1.0)
    # Standard errors for p <= 0.5: frequencies sqrt(0.25 / 3000) = 0.009; bootstrap average
    # sqrt(0.25 / 8000) = 0.006; the finite pool of deals (it fixes the mean score that Greed's
    # 20-deal sums scatter around) up to about 0.4 x sqrt(20 / 20000) = 0.013 on a close call.
    # Together under 0.017, so 0.07 is 4 standard errors.
    assert np.abs(freq - probs).max() < 0.07, (legal, freq.round(3), probs.round(3))
    assert (probs > 0.05).sum() >= 2  # a view where the estimate has something to get right


def test_estimate_is_a_reproducible_distribution():
    view = to_move(random_position(*UNCERTAIN[0]))
    legal, probs = play_probabilities(view, rng=np.random.default_rng(1))
    again = play_probabilities(view, rng=np.random.default_rng(1))[1]
    assert probs.shape == (len(legal),) and (probs == again).all()
    assert (probs >= 0).all() and probs.sum() == pytest.approx(1.0)
    for card, p in zip(legal, probs):
        assert play_probability(view, card, rng=np.random.default_rng(1)) == p
    with pytest.raises(ValueError, match="draws"):
        play_probabilities(view, draws=0)


def test_illegal_card_has_probability_zero():
    view = to_move(random_position(8, 9))  # second to play: must follow the led suit
    legal = view.legal_actions()
    off_suit = [c for c in range(52) if view.hand >> c & 1 and c not in legal]
    not_held = [c for c in range(52) if not view.hand >> c & 1]
    assert off_suit and not_held
    for card in (off_suit[0], not_held[0], view.trick[0]):
        assert play_probability(view, card, rng=np.random.default_rng(0)) == 0.0


def replayed_views(seed: int, plies: int) -> tuple[list, GongzhuState]:
    """The engine's view of the seat to move before each of `plies` seeded random plays (hand
    set to 0), and the state after them."""
    rng = np.random.default_rng(seed)
    state = GongzhuState(seed=seed, leader=seed % 4)
    views = []
    for _ in range(plies):
        views.append(dataclasses.replace(to_move(state), hand=0))
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return views, state


@pytest.mark.parametrize("seed, plies", [(0, 52), (1, 52), (2, 52), (3, 31), (4, 1), (5, 0)])
def test_views_before_plays_replay_the_engine(seed, plies):
    expected, state = replayed_views(seed, plies)
    for seat in range(4):  # only the public fields count: any seat's view gives the same
        assert views_before_plays(state.view(seat)) == expected


def test_views_before_plays_rejects_a_play_out_of_turn():
    view = GongzhuState(seed=0, leader=1).view(0)
    bad = dataclasses.replace(view, history=((2, 5),))
    with pytest.raises(ValueError, match="out of turn"):
        views_before_plays(bad)
