"""Stratified sampling on important cards (scrofazero/sampling/stratified.py).

Invariants: the important cards follow the situational order of docs/rules.md section 13 (leading
groups gated on the
pig, sheep and doubler being unplayed; the led suit's top cards first when following) and are
always unseen; every consistent placement of them is one stratum, drawn per_stratum times, each
draw consistent with the view and pinning the stratum's placement; stratum probabilities equal
brute-force enumeration of the consistent deals exactly; with exact priors the weighted draws
estimate the uniform marginals of every card (unbiased), while equal priors do not when strata
are unequal; bad arguments raise.
"""

import itertools
import random

import numpy as np
import pytest

from scrofazero.games.gongzhu.cards import card_index
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.sampling.stratified import important_cards, sample_stratified, sample_uniform
from scrofazero.sampling.uniform import view_constraints


def c(*codes):
    return tuple(card_index(x) for x in codes)


def play_random(seed, plies, leader=0):
    state = GongzhuState(seed=seed, leader=leader)
    rng = random.Random(seed)
    for _ in range(plies):
        state.apply(rng.choice(state.legal_actions()))
    return state


def enumerate_deals(view):
    """Every consistent assignment of the unseen cards: list of owner tuples (absolute seats)."""
    cards, sizes, voids, others = view_constraints(view)
    out = []
    for combo in itertools.product(range(3), repeat=len(cards)):
        counts = [combo.count(j) for j in range(3)]
        if counts != list(sizes):
            continue
        if any(voids[j] >> (card // 13) & 1 for card, j in zip(cards, combo)):
            continue
        out.append(tuple(others[j] for j in combo))
    return cards, out


def endgame_view(seed=3, plies=40):
    """A position with 3-4 cards per hand left and (usually) some voids."""
    state = play_random(seed, plies)
    return state, state.view(state.current_player)


def test_important_cards_leading_order():
    # Seat 0 leads trick one holding none of SQ/SA/SK: the pig's group comes first.
    hands = [0] * 4
    deck = list(range(52))
    mine = [card_index(x) for x in "S2 S3 S4 H2 H3 H4 D2 D3 D4 C2 C3 C4 C5".split()]
    rest = [x for x in deck if x not in mine]
    hands[0] = sum(1 << x for x in mine)
    for s in range(1, 4):
        hands[s] = sum(1 << x for x in rest[13 * (s - 1): 13 * s])
    view = GongzhuState.from_hands(hands, leader=0).view(0)
    assert important_cards(view, 3) == c("SQ", "SA", "SK")
    assert important_cards(view, 5) == c("SQ", "SA", "SK", "DJ", "DA")
    assert important_cards(view, 0) == ()


def test_important_cards_skip_own_and_played_and_gate_on_condition():
    state = GongzhuState(seed=11)
    seat = state.current_player
    view = state.view(seat)
    picked = important_cards(view, 20)
    assert all(view.unseen >> x & 1 for x in picked)
    assert len(picked) == len(set(picked))
    # Gate: once SQ is played, SA/SK no longer count (SA, SK unseen but skipped).
    state = play_random(5, 0)
    while not state.is_terminal():
        if card_index("SQ") in [x for _, x in state.history]:
            break
        legal = state.legal_actions()
        pick = card_index("SQ") if card_index("SQ") in legal else legal[0]
        state.apply(pick)
    assert not state.is_terminal() and not state.trick  # SQ fell; a new trick is led
    view = state.view(state.current_player)
    got = important_cards(view, 20)
    assert got and card_index("SA") not in got and card_index("SK") not in got


def test_important_cards_following_led_suit_first():
    # Find a position where a club is led and the follower cannot see C10 or CA.
    for seed in range(200):
        state = play_random(seed, 4 * (seed % 10) + 1)
        if state.trick and state.trick[0] // 13 == 3:
            view = state.view(state.current_player)
            follow = [x for x in c("C10", "CA", "CK", "CQ", "CJ") if view.unseen >> x & 1]
            got = important_cards(view, 2)
            assert list(got) == (follow + [x for x in got if x not in follow])[:2]
            if follow:
                assert got[0] == follow[0]
                return
    pytest.fail("no club-led position found")


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_strata_probabilities_match_enumeration(seed):
    state, view = endgame_view(seed, 40)
    cards, deals = enumerate_deals(view)
    sample = sample_stratified(view, 2, 3, np.random.default_rng(seed))
    pos = [list(cards).index(x) for x in sample.important]
    for s, placement in enumerate(sample.strata):
        n = sum(all(d[p] == seat for p, seat in zip(pos, placement)) for d in deals)
        assert sample.stratum_prob[s] == pytest.approx(n / len(deals), rel=1e-12)
    assert sample.stratum_prob.sum() == pytest.approx(1.0)
    # Every placement some deal allows is a stratum, and no other.
    seen = {tuple(d[p] for p in pos) for d in deals}
    assert seen == {tuple(int(x) for x in row) for row in sample.strata}


def test_draws_are_consistent_and_pinned():
    state, view = endgame_view(7, 28)
    rng = np.random.default_rng(0)
    sample = sample_stratified(view, 2, 4, rng)
    S = len(sample.strata)
    assert np.bincount(sample.stratum, minlength=S).tolist() == [4] * S
    assert sample.owners.shape == (4 * S, 52)
    for d, owners in enumerate(sample.owners):
        hands = [sum(1 << x for x in range(52) if owners[x] == s) for s in range(4)]
        GongzhuState.from_view(view, hands)  # raises if inconsistent with sizes / the deck
        for seat, suit_void in enumerate(view.voids):
            for suit in range(4):
                if suit_void >> suit & 1:
                    assert not any(owners[13 * suit + r] == seat for r in range(13))
        for card, seat in zip(sample.important, sample.strata[sample.stratum[d]]):
            assert owners[card] == seat
    assert sample.weights.sum() == pytest.approx(1.0)


def test_exact_prior_is_unbiased_equal_prior_is_not():
    state, view = endgame_view(2, 36)
    cards, deals = enumerate_deals(view)
    truth = np.zeros((len(cards), 4))
    for d in deals:
        truth[np.arange(len(cards)), d] += 1
    truth /= len(deals)
    rng = np.random.default_rng(1)
    est = {"exact": np.zeros((len(cards), 4)), "equal": np.zeros((len(cards), 4))}
    rounds = 400
    for prior in est:
        for _ in range(rounds):
            sample = sample_stratified(view, 2, 1, rng, stratum_weights=prior)
            owners = sample.owners[:, cards]  # [D, U]
            for seat in range(4):
                est[prior][:, seat] += (sample.weights[:, None] * (owners == seat)).sum(axis=0)
        est[prior] /= rounds
    assert np.abs(est["exact"] - truth).max() < 0.04
    if np.ptp(sample_stratified(view, 2, 1, rng).stratum_prob) > 0.1:
        assert np.abs(est["equal"] - truth).max() > 0.05


def test_uniform_sample_and_errors():
    state = GongzhuState(seed=4)
    view = state.view(0)
    sample = sample_uniform(view, 9, np.random.default_rng(0))
    assert sample.owners.shape == (9, 52) and np.allclose(sample.weights, 1 / 9)
    with pytest.raises(ValueError, match="stratum_weights"):
        sample_stratified(view, 2, 1, np.random.default_rng(0), stratum_weights="bogus")
    with pytest.raises(ValueError, match="per_stratum"):
        sample_stratified(view, 2, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="important"):
        important_cards(view, -1)
    with pytest.raises(ValueError, match="num_deals"):
        sample_uniform(view, 0, np.random.default_rng(0))
    # The first trick from the leader's view: 3 x 3 placements of two cards, all consistent.
    sample = sample_stratified(view, 2, 1, np.random.default_rng(0))
    assert len(sample.strata) == 9 and sample.owners.shape == (9, 52)
