"""Sampling deals from a belief (scrofazero/sampling/belief.py).

Invariants: the dynamic programme's normaliser, marginals and draws equal brute-force
enumeration of the constrained product model on small problems (frequencies within a stated
tolerance); with all weights 1 it is the exact uniform distribution over consistent deals;
calibration recovers weights whose marginals are a reachable target; belief deals from a view
never break a hand size or a shown void, pin each stratum's important cards, weigh strata by the
belief and reproduce from a seed; a zero belief cell of an allowed seat cannot rule a deal out;
a view's holders are 1 for its own hand, 0 for played cards and the calibrated model's marginals
for the unseen cards (each card's row sums to 1, each other seat's column to its hand size, a
shown void gets 0); with `calibrate_above` the fitting applies only while more cards are unseen.
"""

import itertools
from collections import Counter

import numpy as np
import pytest

from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.sampling.belief import (
    calibrate,
    fitted_weights,
    log_partition,
    marginals,
    sample,
    sample_belief,
    view_holders,
    view_weights,
)
from scrofazero.sampling.sampler import Sampler, SamplingConfig
from scrofazero.sampling.stratified import important_cards
from scrofazero.sampling.uniform import count_assignments, view_constraints


def brute(w, sizes):
    """{assignment: probability} and the normaliser of the constrained product model."""
    u = len(w)
    probs = {}
    for combo in itertools.product(range(3), repeat=u):
        if tuple(np.bincount(combo, minlength=3)) != tuple(sizes):
            continue
        p = float(np.prod(w[np.arange(u), combo]))
        if p > 0:
            probs[combo] = p
    total = sum(probs.values())
    return {k: v / total for k, v in probs.items()}, total


@pytest.mark.parametrize("seed,sizes", [(0, (2, 3, 2)), (1, (3, 1, 2)), (2, (0, 3, 3)),
                                         (3, (2, 2, 2))])
def test_dp_matches_enumeration(seed, sizes):
    rng = np.random.default_rng(seed)
    u = sum(sizes)
    w = rng.random((u, 3)) + 0.05
    w[rng.random((u, 3)) < 0.2] = 0.0  # some cards barred from some seats (voids)
    probs, total = brute(w, sizes)
    if not probs:
        assert log_partition(w, sizes) == float("-inf")
        return
    assert log_partition(w, sizes) == pytest.approx(np.log(total), rel=1e-12, abs=1e-12)
    exact = np.zeros((u, 3))
    for combo, p in probs.items():
        exact[np.arange(u), combo] += p
    np.testing.assert_allclose(marginals(w, sizes), exact, atol=1e-12)
    n = 60_000
    draws = sample(w, sizes, n, rng)
    counts = Counter(map(tuple, draws.tolist()))
    assert set(counts) <= set(probs)  # never a deal the constraints forbid
    # Each deal's frequency within 5 standard errors of its probability (a wrong sampler that
    # ignored the weights or the sizes fails by far more).
    for combo, p in probs.items():
        se = np.sqrt(p * (1 - p) / n)
        assert abs(counts.get(combo, 0) / n - p) < 5 * se + 1e-4, combo


