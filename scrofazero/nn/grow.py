"""Growing a trained network into a bigger shape without changing what it computes.

`grow(model, hidden, num_blocks)` returns a PolicyValueNet of the new shape whose outputs equal
the old network's on every input (up to float rounding), so training continues from the small
network's knowledge with the capacity of the big one. The rule that makes it exact: every unit
of the old network keeps its weights, and **no old unit reads a new one** (those weights start at
zero); new units read everything through fresh random weights, so they carry signal from the
first step and the zero weights out of them get gradients and grow. Concretely:

- a widened layer keeps its old block, zeros from new inputs to old outputs, random new rows;
- a trunk layer inserted before the last one starts as the identity on the previous layer's
  units (their values are >= 0, outputs of a ReLU, so ReLU(x) = x) plus random new units;
- a residual block appended after the old ones has zero weights into the old stream units, so
  on them it adds 0 and ReLU(x + 0) = x;
- the heads read the new stream units through zero weights.

Old trunk layers map to the new ones by position, except that the old last layer maps to the
new last layer; a new shape that is narrower anywhere, or has fewer layers or blocks, is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from scrofazero.nn.encoding import INPUT_SIZE
from scrofazero.nn.network import PolicyValueNet, ResidualBlock


def check_growth(old_hidden: Sequence[int], old_blocks: int, hidden: Sequence[int],
                 num_blocks: int, input_size: int = INPUT_SIZE) -> None:
    """Raise a ValueError naming why shape (old_hidden, old_blocks) cannot grow into
    (hidden, num_blocks); return quietly when it can.

    Args:
        old_hidden: the trained network's trunk widths.
        old_blocks: its residual blocks.
        hidden: the new trunk widths.
        num_blocks: the new number of residual blocks.
        input_size: input features of both.
    """
    old_h, new_h = [int(w) for w in old_hidden], [int(w) for w in hidden]
    problems = []
    if len(new_h) < len(old_h):
        problems.append(f"{len(new_h)} trunk layers < the network's {len(old_h)}")
    else:
        # Old layer i -> new layer i (i < last), old last -> new last.
        targets = list(range(len(old_h) - 1)) + [len(new_h) - 1]
        for i, j in enumerate(targets):
            if new_h[j] < old_h[i]:
                problems.append(f"trunk layer {j} width {new_h[j]} < the old {old_h[i]}")
        # An inserted layer must pass on the old values it reads.
        passed = ([input_size] + old_h)[len(old_h) - 1]
        for j in range(len(old_h) - 1, len(new_h) - 1):
            if new_h[j] < passed:
                problems.append(f"inserted trunk layer {j} width {new_h[j]} < the {passed} "
                                "units it passes on")
    if num_blocks < old_blocks:
        problems.append(f"{num_blocks} residual blocks < the network's {old_blocks}")
    if problems:
        raise ValueError(
            f"cannot grow hidden={old_h}, num_blocks={old_blocks} into hidden={new_h}, "
            f"num_blocks={num_blocks}: " + "; ".join(problems))


@torch.no_grad()
def _copy_into(new: nn.Linear, old_weight: torch.Tensor, old_bias: torch.Tensor) -> None:
    """new keeps its random init except: rows of old outputs = old weights on old inputs and 0
    on new inputs, old biases."""
    out_old, in_old = old_weight.shape
    new.weight[:out_old, :] = 0.0
    new.weight[:out_old, :in_old] = old_weight
    new.bias[:out_old] = old_bias


@torch.no_grad()
def _zero_old_rows(new: nn.Linear, out_old: int) -> None:
    new.weight[:out_old, :] = 0.0
    new.bias[:out_old] = 0.0


@torch.no_grad()
def _identity_into(new: nn.Linear, width_in: int) -> None:
    """Rows of the first `width_in` outputs = identity on the first `width_in` inputs."""
    _zero_old_rows(new, width_in)
    new.weight[:width_in, :width_in] = torch.eye(width_in, dtype=new.weight.dtype)


def _linears(trunk: nn.Sequential) -> list[nn.Linear]:
    return [m for m in trunk if isinstance(m, nn.Linear)]


def _blocks(model: PolicyValueNet) -> list[ResidualBlock]:
    return [m for m in model.trunk if isinstance(m, ResidualBlock)]  # the rest: Linear, ReLU


def grow(model: PolicyValueNet, hidden: Sequence[int], num_blocks: int,
         generator: torch.Generator | None = None, aux: bool | None = None) -> PolicyValueNet:
    """A new network of shape (hidden, num_blocks) computing what `model` computes.

    New weights are drawn with torch's default Linear init. The input size, actions and value
    scale are kept. `model` is not changed. ValueError names what cannot be grown (a narrower
    layer, fewer layers or blocks).

    Args:
        model: the trained network.
        hidden: the new trunk widths: at least as many layers, none narrower than the layer it
            grows from (check_growth).
        num_blocks: the new number of residual blocks, at least the old number.
        generator: seeds the new weights (a fixed seed gives the same grown network); None:
            torch's global generator.
        aux: give the new network auxiliary heads (None: as `model`); heads it had are grown
            like the others, new ones start random (they do not change the policy or the value).

    Returns:
        The grown PolicyValueNet, on `model`'s device and in its training mode.
    """
    check_growth(model.hidden, model.num_blocks, hidden, num_blocks, model.input_size)
    if generator is not None:
        state = torch.random.get_rng_state()
        torch.manual_seed(int(torch.randint(0, 2**62, (1,), generator=generator)))
    try:
        new = PolicyValueNet(hidden=hidden, num_blocks=num_blocks, input_size=model.input_size,
                             num_actions=model.num_actions, value_scale=model.value_scale,
                             aux=model.aux if aux is None else aux)
    finally:
        if generator is not None:
            torch.random.set_rng_state(state)
    new = new.to(next(model.parameters()).device)
    old_lin, new_lin = _linears(model.trunk), _linears(new.trunk)
    n_old, n_new = len(model.hidden), len(new.hidden)
    for i, j in enumerate(list(range(n_old - 1)) + [n_new - 1]):
        _copy_into(new_lin[j], old_lin[i].weight, old_lin[i].bias)
    # Inserted layers pass on the old values they read (the first `passed` units) unchanged.
    passed = ([model.input_size] + list(model.hidden))[n_old - 1]
    for j in range(n_old - 1, n_new - 1):
        _identity_into(new_lin[j], passed)
    width_old = model.hidden[-1]
    old_blocks, new_blocks = _blocks(model), _blocks(new)
    for b, block in enumerate(new_blocks):
        if b < len(old_blocks):
            _copy_into(block.fc1, old_blocks[b].fc1.weight, old_blocks[b].fc1.bias)
            _copy_into(block.fc2, old_blocks[b].fc2.weight, old_blocks[b].fc2.bias)
        else:  # appended: adds exactly 0 to the old stream units
            _zero_old_rows(block.fc2, width_old)
    heads = [(new.policy_head, model.policy_head), (new.value_head, model.value_head)]
    if new.aux and model.aux:
        heads += [(new.points_head, model.points_head), (new.capture_head, model.capture_head)]
    for head_new, head_old in heads:
        with torch.no_grad():
            head_new.weight.zero_()
            head_new.weight[:, :width_old] = head_old.weight
            head_new.bias.copy_(head_old.bias)
    return new.train(model.training)
