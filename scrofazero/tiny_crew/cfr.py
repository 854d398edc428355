"""Chance-sampled CFR for Tiny Crew: sample a deal, run full-width CFR on its tree with
perfect-recall information states shared across deals (the compiled traversal is fast.cfr_run).

`CFRTrainer.run(n)` adds n iterations; `average_policy()` is the normalised strategy sum (the
policy CFR converges with), `current_policy()` the regret-matching policy of the last iteration.
CFR+ (regrets floored at 0, linear averaging) is the default; plain CFR with `plus=False`.

Measured limit: on all 34,650 deals the perfect-recall tables outgrow memory (tens of millions
of information states: 20,000 sampled deals exhausted 23 GB), so `max_states` stops the
trainer with a clear error instead; on a subset of deals (Setting(deals=...)) it runs as is.
"""

from __future__ import annotations

import numpy as np

from scrofazero.tiny_crew import fast
from scrofazero.tiny_crew.exact import Setting, TabularPolicy


class CFRTrainer:
    def __init__(self, setting: Setting, seed: int = 0, plus: bool = True,
                 capacity: int = 1 << 18, max_states: int = 1 << 24):
        self.setting, self.plus = setting, bool(plus)
        self.rng = np.random.default_rng(seed)
        self.index = fast.new_index()
        self.regret = np.zeros((capacity, 12))
        self.strat = np.zeros((capacity, 12))
        self.legal = np.zeros(capacity, dtype=np.int64)
        self.iterations = 0
        self.max_states = int(max_states)

    def _grow(self) -> None:
        size = 2 * len(self.regret)
        if size > self.max_states:
            raise MemoryError(
                f"CFR tables would exceed max_states={self.max_states} information states "
                f"({len(self.index)} after {self.iterations} iterations); train on fewer deals "
                "or raise max_states")
        for name in ("regret", "strat"):
            old = getattr(self, name)
            new = np.zeros((size, 12))
            new[: len(old)] = old
            setattr(self, name, new)
        legal = np.zeros(size, dtype=np.int64)
        legal[: len(self.legal)] = self.legal
        self.legal = legal

    def run(self, iterations: int) -> None:
        """`iterations` more sampled deals (uniform over all deals)."""
        s = self.setting
        order = self.rng.integers(0, len(s.deals), size=int(iterations))
        done = 0
        while done < len(order):
            n = fast.cfr_run(s.deals, s.first_leaders, s.params.t1_seat, s.params.t2_seat,
                             order[done:], self.iterations, self.index, self.regret,
                             self.strat, self.legal, self.plus)
            done += n
            self.iterations += n
            if done < len(order):
                self._grow()

    def _normalised(self, table: np.ndarray) -> TabularPolicy:
        rows = len(self.index)
        legal = ((self.legal[:rows, None] >> np.arange(12)) & 1).astype(np.float64)
        x = np.maximum(table[:rows], 0.0) * legal
        total = x.sum(axis=1, keepdims=True)
        uniform = legal / legal.sum(axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            probs = np.where(total > 0, x / total, uniform)
        return TabularPolicy(fast.copy_index(self.index), probs)

    def average_policy(self) -> TabularPolicy:
        return self._normalised(self.strat)

    def current_policy(self) -> TabularPolicy:
        return self._normalised(self.regret)

    def state(self) -> dict:
        """A checkpoint: arrays (keys in row order, regrets, strategy sums, legal masks) and
        JSON-able scalars (the random state is plain ints), as train.py stores them."""
        rows = len(self.index)
        keys = TabularPolicy(self.index, self.strat).to_arrays()[0]
        return {"keys": keys, "regret": self.regret[:rows].copy(),
                "strat": self.strat[:rows].copy(), "legal": self.legal[:rows].copy(),
                "iterations": self.iterations, "rng": self.rng.bit_generator.state,
                "plus": self.plus}

    def restore(self, state: dict) -> None:
        """Inverse of state(); ValueError naming the array when the pieces do not fit."""
        rows = len(state["keys"])
        for name, shape, kinds in (("keys", (rows,), "iu"), ("regret", (rows, 12), "f"),
                                   ("strat", (rows, 12), "f"), ("legal", (rows,), "iu")):
            array = np.asarray(state[name])
            if array.shape != shape or array.dtype.kind not in kinds:
                raise ValueError(f"{name}: shape {array.shape} dtype {array.dtype}, expected "
                                 f"{shape} of {'integers' if kinds == 'iu' else 'floats'}")
        while len(self.regret) < rows + 30000:
            self._grow()
        self.index = TabularPolicy.from_arrays(state["keys"], np.zeros((rows, 12))).index
        self.regret[:rows] = state["regret"]
        self.strat[:rows] = state["strat"]
        self.legal[:rows] = state["legal"]
        self.iterations = int(state["iterations"])
        self.rng.bit_generator.state = state["rng"]
        self.plus = bool(state["plus"])
