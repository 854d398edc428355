"""The ScrofaZero policy-value network, a fully connected residual MLP (docs/rules.md section 11).

434 inputs -> hidden widths (paper: 2048, 2048, 512) -> residual blocks -> 52 policy logits and
one value, in points, for the MOVER's team (the points still to come). Search reaches it only
through nn/evaluator.py; checkpoints rebuild it from `config()`. With aux=True two more heads
read the same trunk for training only (`forward_aux`): each seat's final pile score and, for
each of the 16 scoring cards, which seat captures it (seats relative to the mover).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from scrofazero.nn.encoding import INPUT_SIZE
from scrofazero.settings import Positive, at_most

# Generous bounds on the network's shape (the paper's has about 11.4 M parameters): past them a
# typo such as num_blocks=1e9 would allocate until the process is killed.
MAX_WIDTH = 65536
MAX_BLOCKS = 1000
MAX_PARAMETERS = 1_000_000_000


def parameter_count(hidden: Sequence[int], num_blocks: int, input_size: int = INPUT_SIZE,
                    num_actions: int = 52, aux: bool = False) -> int:
    """The number of parameters PolicyValueNet(hidden, num_blocks, ...) has, without building it.

    Args:
        hidden: widths of the trunk's layers; the last is the residual blocks' width.
        num_blocks: residual blocks.
        input_size: input features (434 for Gongzhu).
        num_actions: policy logits.
        aux: whether the two auxiliary heads are counted.
    """
    widths = [input_size, *hidden]
    count = sum((a + 1) * b for a, b in zip(widths, widths[1:]))
    last = widths[-1]
    count += num_blocks * 2 * (last + 1) * last
    heads = num_actions + 1 + (4 + 16 * 4 if aux else 0)
    return count + (last + 1) * heads


def check_size(hidden: Sequence[int], num_blocks: int, aux: bool = False,
               where: str = "") -> None:
    """Refuse a shape that is empty, negative or beyond the bounds above, naming the settings.

    Args:
        hidden: widths of the trunk's layers.
        num_blocks: residual blocks.
        aux: whether the shape has the auxiliary heads (they count towards the bound).
        where: prefix of the settings' names in error messages, e.g. "model.".
    """
    hidden = list(hidden)
    if not hidden or min(hidden) < 1 or max(hidden) > MAX_WIDTH:
        raise ValueError(f"{where}hidden={hidden}: must list at least one width in "
                         f"1..{MAX_WIDTH}")
    if not 0 <= num_blocks <= MAX_BLOCKS:
        raise ValueError(f"{where}num_blocks={num_blocks}: must lie in 0..{MAX_BLOCKS}")
    count = parameter_count(hidden, num_blocks, aux=aux)
    if count > MAX_PARAMETERS:
        raise ValueError(f"{where}hidden={hidden} with {where}num_blocks={num_blocks}: "
                         f"{count:.3g} parameters, more than the bound of {MAX_PARAMETERS:.0e}")



if TYPE_CHECKING:  # the plain types (mypy takes no call in a type)
    Width = int
    Blocks = int
else:
    Width = at_most(MAX_WIDTH)  # a layer width of the network
    Blocks = at_most(MAX_BLOCKS, low=0)  # residual blocks of the network


@dataclass
class ModelConfig:
    # fully connected trunk widths; the last is the residual width
    hidden: list[Width] = field(default_factory=lambda: [512, 256])
    num_blocks: Blocks = 4  # residual blocks (width -> width -> width, ReLU, add)
    value_scale: Positive = 10.0  # value head output x this = points still to come (paper: 10)
    # auxiliary heads trained beside policy and value: each seat's final pile score, who captures
    # each scoring card
    aux: bool = False


class ResidualBlock(nn.Module):
    """Linear(w, w) -> ReLU -> Linear(w, w), add the input, ReLU.

    Args:
        width: w, the width of the block's input, hidden layer and output.
    """

    def __init__(self, width: int):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [B, w] -> [B, w]."""
        return torch.relu(x + self.fc2(torch.relu(self.fc1(x))))


