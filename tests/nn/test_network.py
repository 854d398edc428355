"""Policy-value network (scrofazero/nn/network.py).

Invariants: the paper shape (434 -> 2048 -> 2048 -> 512, 10 residual blocks) has ~11.4 M
parameters; outputs are logits [B, 52] and value [B] float32; masked_log_softmax gives illegal
actions probability exactly 0 and legal ones sum 1 even when illegal logits are huge (masking
before the softmax); a small net fits a tiny exactly labelled set; config()/from_config() plus
the state_dict rebuild a net with identical outputs; residual blocks add their input.
"""

import pytest
import torch

from scrofazero.nn.network import (
    PolicyValueNet,
    ResidualBlock,
    masked_log_softmax,
    num_parameters,
)

SMALL = dict(hidden=(64, 32), num_blocks=2)


def test_paper_shape_parameter_count():
    model = PolicyValueNet()
    n = num_parameters(model)
    assert abs(n - 11.4e6) / 11.4e6 < 0.02, n
    assert model.config() == {
        "hidden": [2048, 2048, 512], "num_blocks": 10, "input_size": 434,
        "num_actions": 52, "value_scale": 10.0,
    }
    assert sum(isinstance(m, ResidualBlock) for m in model.modules()) == 10


def test_output_shapes_and_dtypes():
    torch.manual_seed(0)
    model = PolicyValueNet(**SMALL)
    logits, value = model(torch.rand(7, 434))
    assert logits.shape == (7, 52) and value.shape == (7,)
    assert logits.dtype == torch.float32 and value.dtype == torch.float32
    logits, value = model(torch.rand(0, 434))
    assert logits.shape == (0, 52) and value.shape == (0,)


def test_value_is_scaled_head_output():
    torch.manual_seed(0)
    model = PolicyValueNet(**SMALL, value_scale=100.0)
    x = torch.rand(5, 434)
    raw = model.value_head(model.trunk(x)).squeeze(-1)
    assert torch.allclose(model(x)[1], 100.0 * raw)


def test_residual_block_adds_input():
    block = ResidualBlock(8)
    for p in block.fc2.parameters():
        torch.nn.init.zeros_(p)
    x = torch.randn(4, 8)
    assert torch.equal(block(x), torch.relu(x))  # zero branch: relu(x + 0)


def test_masked_log_softmax_masks_before_softmax():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(64, 52, generator=gen) * 5
    legal = torch.rand(64, 52, generator=gen) < 0.3
    legal[:, 7] = True  # at least one legal action per row
    logits[~legal] = 1e4  # huge illegal logits must not leak into the legal distribution
    probs = masked_log_softmax(logits, legal).exp()
    assert torch.all(probs[~legal] == 0)
    assert torch.allclose(probs.sum(dim=1), torch.ones(64), atol=1e-6)
    expected = torch.softmax(logits.masked_fill(~legal, -torch.inf), dim=1)
    assert torch.allclose(probs, expected)
    # bf16 logits (autocast) come back as float32 log-probs
    assert masked_log_softmax(logits.bfloat16(), legal).dtype == torch.float32


@pytest.fixture
def one_thread():
    # Tiny matrices gain nothing from threads, and on a busy 2-core machine OpenMP spinning
    # made this test 20x slower; restore the setting for the other tests.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_fits_tiny_labelled_set(one_thread):
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    x = (torch.rand(64, 434, generator=gen) < 0.3).float()
    legal = torch.rand(64, 52, generator=gen) < 0.4
    legal[:, 0] = True
    target = torch.softmax(torch.randn(64, 52, generator=gen) * 2, dim=1)
    target = target * legal
    target = target / target.sum(dim=1, keepdim=True)  # [64, 52] zero on illegal actions
    value_target = torch.randn(64, generator=gen) * 80  # points
    model = PolicyValueNet(hidden=(128,), num_blocks=1)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(200):
        logits, value = model(x)
        logp = masked_log_softmax(logits, legal)
        kl = (target * (torch.log(target.clamp_min(1e-30)) - logp)).where(legal, 0).sum(1).mean()
        value_loss = (((value - value_target) / 10.0) ** 2).mean()
        loss = kl + 0.1 * value_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        logits, value = model(x)
        kl = (target * (torch.log(target.clamp_min(1e-30)) - masked_log_softmax(logits, legal)))
        kl = kl.where(legal, 0).sum(1).mean()
    assert kl < 0.02, float(kl)
    assert (value - value_target).abs().max() < 5.0, float((value - value_target).abs().max())


def test_from_config_round_trip():
    torch.manual_seed(0)
    model = PolicyValueNet(hidden=(48,), num_blocks=1, value_scale=50.0)
    clone = PolicyValueNet.from_config(model.config())
    clone.load_state_dict(model.state_dict())
    x = torch.rand(9, 434)
    for a, b in zip(model(x), clone(x)):
        assert torch.equal(a, b)
    assert clone.config() == model.config()


def test_rejects_bad_shapes():
    with pytest.raises(ValueError):
        PolicyValueNet(hidden=())
    with pytest.raises(ValueError):
        PolicyValueNet(num_blocks=-1)
    with pytest.raises(TypeError):
        PolicyValueNet.from_config({"hidden": [8], "depth": 3})
