"""Growing a network (nn/grow.py): the grown network computes what the old one did, its new
weights learn, and a shape that cannot be grown into is refused by name."""

import pytest
import torch

from scrofazero.nn.grow import check_growth, grow
from scrofazero.nn.network import PolicyValueNet


def _trained_like(hidden, blocks, seed=0):
    """A network whose weights are all non-zero and not at their init scale (so a copy that
    dropped or misplaced any block of weights shows in the outputs)."""
    torch.manual_seed(seed)
    net = PolicyValueNet(hidden=hidden, num_blocks=blocks)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return net.eval()


def _inputs(n=256, seed=1):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(n, 434, generator=g) < 0.15).float()


@pytest.mark.parametrize("hidden, blocks", [
    ([64, 32], 2),            # same shape: a copy
    ([96, 48], 2),            # wider trunk and stream
    ([64, 32], 4),            # deeper: two appended blocks
    ([128, 64, 32], 3),       # an inserted trunk layer, appended block
    ([80, 100, 120, 40], 2),  # two inserted layers, each wider than the units it passes on
])
def test_grown_network_computes_the_same(hidden, blocks):
    old = _trained_like([64, 32], 2)
    new = grow(old, hidden, blocks, generator=torch.Generator().manual_seed(0))
    assert new.config()["hidden"] == hidden and new.num_blocks == blocks
    x = _inputs()
    with torch.no_grad():
        (lo, vo), (ln, vn) = old(x), new(x)
    assert torch.allclose(lo, ln, atol=1e-5)
    assert torch.allclose(vo, vn, atol=1e-4)
    # ... while the new units are live (random, non-zero), not a padded copy of the old network.
    def nonzero(net) -> int:
        return sum(int((p != 0).sum()) for p in net.parameters())

    assert (hidden, blocks) == ([64, 32], 2) or nonzero(new) > nonzero(old)


def test_every_new_weight_learns():
    old = _trained_like([64, 32], 2)
    new = grow(old, [128, 64, 48], 3, generator=torch.Generator().manual_seed(0)).train()
    opt = torch.optim.SGD(new.parameters(), lr=1e-2)

    def backward():
        opt.zero_grad()
        logits, value = new(_inputs(64))
        (logits.logsumexp(1).mean() + value.pow(2).mean()).backward()

    backward()
    # The zero weights from new units into old ones (heads included) get gradients at once...
    assert new.policy_head.weight.grad[:, 32:].abs().sum() > 0
    assert new.value_head.weight.grad[:, 32:].abs().sum() > 0
    # ... and once they have moved, every weight does (an appended block's first layer waits
    # one step for the zero layer after it, as a zero-initialised residual branch does).
    opt.step()
    backward()
    for name, p in new.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_same_seed_same_network_and_old_one_untouched():
    old = _trained_like([64, 32], 2)
    before = {k: v.clone() for k, v in old.state_dict().items()}
    a = grow(old, [96, 48], 3, generator=torch.Generator().manual_seed(5))
    b = grow(old, [96, 48], 3, generator=torch.Generator().manual_seed(5))
    c = grow(old, [96, 48], 3, generator=torch.Generator().manual_seed(6))
    assert all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())
    assert not all(torch.equal(a.state_dict()[k], c.state_dict()[k]) for k in a.state_dict())
    assert all(torch.equal(before[k], v) for k, v in old.state_dict().items())


@pytest.mark.parametrize("hidden, blocks, named", [
    ([48, 32], 2, "trunk layer 0 width 48 < the old 64"),
    ([64, 16], 2, "trunk layer 1 width 16 < the old 32"),
    ([64, 32], 1, "1 residual blocks < the network's 2"),
    ([64], 2, "1 trunk layers < the network's 2"),
    ([64, 40, 32], 2, "inserted trunk layer 1 width 40 < the 64 units it passes on"),
])
def test_shapes_that_cannot_be_grown_into_are_named(hidden, blocks, named):
    with pytest.raises(ValueError, match="cannot grow") as err:
        check_growth([64, 32], 2, hidden, blocks)
    assert named in str(err.value)


def test_auxiliary_heads_are_grown_or_added():
    torch.manual_seed(0)
    old = PolicyValueNet(hidden=[64, 32], num_blocks=1, aux=True).eval()
    new = grow(old, [96, 48], 2)
    x = _inputs(32)
    with torch.no_grad():
        for a, b in zip(old.forward_aux(x), new.forward_aux(x)):
            assert torch.allclose(a, b, atol=1e-4)
    plain = _trained_like([64, 32], 1)
    added = grow(plain, [64, 32], 1, aux=True)
    with torch.no_grad():
        assert torch.allclose(added(x)[1], plain(x)[1], atol=1e-4)
        assert added.forward_aux(x)[3].shape == (32, 16, 4)
    with pytest.raises(ValueError, match="no auxiliary heads"):
        plain.forward_aux(x)