class PolicyValueNet(nn.Module):
    """Policy logits over the 52 cards and the mover's team value in points.

    The paper shape (defaults) has about 11.4 M parameters.

    Args:
        hidden: widths of the ReLU trunk layers.
        num_blocks: residual blocks, of width hidden[-1].
        input_size: input features (434: nn/encoding.py).
        num_actions: policy logits, one per card.
        value_scale: points per unit of the raw value head (paper: 10, the head outputs
            points / 10).
        aux: add the auxiliary heads (`forward_aux`), trained beside policy and value.
    """

    def __init__(self, hidden: Sequence[int] = (2048, 2048, 512), num_blocks: int = 10,
                 input_size: int = INPUT_SIZE, num_actions: int = 52, value_scale: float = 10.0,
                 aux: bool = False):
        super().__init__()
        hidden = tuple(int(w) for w in hidden)
        check_size(hidden, num_blocks, aux)
        self.hidden = hidden
        self.num_blocks = int(num_blocks)
        self.input_size = int(input_size)
        self.num_actions = int(num_actions)
        self.value_scale = float(value_scale)
        self.aux = bool(aux)
        layers: list[nn.Module] = []
        width = self.input_size
        for w in hidden:
            layers += [nn.Linear(width, w), nn.ReLU()]
            width = w
        layers += [ResidualBlock(width) for _ in range(self.num_blocks)]
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, self.num_actions)
        self.value_head = nn.Linear(width, 1)
        if self.aux:
            self.points_head = nn.Linear(width, 4)  # final pile score / value_scale per seat
            self.capture_head = nn.Linear(width, 16 * 4)  # scoring card x capturing seat logits

    def forward_aux(self, x: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """The main and the auxiliary heads together; the network must have aux=True.

        Args:
            x: [B, 434] encoded inputs.

        Returns:
            (logits [B, 52], value [B], points [B, 4] in points, capture logits [B, 16, 4]) as
            float32.
        """
        if not self.aux:
            raise ValueError("this network has no auxiliary heads (aux=False)")
        h = self.trunk(x)
        logits = self.policy_head(h).float()
        value = self.value_scale * self.value_head(h).float().squeeze(-1)
        points = self.value_scale * self.points_head(h).float()
        capture = self.capture_head(h).float().view(-1, 16, 4)
        return logits, value, points, capture

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Policy logits and value of a batch of encoded positions.

        Args:
            x: [B, 434] encoded inputs.

        Returns:
            (logits [B, 52], value [B]) as float32 even under bf16 autocast; value =
            value_scale * raw head output, in points still to come for the mover's team.
        """
        h = self.trunk(x)  # [B, w]
        logits = self.policy_head(h).float()  # [B, 52]
        # Scale in float32: a bf16 product would keep only ~3 significant digits of the points.
        value = self.value_scale * self.value_head(h).float().squeeze(-1)  # [B]
        return logits, value

    def config(self) -> dict[str, Any]:
        """Constructor arguments as plain Python values (stored in checkpoints)."""
        return {
            "hidden": list(self.hidden),
            "num_blocks": self.num_blocks,
            "input_size": self.input_size,
            "num_actions": self.num_actions,
            "value_scale": self.value_scale,
            **({"aux": True} if self.aux else {}),  # absent when off: older files read alike
        }

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> PolicyValueNet:
        """A freshly initialised network of the shape `config` describes.

        Args:
            config: constructor arguments by name, as `config()` returns them.
        """
        return cls(**config)


def num_parameters(model: nn.Module) -> int:
    """Number of trainable scalars of `model` (any nn.Module)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def masked_log_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over legal actions.

    Illegal logits are set to -inf BEFORE the softmax (docs/rules.md section 11), so illegal
    actions get probability exactly 0 and the legal ones sum to 1.

    Args:
        logits: [B, A] raw policy logits.
        legal: [B, A] bool legal actions; every row needs at least one.

    Returns:
        [B, A] float32 log-probabilities, -inf on illegal actions.
    """
    return logits.float().masked_fill(~legal, float("-inf")).log_softmax(dim=-1)
