"""Bayesian (IEC) weighting of sampled deals (scrofazero/sampling/iec.py, nn encode_own_view).

Invariants: only other seats' plays of rank 8+ count (led suit when following, any suit when
leading); the replayed states equal a plain GongzhuState replay of each sampled deal and the
real card is legal in each; the own-view encoding keeps the mover's hand and spreads every card
it cannot see as 1/3 over the other three hands; the batched log weights equal a slow
per-deal, per-play reference for a policy that depends on the deal, in both forms, with one
network call; weights normalise stably; the effective sample size is D for equal weights and 1
for a single deal.
"""


import numpy as np
import pytest
from positions import random_position

from scrofazero.games.gongzhu.batch import StateBatch, legal_mask
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.encoding import encode, encode_own_view
from scrofazero.sampling.iec import (
    IECConfig,
    combine,
    effective_sample_size,
    iec_log_weights,
    relevant_plays,
    replay_states,
)
from scrofazero.sampling.uniform import sample_hands
from scrofazero.settings import check_bounds


def initial_hands(view, hands_now):
    """Reference: the deal at the start, the sampled current hands plus each seat's plays."""
    start = list(hands_now)
    for seat, card in view.history:
        start[seat] |= 1 << card
    return start


@pytest.mark.parametrize("plays", ["relevant", "discards", "all"])
@pytest.mark.parametrize("seed,plies", [(1, 9), (2, 22), (3, 31), (4, 44), (5, 17)])
def test_relevant_plays(seed, plies, plays):
    state = random_position(seed, plies)
    view = state.view(state.current_player)
    got = relevant_plays(view, plays)
    led = view.trick[0] // 13 if view.trick else None
    # Reference: replay the game trick by trick to know each play's led suit.
    ref = GongzhuState.from_hands(initial_hands(view, state.hands), leader=view.first_leader)
    discards = 0
    for t, (seat, card) in enumerate(view.history):
        trick_led = ref.trick[0] // 13 if ref.trick else None
        discard = trick_led is not None and card // 13 != trick_led
        discards += discard and seat != view.seat
        paper = card % 13 >= 6 and (led is None or card // 13 == led)
        wanted = seat != view.seat and (plays == "all" or paper or (plays == "discards"
                                                                     and discard))
        assert (t in got) == wanted
        ref.apply(card)
    if plays == "discards" and plies >= 44:
        assert discards > 0, "the position should hold a discard to check"
    with pytest.raises(ValueError, match="IEC plays"):
        relevant_plays(view, "some")


@pytest.mark.parametrize("seed,plies", [(1, 9), (2, 22), (3, 31), (6, 48)])
def test_replay_matches_reference(seed, plies):
    state = random_position(seed, plies)
    view = state.view(state.current_player)
    hands = sample_hands(view, 4, np.random.default_rng(seed))  # [D, 4]
    plays = list(range(0, len(view.history), 3))
    batch = replay_states(view, hands, plays)
    assert len(batch) == len(plays) * 4
    for i, t in enumerate(plays):
        for d in range(4):
            ref = GongzhuState.from_hands(initial_hands(view, [int(h) for h in hands[d]]),
                                          leader=view.first_leader)
            for _, card in view.history[:t]:
                ref.apply(card)
            row = StateBatch.from_states([ref])
            got = batch.take([i * 4 + d])
            for name in ("hands", "piles", "trick", "trick_len", "leader", "num_played"):
                assert np.array_equal(getattr(got, name), getattr(row, name)), name
            assert view.history[t][1] in ref.legal_actions()


def test_own_view_encoding():
    state = random_position(8, 14)
    batch = StateBatch.from_states([state])
    full, own = encode(batch)[0], encode_own_view(batch)[0]
    assert np.array_equal(own[:52], full[:52])
    assert np.array_equal(own[208:], full[208:])
    union = full[52:208].reshape(3, 52).sum(axis=0)
    for k in range(3):
        assert np.allclose(own[52 + 52 * k: 104 + 52 * k], union / 3)
    assert own[52:208].sum() == pytest.approx(union.sum())


def index_policy(x):
    """A deal-dependent stand-in for the network: logit of card c = c / 10 + 2 x (the mover
    holds c) + x-feature noise from the other hands (fixed pseudo-random projection)."""
    proj = np.random.default_rng(0).normal(size=(x.shape[1], 52)) * 0.3
    return np.arange(52)[None, :] / 10 + 2 * x[:, :52] + x @ proj


@pytest.mark.parametrize("form,plays", [("exp", "relevant"), ("linear", "relevant"),
                                        ("exp", "discards"), ("exp", "all")])
@pytest.mark.parametrize("seed,plies", [(1, 9), (2, 26), (3, 39), (9, 13)])
def test_log_weights_match_slow_reference(form, plays, seed, plies):
    state = random_position(seed, plies)
    view = state.view(state.current_player)
    hands = sample_hands(view, 5, np.random.default_rng(seed))
    cfg = IECConfig(beta_post=0.05, form=form, plays=plays)
    calls = []

    def policy(x):
        calls.append(len(x))
        return index_policy(x)

    got, queries = iec_log_weights(view, hands, policy, cfg)
    plays = relevant_plays(view, plays)
    assert queries == len(plays) * 5 and len(calls) == (1 if plays else 0)
    for d in range(5):
        ref_log = 0.0
        for t in plays:
            ref = GongzhuState.from_hands(initial_hands(view, [int(h) for h in hands[d]]),
                                          leader=view.first_leader)
            for _, card in view.history[:t]:
                ref.apply(card)
            x = encode_own_view(StateBatch.from_states([ref]))
            logits = index_policy(x)[0]
            played = view.history[t][1]
            gap = max(logits[a] for a in ref.legal_actions()) - logits[played]
            regret = gap / 0.2
            if form == "exp":
                ref_log += -0.05 * regret
            else:
                ref_log += np.log(max(0.1, 1 - 0.05 * regret))
        assert got[d] == pytest.approx(ref_log, abs=1e-9)


def test_no_evidence_no_call_and_helpers():
    state = GongzhuState(seed=1)
    view = state.view(state.current_player)
    calls = []
    got, queries = iec_log_weights(view, sample_hands(view, 3, np.random.default_rng(0)),
                                   lambda x: calls.append(1), IECConfig())
    assert np.array_equal(got, np.zeros(3)) and queries == 0 and not calls
    w = combine(np.full(4, 0.25), np.array([-2000.0, -2001.0, -3000.0, -2000.0]))
    assert w.sum() == pytest.approx(1.0) and w[0] == pytest.approx(w[3]) and w[2] < 1e-100
    assert effective_sample_size(np.full(7, 0.3)) == pytest.approx(7)
    assert effective_sample_size(np.array([0, 0, 1.0])) == pytest.approx(1)
    with pytest.raises(ValueError, match="weighting.form='cubic': choose exp or linear"):
        check_bounds(IECConfig(form="cubic"), "weighting")


def test_legal_mask_of_replays_contains_played_cards():
    state = random_position(12, 40)
    view = state.view(state.current_player)
    hands = sample_hands(view, 6, np.random.default_rng(3))
    plays = list(range(len(view.history)))
    legal = legal_mask(replay_states(view, hands, plays))
    cards = np.repeat([view.history[t][1] for t in plays], 6)
    assert legal[np.arange(len(cards)), cards].all()
