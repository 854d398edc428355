"""The learner: ScrofaZero's loss, one optimiser step on a minibatch, and the Adam settings.

Loss (docs/rules.md section 12) = KL(policy_target || softmax(masked logits)) + value_weight * value
error, the value error measured in units of `value_unit` points, as a root mean square (the paper's
RMSE, whose gradient stays bounded when errors grow) or a mean square. `train_step` takes a
minibatch of numpy
arrays from the replay buffer and returns float metrics; only the entry point logs them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import TypeVar, cast

import numpy as np
import torch

from scrofazero.nn.network import PolicyValueNet, masked_log_softmax

VALUE_LOSSES = ("rmse", "mse")
ModuleT = TypeVar("ModuleT", bound=torch.nn.Module)


def loss_fn(
    logits: torch.Tensor,
    value: torch.Tensor,
    batch: dict[str, torch.Tensor],
    value_weight: float = 0.03,
    value_unit: float = 1.0,
    value_loss: str = "rmse",
    aux: tuple[torch.Tensor, torch.Tensor] | None = None,
    aux_weight: float = 0.0,
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """Total loss (scalar tensor) and its parts (detached scalar tensors).

    value_loss: "rmse" (sqrt of the mean squared error, the paper's with value_unit 1 point) or
    "mse" (the mean squared error).
    logits [B, 52] raw; value [B] in points (the mover's team's points still to come);
    batch: legal [B, 52] bool, policy_target [B, 52] (zero off legal), value_target [B] points.
    aux: (points [B, 4], capture logits [B, 16, 4]) of an aux network, with batch points_target
    [B, 4] and capture_target [B, 16]: adds aux_weight x (value_weight x points error + the mean
    cross-entropy of the capturing seats).
    """
    legal = batch["legal"]
    target = batch["policy_target"].float()  # [B, 52]
    # Mask BEFORE the softmax (illegal -> -inf), never after (docs/rules.md section 11).
    log_p = masked_log_softmax(logits.float(), legal)  # [B, 52]
    # Illegal entries are -inf; replace them by 0 so 0 * -inf never makes a NaN and no
    # gradient reaches the illegal logits.
    log_p = torch.where(legal, log_p, torch.zeros_like(log_p))
    # KL = sum t (log t - log p); xlogy gives 0 for t == 0, so zero-target terms contribute 0.
    kl = (torch.special.xlogy(target, target) - target * log_p).sum(dim=1)  # [B]
    policy = kl.mean()
    if value_loss not in VALUE_LOSSES:
        raise ValueError(f"value_loss must be one of {', '.join(VALUE_LOSSES)}, got {value_loss!r}")
    err = (value.float() - batch["value_target"].float()) / value_unit  # [B]
    mse = (err * err).mean()
    value_error = mse.sqrt() if value_loss == "rmse" else mse
    total = policy + value_weight * value_error
    metrics = {
        "loss/policy": policy.detach(),
        "loss/value": value_error.detach(),
    }
    if aux is not None and aux_weight > 0:
        points, capture = aux
        p_err = (points.float() - batch["points_target"].float()) / value_unit  # [B, 4]
        p_mse = (p_err * p_err).mean()
        points_error = p_mse.sqrt() if value_loss == "rmse" else p_mse
        capture_ce = torch.nn.functional.cross_entropy(
            capture.reshape(-1, 4).float(), batch["capture_target"].reshape(-1).long())
        total = total + aux_weight * (value_weight * points_error + capture_ce)
        metrics["loss/aux_points"] = points_error.detach()
        metrics["loss/aux_capture"] = capture_ce.detach()
    metrics["loss/total"] = total.detach()
    return total, metrics


def _to_device(batch: dict[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    keys = ("inputs", "legal", "policy_target", "value_target", "points_target",
            "capture_target")
    return {k: torch.as_tensor(np.asarray(batch[k])).to(device, non_blocking=True)
            for k in keys if k in batch}


# train.learner_precision: auto (bf16 autocast on CUDA, float32 elsewhere: the learner before
# the setting) | float32 | tf32 (TF32 matmuls on CUDA) | bf16 (bf16 autocast, CUDA or CPU).
LEARNER_PRECISIONS = ("auto", "float32", "tf32", "bf16")


def train_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: dict[str, np.ndarray],
    device: str | torch.device = "cpu",
    amp: bool | None = None,
    value_weight: float = 0.03,
    value_unit: float = 1.0,
    value_loss: str = "rmse",
    aux_weight: float = 0.0,
    precision: str = "auto",
) -> dict[str, float]:
    """One Adam step on a minibatch (numpy arrays as from ReplayBuffer.minibatches).

    amp (with precision "auto"): bf16 autocast for the forward pass; None = on when `device` is
    CUDA. Never on CPU (CPU bf16 is slower there and only the GPU run is tuned for it).
    precision (train.learner_precision) other than "auto" decides instead of amp: "float32" no
    autocast; "tf32" no autocast, the float32 matmuls of the whole step (forward and backward)
    in TF32 on CUDA (torch.backends.cuda.matmul.allow_tf32, given back after the step; the same
    as float32 elsewhere); "bf16" bf16 autocast of the forward pass on CUDA or CPU. The loss is
    computed in float32 either way. Returns {"loss/policy", "loss/value", "loss/total"} as
    floats.
    """
    device = torch.device(device)
    on_cuda = device.type == "cuda"
    if precision == "auto":
        use_amp = on_cuda if amp is None else (amp and on_cuda)
    elif precision in LEARNER_PRECISIONS:
        use_amp = precision == "bf16"
        if use_amp and device.type not in ("cuda", "cpu"):
            raise ValueError(f"learner precision bf16 runs on cuda or cpu, not {device.type}")
    else:
        raise ValueError(f"learner precision must be one of {', '.join(LEARNER_PRECISIONS)}, "
                         f"got {precision!r}")
    t = _to_device(batch, device)
    model.train()
    ctx = torch.autocast(device.type, dtype=torch.bfloat16) if use_amp else nullcontext()
    use_aux = aux_weight > 0 and getattr(model, "aux", False) and "capture_target" in t
    with _tf32(precision == "tf32" and on_cuda):
        with ctx:
            if use_aux:
                # (use_aux: a PolicyValueNet with the auxiliary heads)
                logits, value, points, capture = cast(PolicyValueNet, model).forward_aux(
                    t["inputs"].float())
            else:
                logits, value = model(t["inputs"].float())  # [B, 52], [B]
        total, metrics = loss_fn(logits, value, t, value_weight, value_unit, value_loss,
                                 aux=(points, capture) if use_aux else None,
                                 aux_weight=aux_weight)
        optimizer.zero_grad(set_to_none=True)
        total.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
        optimizer.step()
    # One host sync for all metrics.
    values = torch.stack(list(metrics.values())).tolist()
    return dict(zip(metrics.keys(), values))


@contextmanager
def _tf32(enabled: bool) -> Iterator[None]:
    """TF32 matmuls within the block when `enabled` (the flag is process-wide: the
    evaluator's forwards in the same process keep their own precision)."""
    if not enabled:
        yield
        return
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def average_of(model: ModuleT) -> ModuleT:
    """A copy of `model` to hold its weights' exponential moving average (update_average),
    starting at the weights themselves: an average begun at zero would need a bias correction
    and would stand for no network until it had run for a while. In eval mode, no gradients."""
    average = copy.deepcopy(model).eval()
    for p in average.parameters():
        p.requires_grad_(False)
    return average


@torch.no_grad()
def update_average(average: torch.nn.Module, model: torch.nn.Module, decay: float) -> None:
    """One step of the exponential moving average of `model`'s weights held in `average`:
    a <- decay x a + (1 - decay) x w for every floating-point parameter and buffer (others,
    such as counts, are copied). Made after each optimiser step, so the average spans about
    1 / (1 - decay) steps (a weight w steps old counts decay^w)."""
    live = model.state_dict()
    for name, tensor in average.state_dict().items():
        source = live[name]
        if tensor.is_floating_point():
            tensor.lerp_(source.to(tensor.dtype), 1.0 - decay)  # a + (1 - decay) x (w - a)
        else:
            tensor.copy_(source)


def make_optimizer(
    model: torch.nn.Module,
    lr: float = 5e-5,
    betas: Sequence[float] = (0.3, 0.999),
    weight_decay: float = 1e-4,
) -> torch.optim.Adam:
    """Adam with the paper's settings by default (lr 5e-5, betas (0.3, 0.999), wd 1e-4).

    The fused implementation (one kernel over all parameters): the same update, about a fifth
    less learner time for the 3 M network on one CPU core than the per-tensor loop."""
    beta1, beta2 = betas  # (Adam's own unpacking of tuple(betas): a pair or a ValueError)
    return torch.optim.Adam(
        model.parameters(), lr=lr, betas=(beta1, beta2), weight_decay=weight_decay, fused=True
    )
