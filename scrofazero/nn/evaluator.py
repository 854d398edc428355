"""NetworkEvaluator: the search's Evaluator protocol backed by a PolicyValueNet.

Takes a Gongzhu `StateBatch`, encodes it (nn/encoding.py), runs the network once under
torch.inference_mode() and turns the mover's team value into one expected final return per seat
(search/protocols.py). One device-to-host copy per call.
"""

from __future__ import annotations

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


class NetworkEvaluator:
    """states -> (logits [B, 52] float32 raw and unmasked, values [B, 4] float32 in points).

    values[:, seat] = returns(s)[:, seat] + v for the mover's team, - v for the other team, with
    v the net's "points still to come" for the mover's team (zero-sum between teams, as
    returns are); terminal rows get their exact returns. The model is moved to `device` (in
    place, as nn.Module.to does). amp: bf16 autocast; None = on for CUDA only.
    Counters: `calls` (evaluations requested) and `states` (rows evaluated).
    """

    def __init__(self, model: torch.nn.Module, device="cpu", amp: bool | None = None):
        self.device = torch.device(device)
        # Weight decay leaves many weights denormal; on CPUs arithmetic on denormals is up to
        # ~25x slower (measured: 99 ms vs 3.8 ms per forward of a trained small net).
        torch.set_flush_denormal(True)
        self.model = model.to(self.device)
        self.amp = self.device.type == "cuda" if amp is None else bool(amp)
        self.teams = np.asarray(GongzhuRules.teams)  # [4] seat -> team
        self.calls = 0
        self.states = 0

    def __call__(self, s: StateBatch) -> tuple[np.ndarray, np.ndarray]:
        b = len(s)
        self.calls += 1
        self.states += b
        out = self._forward(encode(s)) if b else np.zeros((0, 53), dtype=np.float32)  # [B, 53]
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
        """Network on already encoded inputs x [B, 434]: (logits [B, 52], value [B]) float32,
        raw (unmasked logits; value in points to come for the mover's team)."""
        self.calls += 1
        self.states += len(x)
        out = self._forward(np.ascontiguousarray(x, dtype=np.float32)) if len(x) else \
            np.zeros((0, 53), dtype=np.float32)
        return np.ascontiguousarray(out[:, :-1]), out[:, -1].copy()

    def _forward(self, x: np.ndarray) -> np.ndarray:
        """x [B, 434] -> [B, 53] float32 numpy: 52 logits then the value, one host copy."""
        with torch.inference_mode(), torch.autocast(
            self.device.type, dtype=torch.bfloat16, enabled=self.amp
        ):
            inputs = torch.from_numpy(x).to(self.device, non_blocking=True)
            logits, value = self.model(inputs)
            packed = torch.cat([logits.float(), value.float()[:, None]], dim=1)  # [B, 53]
        return packed.cpu().numpy()
