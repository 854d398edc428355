"""NetworkEvaluator (scrofazero/nn/evaluator.py): the search's view of the network.

Invariants: values[:, seat] = returns[:, seat] + v for the mover and the mover's partner and
returns[:, seat] - v for both opponents, v = the net's value for the mover's team (so the two
teams' values stay zero-sum); terminal rows get exactly their returns; logits are the net's raw
outputs for the encoded rows; [B, 52] and [B, 4] float32 numpy for B = 0, 1 and many; counters
`calls` and `states` count requests and rows; forced bf16 autocast on CPU stays close to fp32.
"""


import numpy as np
import torch
from positions import random_positions

from scrofazero.games.gongzhu.batch import StateBatch, current_player, is_terminal, returns
from scrofazero.games.gongzhu.scoring import MAX_RETURN
from scrofazero.nn.encoding import encode
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet


class StubNet(torch.nn.Module):
    """Logits = the mover's hand features; value = a different number of points per row."""

    def forward(self, x):
        return 3.0 * x[:, :52], 7.0 * x[:, 208:].sum(dim=1) - 5.0 * x[:, :52].sum(dim=1)


def positions(num_games=12, seed=0):
    return StateBatch.from_states(random_positions(num_games, seed, deal_stride=100))


def test_team_convention_and_terminal_rows():
    batch = positions()
    logits, values = NetworkEvaluator(StubNet())(batch)
    x = torch.from_numpy(encode(batch))
    want_logits, v = (t.numpy() for t in StubNet()(x))
    ret = returns(batch).astype(np.float32)
    mover = current_player(batch)
    rows = np.arange(len(batch))
    live = ~is_terminal(batch)
    assert np.array_equal(logits, want_logits)
    assert np.any(v[live] != 0)
    for k, sign in ((0, 1), (1, -1), (2, 1), (3, -1)):  # mover, next opponent, partner, other
        seat = (mover + k) % 4
        assert np.allclose(values[rows, seat][live], ret[rows, seat][live] + sign * v[live])
    # Team values are zero-sum like returns: each seat's value equals its partner's.
    assert np.allclose(values[:, 0], values[:, 2]) and np.allclose(values[:, 1], -values[:, 0])
    assert live.sum() < len(batch)
    assert np.array_equal(values[~live], ret[~live])


def test_shapes_dtypes_counters_and_small_batches():
    torch.manual_seed(0)
    ev = NetworkEvaluator(PolicyValueNet(hidden=(32,), num_blocks=1))
    batch = positions(2)
    for idx in (np.arange(0), np.arange(1), np.arange(len(batch))):
        logits, values = ev(batch.take(idx))
        assert logits.shape == (len(idx), 52) and values.shape == (len(idx), 4)
        assert logits.dtype == np.float32 and values.dtype == np.float32
        assert isinstance(logits, np.ndarray) and isinstance(values, np.ndarray)
    assert ev.calls == 3 and ev.states == 1 + len(batch)
    assert not ev.amp  # bf16 autocast is on for CUDA only unless forced


def test_matches_plain_forward_and_forced_amp_is_close():
    torch.manual_seed(0)
    model = PolicyValueNet(hidden=(64,), num_blocks=1)
    batch = positions(1)
    with torch.no_grad():
        want_logits, v = model(torch.from_numpy(encode(batch)))
    logits, values = NetworkEvaluator(model)(batch)
    assert np.allclose(logits, want_logits.numpy(), atol=1e-6)
    mover = current_player(batch)
    live = ~is_terminal(batch)
    got_v = values[np.arange(len(batch)), mover] - returns(batch)[np.arange(len(batch)), mover]
    assert np.allclose(got_v[live], v.numpy()[live], atol=1e-4)
    amp_logits, amp_values = NetworkEvaluator(model, amp=True)(batch)
    assert amp_values.dtype == np.float32
    assert np.allclose(amp_logits, logits, atol=0.1) and np.allclose(amp_values, values, atol=2.0)


def test_evaluator_flushes_denormals():
    """Trained weights hold many denormals; the evaluator turns on flush-to-zero (a CPU speed
    fix) so arithmetic on them gives 0 instead of running the slow denormal path."""
    torch.set_flush_denormal(False)
    assert (torch.tensor([1e-40]) * 1.0).item() != 0.0
    NetworkEvaluator(PolicyValueNet(hidden=[8], num_blocks=0))
    if torch.set_flush_denormal(True):  # False where the CPU has no such mode
        assert (torch.tensor([1e-40]) * 1.0).item() == 0.0


class HugeValueNet(torch.nn.Module):
    """Value far outside anything a game can end with (+-5000 points by row parity)."""

    def forward(self, x):
        sign = 1.0 - 2.0 * (torch.arange(len(x)) % 2)
        return torch.zeros(len(x), 52), 5000.0 * sign


def test_values_are_clipped_to_possible_returns():
    batch = positions(num_games=3)
    _, values = NetworkEvaluator(HugeValueNet())(batch)
    live = ~is_terminal(batch)
    assert np.abs(values).max() == MAX_RETURN
    assert np.all(np.abs(values[live]) == MAX_RETURN)  # every live row hit the bound
    assert np.array_equal(values[~live], returns(batch)[~live])  # exact rows untouched
