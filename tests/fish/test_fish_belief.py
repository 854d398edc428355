"""Exact Fish belief tracking (scrofazero.games.fish.belief).

Invariants: the DP's card marginals and deal counts equal brute-force enumeration of the
consistent deals (belief_reference) on small late positions of 6- and 8-player engine games,
with and without soft evidence, public counts, wrong calls and the trolling variants; at the
deal the count is the multinomial and every unknown card is uniform; along games every in-play
unknown card's column sums to 1, every row to the seat's hand count, known cards (own hand,
transfers) are exact, called sets are zero, and the true holder always has positive
probability (also on a recorded human game); a failed ask zeroes (target, card) and, without
trolling, (asker, card); the trolling variants accept exactly the asks their rules allow;
relabelling seats within a team or cards within a set relabels the answer; the
behaviour-aware ask model (AskModel) equals enumeration too, and its special cases equal the
hard rules (weight 1) and no evidence (weight 0.5); an impossible event raises a ValueError
naming it and leaves the tracker unchanged.
"""

import math

import numpy as np
import pytest
from fish_games import random_game

from scrofazero.fish.belief.evidence import AskModel
from scrofazero.fish.belief.reference import enumerate_consistent_deals, reference_probabilities
from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.fish.prediction.metric import true_holders
from scrofazero.games.fish.cards import set_cards
from scrofazero.games.fish.events import Ask, Call
from scrofazero.games.fish.rules import FishState, Params


def truth_along(state: FishState):
    """(holders [T + 1][C], hand counts [T + 1][P]) before each event and at the end."""
    holders = np.array(true_holders(state.num_players, state.initial_hands, state.events))
    counts = np.stack([(holders == seat).sum(axis=1) for seat in range(state.num_players)], 1)
    return holders, counts


def tracker_for(state, observer, soft=0.0, **rules):
    return BeliefTracker(state.num_players, observer, state.initial_hands[observer], soft=soft,
                         ask_held_allowed=state.params.ask_held_allowed,
                         ask_needs_other=state.params.ask_needs_other, **rules)


CASES = [  # (num_players, params, soft)
    (8, {}, 0.0), (8, {}, 1.0), (6, {}, 0.0), (6, {}, 0.5),
    (8, {"public_counts": False}, 0.0), (6, {"public_counts": False}, 2.0),
    (8, {"ask_held_allowed": True}, 1.0),
    (8, {"ask_held_allowed": True, "ask_needs_other": False}, 0.0),
    (6, {"ask_held_allowed": True, "ask_needs_other": False}, 1.0),
]


@pytest.mark.parametrize("num_players,params,soft", CASES)
def test_dp_equals_enumeration(num_players, params, soft):
    compare_with_enumeration(num_players, params, soft, None, observer_shift=3, positions=15)


def compare_with_enumeration(num_players, params, soft, model, observer_shift, positions):
    """The tracker's initial marginals and deal count equal brute-force enumeration on
    `positions` small late positions of seeded engine games."""
    compared = 0
    for seed in range(12):
        state = random_game(seed, num_players, **params)
        for observer in (seed % num_players, (seed + observer_shift) % num_players):
            hand = state.initial_hands[observer]
            for k in range(len(state.events) - 1, 0, -4):
                try:
                    deals = enumerate_consistent_deals(num_players, observer, hand,
                                                       state.events[:k], soft=soft, limit=1500,
                                                       model=model, **params_rules(params))
                except ValueError:
                    break  # too many deals for the reference from here back
                tracker = tracker_for(state, observer, soft, model=model)
                tracker.extend(state.events[:k])
                probs, total = reference_probabilities(num_players, deals)
                assert tracker.initial_probabilities() == pytest.approx(probs, abs=1e-9)
                assert tracker.num_consistent_deals() == pytest.approx(total, rel=1e-9)
                compared += 1
                if compared >= positions:
                    return
    pytest.fail(f"only {compared} small positions found")


MODEL_CASES = [  # (num_players, params, soft, AskModel fields)
    (8, {"ask_held_allowed": True, "ask_needs_other": False}, 0.0, (0.9, 0.8, 0.7)),
    (6, {"ask_held_allowed": True, "ask_needs_other": False}, 1.0, (0.97, 0.6, 0.4)),
    (8, {"ask_held_allowed": True}, 0.0, (0.5, 0.9, 0.5)),
    (8, {}, 0.0, (0.5, 0.5, 0.75)),
    (6, {"public_counts": False}, 0.0, (0.5, 0.5, 0.3)),
]


@pytest.mark.parametrize("num_players,params,soft,model", MODEL_CASES)
def test_ask_model_dp_equals_enumeration(num_players, params, soft, model):
    compare_with_enumeration(num_players, params, soft, AskModel(*model), observer_shift=5,
                             positions=12)


