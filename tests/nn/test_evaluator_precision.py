"""NetworkEvaluator.precision (scrofazero/nn/evaluator.py): a bfloat16 evaluator computes what the
float32 one does within bfloat16's rounding, follows every change of the weights (an optimiser
step, load_state_dict) before its next forward, refuses an unknown precision, and self-play
with it plays whole games."""

import numpy as np
import pytest
import torch

from scrofazero.games.gongzhu.batch import StateBatch
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet
from scrofazero.search.mcts import MCTSConfig
from scrofazero.train.selfplay import play_selfplay


def _states(n=24, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for g in range(n):
        s = GongzhuState(seed=g)
        for _ in range(int(rng.integers(0, 40))):
            s.apply(int(rng.choice(s.legal_actions())))
        out.append(s)
    return StateBatch.from_states(out)


def test_bfloat16_is_close_and_follows_the_weights():
    torch.manual_seed(0)
    model = PolicyValueNet([64, 32], 2).eval()
    states = _states()
    full, low = NetworkEvaluator(model), NetworkEvaluator(model, precision="bfloat16")
    (l32, v32), (l16, v16) = full(states), low(states)
    assert l16.dtype == np.float32 and v16.dtype == np.float32
    assert np.allclose(l16, l32, atol=0.05) and np.allclose(v16, v32, atol=0.5)
    assert not np.array_equal(l16, l32)  # it really ran in bfloat16
    # An optimiser step changes the weights in place: the next forward uses them.
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    for p in model.parameters():
        p.grad = 0.05 * torch.randn_like(p)
    optimizer.step()
    (a32, b32), (a16, b16) = full(states), low(states)
    assert not np.allclose(a32, l32, atol=0.05)
    assert np.allclose(a16, a32, atol=0.05) and np.allclose(b16, b32, atol=0.5)
    # load_state_dict too.
    other = PolicyValueNet([64, 32], 2).eval()
    model.load_state_dict(other.state_dict())
    (c32, _), (c16, _) = full(states), low(states)
    assert np.allclose(c16, c32, atol=0.05) and not np.allclose(c32, a32, atol=0.05)
    with pytest.raises(ValueError, match="precision"):
        NetworkEvaluator(model, precision="float16")


def test_selfplay_in_bfloat16_plays_whole_games():
    torch.manual_seed(1)
    evaluator = NetworkEvaluator(PolicyValueNet([64, 32], 1).eval())
    records = play_selfplay(evaluator, 3, np.random.default_rng(0), MCTSConfig(),
                            inference="bfloat16")
    assert evaluator.precision == "bfloat16"
    assert len(records.inputs) > 0 and np.isfinite(records.value_target).all()
    assert records.actions.shape == (3, 52) and (records.actions >= 0).all()  # whole games
