"""Functional batched Gongzhu (StateBatch) against the single-game reference.

Invariants: stepping many random games at mixed plies agrees with GongzhuState after every
move (hands, piles, trick, leader, current player, legal mask, returns, terminal flag); step is
pure (the input batch is unchanged); take/concat keep rows; illegal actions raise naming the row.
"""

import random

import numpy as np
import pytest

from scrofazero.games.gongzhu import batch as F
from scrofazero.games.gongzhu.rules import GongzhuState


def assert_rows_match(batch, states):
    ref = F.StateBatch.from_states(states)
    for field in ("hands", "piles", "trick", "trick_len", "leader", "num_played"):
        assert np.array_equal(getattr(batch, field), getattr(ref, field)), field
    assert np.array_equal(F.current_player(batch), [s.current_player for s in states])
    assert np.array_equal(F.legal_mask(batch), np.stack([s.legal_mask() for s in states]))
    assert np.array_equal(F.returns(batch), [s.returns() for s in states])
    assert np.array_equal(F.is_terminal(batch), [s.is_terminal() for s in states])


def test_random_games_at_mixed_plies_match_reference():
    rng = random.Random(0)
    states = []
    for seed in range(300):
        s = GongzhuState(seed=seed, leader=seed % 4)
        for _ in range(seed % 11):  # start the rows at different plies
            s.apply(rng.choice(s.legal_actions()))
        states.append(s)
    batch = F.StateBatch.from_states(states)
    while not all(s.is_terminal() for s in states):
        live = [i for i, s in enumerate(states) if not s.is_terminal()]
        sub = batch.take(np.array(live))
        actions = [rng.choice(states[i].legal_actions()) for i in live]
        before = sub.hands.copy()
        nxt = F.step(sub, actions)
        assert np.array_equal(sub.hands, before)  # pure
        for i, a in zip(live, actions):
            states[i].apply(a)
        assert_rows_match(nxt, [states[i] for i in live])
        rest = [i for i in range(len(states)) if i not in set(live)]
        order = live + rest
        merged = F.StateBatch.concat([nxt, batch.take(np.array(rest, dtype=int))])
        batch = merged.take(np.argsort(order))
    assert_rows_match(batch, states)


def test_illegal_actions_raise():
    s = GongzhuState(seed=3)
    batch = F.StateBatch.from_states([s, s.clone()])
    legal = s.legal_actions()
    illegal = next(c for c in range(52) if c not in legal)
    with pytest.raises(ValueError, match="row 1"):
        F.step(batch, [legal[0], illegal])
    with pytest.raises(ValueError, match="shape"):
        F.step(batch, [legal[0]])