def test_ask_model_special_cases():
    """other = 1 is the hard another-card rule, lacks = 1 the hard no-trolling rule, 0.5 the
    absence of the factor; models that differ give different beliefs."""
    loose = {"ask_held_allowed": True, "ask_needs_other": False}
    differ = 0
    for seed in range(6):
        state = random_game(seed, 8, **loose)
        observer = seed % 8
        for k in (len(state.events) // 3, len(state.events) // 2):
            events = state.events[:k]
            def probs(model=None, hand=state.initial_hands[observer], seen=events,
                      observer=observer, **rules):
                tracker = BeliefTracker(8, observer, hand, model=model, **{**loose, **rules})
                tracker.extend(seen)
                return tracker.probabilities()
            plain = probs()
            assert np.allclose(probs(AskModel()), plain, atol=1e-12)
            try:
                hard_other = probs(ask_needs_other=True)
            except ValueError:  # an ask without another card: the hard rule rejects it
                with pytest.raises(ValueError):
                    probs(AskModel(other=1.0))
            else:
                assert np.allclose(probs(AskModel(other=1.0)), hard_other, atol=1e-9)
            try:
                hard_lacks = probs(ask_held_allowed=False, ask_needs_other=True)
            except ValueError:
                pass
            else:
                assert np.allclose(probs(AskModel(other=1.0, lacks=1.0)), hard_lacks, atol=1e-9)
            differ += not np.allclose(probs(AskModel(0.9, 0.9, 0.7)), plain, atol=1e-6)
    assert differ >= 10
    with pytest.raises(ValueError, match="AskModel.target"):
        AskModel(target=1.5)


def params_rules(params):
    return {k: v for k, v in params.items() if k in ("ask_held_allowed", "ask_needs_other")}


def test_start_of_game_is_uniform():
    state = FishState.deal(Params(num_players=8), 3)
    tracker = tracker_for(state, 2)
    assert tracker.num_consistent_deals() == pytest.approx(
        math.factorial(42) / math.factorial(6) ** 7, rel=1e-12)
    probs = tracker.probabilities()
    others = [c for c in range(48) if c not in state.initial_hands[2]]
    assert np.allclose(probs[np.arange(8) != 2][:, others], 1 / 7)
    assert np.array_equal(probs[2] == 1, np.isin(np.arange(48), state.initial_hands[2]))


@pytest.mark.parametrize("num_players,soft", [(8, 0.0), (6, 1.0), (8, 2.0)])
def test_distributions_along_games(num_players, soft):
    for seed in range(3):
        state = random_game(100 + seed, num_players, p_hit=0.4)
        holders, counts = truth_along(state)
        observer = seed % num_players
        tracker = tracker_for(state, observer, soft)
        for k in range(len(state.events) + 1):
            probs = tracker.probabilities()
            truth = np.array(holders[k])
            in_play = truth >= 0
            assert np.allclose(probs[:, in_play].sum(axis=0), 1.0)
            assert np.all(probs[:, ~in_play] == 0)
            assert np.allclose(probs.sum(axis=1), counts[k])
            assert np.allclose(tracker.hand_counts(), counts[k])
            assert np.array_equal(probs[observer] == 1, truth == observer)  # own row exact
            assert np.all(probs[truth[in_play], np.flatnonzero(in_play)] > 0)  # truth possible
            if k < len(state.events):
                event = state.events[k]
                tracker.update(event)
                if isinstance(event, Ask) and event.success:  # a transfer is seen face up
                    assert tracker.certain_holder(event.card) == event.asker


@pytest.mark.parametrize("held_allowed", [False, True])
def test_failed_ask_zeroes_the_right_entries(held_allowed):
    state = FishState.deal(Params(num_players=8, ask_held_allowed=held_allowed), 7)
    target, card = next((t, c) for t, c in state.legal_asks() if state.holder(c) != t
                        and state.holder(c) != state.current_player)
    asker = state.current_player
    event = state.ask(target, card)
    observer = next(s for s in range(8) if s not in (asker, target, state.holder(card)))
    tracker = tracker_for(state, observer)
    before = tracker.probabilities()
    tracker.update(event)
    probs = tracker.probabilities()
    assert probs[target, card] == 0 and before[target, card] > 0
    assert (probs[asker, card] == 0) == (not held_allowed)
    assert np.isclose(probs[:, card].sum(), 1)


def test_trolling_rules():
    # Seat 0 holds card 0 as its only card of set 0 and asks seat 1 for it (the recorded games'
    # rules allow this; the standard ones do not, and say so).
    rest = iter(range(6, 48))
    hands = [[0] + [next(rest) for _ in range(5)]] + [[] for _ in range(7)]
    ask = Ask(0, 1, 0, False)
    with pytest.raises(ValueError, match="the asker held"):
        BeliefTracker(8, 0, hands[0]).update(ask)
    with pytest.raises(ValueError, match="no other card"):
        BeliefTracker(8, 0, hands[0], ask_held_allowed=True).update(ask)
    tracker = BeliefTracker(8, 0, hands[0], ask_held_allowed=True, ask_needs_other=False)
    tracker.update(ask)
    assert tracker.certain_holder(0) == 0
    # the same ask by seat 2 for card 1: it holds card 1 or another card of the set
    tracker.update(Ask(2, 1, 1, False))
    probs = tracker.probabilities()
    assert probs[1, 1] == 0 and probs[2, 1] > probs[3, 1] > 0


def relabel(state, seat_perm, card_perm):
    """Events and hands with seat s -> seat_perm[s], card c -> card_perm[c]."""
    def ev(e):
        if isinstance(e, Ask):
            return Ask(seat_perm[e.asker], seat_perm[e.target], card_perm[e.card], e.success)
        removed = None if e.removed is None else tuple(
            e.removed[seat_perm.index(s)] for s in range(len(seat_perm)))
        assignment = tuple(sorted((card_perm[c], seat_perm[s]) for c, s in e.assignment))
        return Call(seat_perm[e.caller], e.set_id, assignment, e.correct, removed)
    hands = [None] * len(seat_perm)
    for seat, hand in enumerate(state.initial_hands):
        hands[seat_perm[seat]] = tuple(card_perm[c] for c in hand)
    return hands, [ev(e) for e in state.events]


@pytest.mark.parametrize("soft", [0.0, 1.0])
def test_relabelling_seats_and_cards(soft):
    state = random_game(5, 8, p_hit=0.4)
    rng = np.random.default_rng(0)
    seat_perm = [0, 5, 4, 7, 2, 1, 6, 3]  # observer 0 fixed; teams kept
    card_perm = np.concatenate([rng.permutation(list(set_cards(s))) for s in range(8)]).tolist()
    hands, events = relabel(state, seat_perm, card_perm)
    a = BeliefTracker(8, 0, state.initial_hands[0], soft=soft)
    b = BeliefTracker(8, 0, hands[0], soft=soft)
    for k, (e, f) in enumerate(zip(state.events, events)):
        a.update(e)
        b.update(f)
        if k % 5 == 0:
            pa, pb = a.probabilities(), b.probabilities()
            assert np.allclose(pb[np.ix_(seat_perm, card_perm)], pa, atol=1e-12)
            assert a.num_consistent_deals() == pytest.approx(b.num_consistent_deals(), rel=1e-9)


def test_impossible_event_raises_and_keeps_state():
    state = FishState.deal(Params(num_players=8), 11)
    tracker = tracker_for(state, 0)
    mine = state.initial_hands[0][0]
    tracker.update(Ask(1, 2, state.initial_hands[2][0], False))  # seat 0 knows nothing of it
    before, count = tracker.probabilities(), tracker.num_consistent_deals()
    with pytest.raises(ValueError, match=r"impossible event #1 .*seat 3 asked seat 0"):
        tracker.update(Ask(3, 0, mine, False))  # seat 0 holds it: the ask cannot fail
    with pytest.raises(ValueError, match="impossible event #1"):
        tracker.update(Ask(3, 4, mine, True))  # seat 4 cannot hand over seat 0's card
    with pytest.raises(ValueError, match="seats must be"):
        tracker.update(Ask(3, 9, mine, True))
    assert len(tracker.events) == 1 and tracker.num_consistent_deals() == count
    assert np.array_equal(tracker.probabilities(), before)
    clone = tracker.clone()
    clone.update(Ask(3, 0, mine, True))
    assert tracker.certain_holder(mine) == 0 and clone.certain_holder(mine) == 3


def test_deduction_makes_a_card_certain():
    # Card 0 is with seat 7; seats 1, 3, 5 ask for it (each holds another card of its set) and
    # fail against 2, 4, 6: no trolling leaves only seat 7 for observer 0, by deduction alone.
    first = {7: [0], 1: [1], 3: [2], 5: [3], 2: [4], 4: [5]}
    rest = iter(range(6, 48))
    hands = [first.get(s, []) + [next(rest) for _ in range(6 - len(first.get(s, [])))]
             for s in range(8)]
    tracker = BeliefTracker(8, 0, hands[0])
    for asker, target in ((1, 2), (3, 4), (5, 6)):
        assert tracker.certain_holder(0) is None and not tracker.known(0)
        tracker.update(Ask(asker, target, 0, False))
    assert tracker.certain_holder(0) == 7 and tracker.known(0)
    assert tracker.probabilities()[7, 0] == pytest.approx(1.0, abs=1e-12)


def test_recorded_game_keeps_the_truth_possible():
    from scrofazero.fish.prediction.metric import load_recordings

    game = next(g for g in load_recordings()[0] if g.num_players == 6)
    for observer in (0, 3):
        tracker = BeliefTracker(6, observer, game.hands[observer],
                                ask_held_allowed=game.ask_held_allowed,
                                ask_needs_other=game.ask_needs_other)
        for t, event in enumerate(game.events):
            truth = np.array(game.holders[t])
            in_play = np.flatnonzero(truth >= 0)
            assert np.all(tracker.probabilities()[truth[in_play], in_play] > 0)
            tracker.update(event)
