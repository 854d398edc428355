"""NetworkEvaluator: the search's Evaluator protocol backed by a PolicyValueNet.

Takes a Gongzhu `StateBatch`, encodes it (nn/encoding.py), runs the network once under
torch.inference_mode() and turns the mover's team value into one expected final return per seat
(search/protocols.py). One device-to-host copy per call.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from scrofazero.games.gongzhu.batch import (
    GongzhuRules,
    StateBatch,
    current_player,
    is_terminal,
    returns,
)
from scrofazero.games.gongzhu.scoring import MAX_RETURN
from scrofazero.nn.encoding import encode

PRECISIONS = ("float32", "bfloat16")  # of the network's forwards (NetworkEvaluator.precision)


class NetworkEvaluator:
    """states -> (logits [B, 52] float32 raw and unmasked, values [B, 4] float32 in points).

    values[:, seat] = returns(s)[:, seat] + v for the mover's team, - v for the other team, with
    v the net's "points still to come" for the mover's team (zero-sum between teams, as
    returns are); terminal rows get their exact returns. With precision "bfloat16" the
    forwards run on a bfloat16 copy of the weights (about 2x faster on a CPU with bf16
    instructions for the 11.4 M network; values move by about 0.4 points in 90), re-copied
    whenever the model's weights have changed since (an optimiser step, load_state_dict), so
    self-play always plays the current network.
    Counters: `calls` (evaluations requested) and `states` (rows evaluated).

    Args:
        model: the PolicyValueNet; moved to `device` in place, as nn.Module.to does.
        device: the torch device of the forwards (a name such as "cpu" or a torch.device).
        amp: bf16 autocast; None = on for CUDA only.
        precision: "float32" or "bfloat16", the forwards' precision (settable later).
    """

    def __init__(self, model: torch.nn.Module, device: str | torch.device = "cpu",
                 amp: bool | None = None, precision: str = "float32") -> None:
        self.device = torch.device(device)
        # Weight decay leaves many weights denormal; on CPUs arithmetic on denormals is up to
        # ~25x slower (measured: 99 ms vs 3.8 ms per forward of a trained small net).
        torch.set_flush_denormal(True)
        self.model = model.to(self.device)
        self.amp = self.device.type == "cuda" if amp is None else bool(amp)
        self.teams = np.asarray(GongzhuRules.teams)  # [4] seat -> team
        self.calls = 0
        self.states = 0
        self._low: torch.nn.Module | None = None  # the bfloat16 copy of the model
        # the (tensor, version) of every weight it was copied from
        self._low_of: list[tuple[int, int]] | None = None
        self.precision = precision

    @property
    def precision(self) -> str:
        """The forwards' precision, "float32" or "bfloat16"; any other value is refused."""
        return self._precision

    @precision.setter
    def precision(self, value: str) -> None:
        if value not in PRECISIONS:
            raise ValueError(f"network precision must be one of {', '.join(PRECISIONS)}, "
                             f"got {value!r}")
        self._precision = value

    def _network(self) -> torch.nn.Module:
        """The module a forward runs: the model, or its bfloat16 copy brought up to date."""
        if self._precision == "float32":
            return self.model
        params = list(self.model.state_dict(keep_vars=True).values())
        now = [(id(p), p._version) for p in params]
        if self._low is None or now != self._low_of:
            if self._low is None or self._low_of is None or len(now) != len(self._low_of):
                self._low = copy.deepcopy(self.model).to(torch.bfloat16).eval()
            with torch.no_grad():
                for low, p in zip(self._low.state_dict(keep_vars=True).values(), params):
                    low.copy_(p)
            self._low_of = now
        return self._low

    def __call__(self, s: StateBatch) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate a batch of states for search (the Evaluator protocol).

        Args:
            s: a batch of B Gongzhu states, terminal or not.

        Returns:
            (logits [B, 52], values [B, 4]) float32, as the class docstring describes.
        """
        return self.evaluate(s, encode(s) if len(s) else None)

    def evaluate(self, s: StateBatch, x: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(logits [B, 52], values [B, 4]) of the states `s` from their inputs `x` [B, 434]
        encoded some other way than `encode` (e.g. nn/encoding.py encode_holders: what a viewer
        knows of the hands); the public part of `s` turns the value into per-seat returns.

        Args:
            s: the states (only their piles, whose turn and whether they are over are read).
            x: [B, 434] their network inputs (None for an empty batch).

        Returns:
            (logits [B, 52], values [B, 4]) float32, as for `__call__`.
        """
        b = len(s)
        self.calls += 1
        self.states += b
        out = (self._forward(np.ascontiguousarray(x, dtype=np.float32)) if b
               else np.zeros((0, 53), dtype=np.float32))  # [B, 53]
        logits = np.ascontiguousarray(out[:, :-1])  # [B, 52]
        v = out[:, -1]  # [B] points to come for the mover's team
        ret = returns(s).astype(np.float32)  # [B, 4]
        mover_team = self.teams[current_player(s)]  # [B]
        same = self.teams[None, :] == mover_team[:, None]  # [B, 4]
        values = ret + np.where(same, v[:, None], -v[:, None])  # [B, 4]
        # No game ends outside +-MAX_RETURN: clipping keeps search (and so the value targets
        # it makes) inside what is possible, which stops value estimates feeding on themselves.
        np.clip(values, -MAX_RETURN, MAX_RETURN, out=values)
        done = is_terminal(s)
        values[done] = ret[done]
        return logits, values.astype(np.float32, copy=False)

    def forward_features(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The network on already encoded inputs, with no conversion to per-seat values.

        Args:
            x: [B, 434] encoded inputs (encode or encode_own_view).

        Returns:
            (logits [B, 52], value [B]) float32, raw: unmasked logits, and the value in points
            still to come for the mover's team.
        """
        self.calls += 1
        self.states += len(x)
        out = self._forward(np.ascontiguousarray(x, dtype=np.float32)) if len(x) else \
            np.zeros((0, 53), dtype=np.float32)
        return np.ascontiguousarray(out[:, :-1]), out[:, -1].copy()

    def _forward(self, x: np.ndarray) -> np.ndarray:
        """x [B, 434] -> [B, 53] float32 numpy: 52 logits then the value, one host copy."""
        network = self._network()
        with torch.inference_mode(), torch.autocast(
            self.device.type, dtype=torch.bfloat16, enabled=self.amp
        ):
            inputs = torch.from_numpy(x).to(self.device, non_blocking=True)
            if network is not self.model:
                inputs = inputs.to(torch.bfloat16)
            logits, value = network(inputs)
            packed = torch.cat([logits.float(), value.float()[:, None]], dim=1)  # [B, 53]
        return packed.cpu().numpy()