def test_weights_one_is_uniform_over_consistent_deals():
    state = GongzhuState(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(38):
        state.apply(int(rng.choice(state.legal_actions())))
    view = state.view(state.current_player)
    cards, sizes, voids, _ = view_constraints(view)
    allowed = np.stack([((voids[j] >> (cards // 13)) & 1) == 0 for j in range(3)], axis=1)
    w = allowed.astype(float)
    assert np.exp(log_partition(w, sizes)) == pytest.approx(
        count_assignments(cards, sizes, voids), rel=1e-9)


def test_calibration_recovers_a_reachable_target():
    rng = np.random.default_rng(5)
    sizes = (4, 3, 5)
    w = rng.random((12, 3)) + 0.1
    w[0, 2] = w[3, 0] = 0.0
    target = marginals(w, sizes)
    fitted = calibrate(target, sizes, iterations=300, tol=1e-10)
    np.testing.assert_allclose(marginals(fitted, sizes), target, atol=1e-6)
    assert fitted[0, 2] == 0 and fitted[3, 0] == 0


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="shape"):
        sample(np.ones((3, 2)), (1, 1, 1), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="summing"):
        sample(np.ones((3, 3)), (1, 1, 2), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="no consistent deal"):
        sample(np.array([[1.0, 0, 0], [1.0, 0, 0]]), (1, 1, 0), 1, np.random.default_rng(0))


def midgame(seed, plies):
    state = GongzhuState(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        state.apply(int(rng.choice(state.legal_actions())))
    return state, state.view(state.current_player)


def random_belief(view, rng):
    b = rng.random((52, 4)) ** 3
    b[:, view.seat] = 0
    return b / b.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("seed", range(6))
def test_belief_deals_are_consistent_and_stratified(seed):
    state, view = midgame(seed, 9 + 6 * seed)
    rng = np.random.default_rng(seed)
    belief = random_belief(view, rng)
    config = SamplingConfig(method="belief_stratified", per_stratum=3)
    deals = Sampler(config).draw(view, rng, belief=belief)
    cards, sizes, voids, others = view_constraints(view)
    for owners in deals.owners:
        for j, seat in enumerate(others):
            held = cards[owners[cards] == seat]
            assert len(held) == sizes[j]
            assert not any(voids[j] >> (c // 13) & 1 for c in held)
        assert np.all(owners[[c for c in range(52) if view.hand >> c & 1]] == view.seat)
    assert deals.important == important_cards(view, 2)
    for d, s in enumerate(deals.stratum):
        assert tuple(deals.owners[d, list(deals.important)]) == tuple(deals.strata[s])
    assert deals.weights.sum() == pytest.approx(1.0)
    again = Sampler(config).draw(view, np.random.default_rng(seed), belief=belief)
    first = Sampler(config).draw(view, np.random.default_rng(seed), belief=belief)
    np.testing.assert_array_equal(again.owners, first.owners)


def test_strata_are_weighted_by_the_belief():
    """A belief sure that the next seat holds the first important card gives that stratum
    almost all the weight, where counting gives it about a third."""
    _, view = midgame(7, 5)
    imp = important_cards(view, 1)
    belief = np.full((52, 4), 1 / 3)
    belief[:, view.seat] = 0
    nxt = (view.seat + 1) % 4
    belief[imp[0]] = 0.001
    belief[imp[0], nxt] = 0.998
    belief[imp[0], view.seat] = 0
    deals = Sampler(SamplingConfig(method="belief_stratified", num_important=1,
                                   per_stratum=1)).draw(view, np.random.default_rng(0),
                                                        belief=belief)
    top = deals.strata[np.argmax(deals.stratum_prob), 0]
    assert top == nxt and deals.stratum_prob.max() > 0.99


def test_plain_belief_draws_are_equally_weighted_and_follow_the_belief():
    _, view = midgame(3, 13)
    rng = np.random.default_rng(1)
    belief = random_belief(view, rng)
    deals = Sampler(SamplingConfig(method="belief", num_deals=7)).draw(view, rng, belief=belief)
    assert deals.owners.shape == (7, 52) and deals.important == ()
    np.testing.assert_allclose(deals.weights, 1 / 7)
    assert all(len(set(o[list(np.flatnonzero(o == view.seat))]) ) == 1 for o in deals.owners)
    # Many draws reproduce the calibrated model's marginals (the belief under the hand sizes).
    many = Sampler(SamplingConfig(method="belief", num_deals=4000)).draw(view, rng,
                                                                         belief=belief)
    cards, sizes, others, weights = view_weights(view, belief)
    expect = marginals(calibrate(weights, sizes), sizes)  # [U, 3]
    for j, seat in enumerate(others):
        freq = (many.owners[:, cards] == seat).mean(axis=0)
        assert np.max(np.abs(freq - expect[:, j])) < 0.04


def test_a_zero_cell_never_rules_out_a_consistent_deal():
    _, view = midgame(2, 20)
    cards, sizes, others, weights = view_weights(view, np.zeros((52, 4)))
    assert np.all(weights[weights > 0] > 0)
    assert np.isfinite(log_partition(weights, sizes))
    with pytest.raises(ValueError, match="belief"):
        view_weights(view, np.zeros((52, 3)))


def test_view_holders_are_the_calibrated_marginals():
    state, view = midgame(1, 23)  # seats 2 and 3 have shown voids
    belief = random_belief(view, np.random.default_rng(2))
    holders = view_holders(view, belief)
    own = [c for c in range(52) if view.hand >> c & 1]
    played = [c for _, c in view.history]
    assert np.all(holders[own, view.seat] == 1) and np.all(holders[own].sum(axis=1) == 1)
    assert np.all(holders[played] == 0)
    cards, sizes, others, weights = view_weights(view, belief)
    np.testing.assert_allclose(holders[np.ix_(cards, others)],
                               marginals(calibrate(weights, sizes), sizes))
    np.testing.assert_allclose(holders[cards].sum(axis=1), 1.0)
    np.testing.assert_allclose(holders[:, list(others)].sum(axis=0), sizes)
    voids = [(seat, suit) for seat in others for suit in range(4) if view.voids[seat] >> suit & 1]
    assert voids
    for seat, suit in voids:  # a shown void holds none of the suit
        assert np.all(holders[13 * suit:13 * suit + 13, seat] == 0)
    plain = view_holders(view, belief, calibrate_iterations=0)
    np.testing.assert_allclose(plain[np.ix_(cards, others)], marginals(weights, sizes))


def test_fitting_applies_only_while_many_cards_are_unseen():
    rng = np.random.default_rng(5)
    w = rng.random((6, 3)) + 0.05
    sizes = (2, 2, 2)
    fitted = calibrate(w, sizes, 20)
    assert not np.allclose(fitted / fitted.sum(axis=1, keepdims=True),
                           w / w.sum(axis=1, keepdims=True))  # so the cases below differ
    np.testing.assert_array_equal(fitted_weights(w, sizes, 20, above=6), w)  # 6 unseen: product
    np.testing.assert_array_equal(fitted_weights(w, sizes, 20, above=5), fitted)
    np.testing.assert_array_equal(fitted_weights(w, sizes, 20, above=0), fitted)
    np.testing.assert_array_equal(fitted_weights(w, sizes, 0, above=0), w)  # never fitted


def test_with_calibrate_above_late_deals_are_the_product_model():
    _, view = midgame(1, 36)  # 12 cards unseen: not more than calibrate_above=15
    belief = random_belief(view, np.random.default_rng(3))
    cards, sizes, others, weights = view_weights(view, belief)
    assert SamplingConfig.calibrate_above == 0 and 0 < len(cards) <= 15
    late = view_holders(view, belief, calibrate_above=15)
    np.testing.assert_allclose(late[np.ix_(cards, others)], marginals(weights, sizes))
    default = view_holders(view, belief)  # fitted at every trick
    np.testing.assert_allclose(default[np.ix_(cards, others)],
                               marginals(calibrate(weights, sizes), sizes))
    assert not np.allclose(default, late)
    draws = [sample_belief(view, belief, (), 50, np.random.default_rng(9), 20, above)[0]
             for above in (15, 0)]
    np.testing.assert_array_equal(
        draws[0], sample_belief(view, belief, (), 50, np.random.default_rng(9), 0)[0])
    assert not np.array_equal(draws[0], draws[1])
