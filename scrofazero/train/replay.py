"""Replay buffer over the latest self-play batches (the paper: the newest batch plus two before).

Holds whole `SelfPlayRecords` batches, drops the oldest past `max_batches`, and yields shuffled
minibatches as dicts of numpy arrays that `learner.train_step` consumes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import numpy as np

# The per-position arrays of SelfPlayRecords that training uses; the auxiliary targets are used
# when every stored batch has them (records made before they existed do not).
FIELDS = ("inputs", "legal", "policy_target", "value_target", "seat")
AUX_FIELDS = ("points_target", "capture_target")


def _fields(records: object) -> dict[str, np.ndarray]:
    if isinstance(records, dict):
        found = {k: records.get(k) for k in FIELDS + AUX_FIELDS}
    else:
        found = {k: getattr(records, k, None) for k in FIELDS + AUX_FIELDS}
    return {k: np.asarray(v) for k, v in found.items() if v is not None}


class ReplayBuffer:
    """The positions of the newest `max_batches` self-play batches."""

    def __init__(self, max_batches: int = 3):
        if max_batches < 1:
            raise ValueError(f"max_batches must be >= 1, got {max_batches}")
        self.max_batches = max_batches
        # The records as added (SelfPlayRecords or dicts), oldest first: what a checkpoint saves.
        self.batches: deque[Any] = deque(maxlen=max_batches)

    def add(self, records: object) -> None:
        """Append one batch (SelfPlayRecords or a dict with FIELDS); the oldest falls out."""
        fields = _fields(records)
        n = len(fields["inputs"])
        bad = [k for k, v in fields.items() if len(v) != n]
        if bad:
            raise ValueError(f"fields {bad} do not have {n} rows like inputs")
        self.batches.append(records)

    def __len__(self) -> int:
        return sum(len(_fields(b)["inputs"]) for b in self.batches)

    @property
    def num_batches(self) -> int:
        return len(self.batches)

    def minibatches(
        self, batch_size: int, passes: int, rng: np.random.Generator
    ) -> Iterator[dict[str, np.ndarray]]:
        """`passes` shuffled sweeps over every stored position, `batch_size` rows at a time.

        Each pass is a fresh permutation, so every position appears exactly once per pass; the
        last minibatch of a pass may be smaller.
        """
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if not self.batches:
            return
        # Concatenated once per call, not per minibatch: the buffer is small (~3 x 2,000 rows).
        parts = [_fields(b) for b in self.batches]
        names = [k for k in FIELDS + AUX_FIELDS if all(k in p for p in parts)]
        data = {k: np.concatenate([p[k] for p in parts]) for k in names}
        n = len(data["inputs"])
        for _ in range(passes):
            order = rng.permutation(n)
            for start in range(0, n, batch_size):
                idx = order[start : start + batch_size]
                yield {k: v[idx] for k, v in data.items()}
