"""Tiny Crew policy files: a TabularPolicy as `policy.npz` (keys, probabilities, JSON meta),
written atomically by train.py game=tiny_crew and read back by evaluate.py game=tiny_crew."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from scrofazero.atomic import write_atomic
from scrofazero.tiny_crew.exact import TabularPolicy


def save_policy(path: Path, policy: TabularPolicy, meta: dict) -> None:
    """Atomic npz of a tabular policy: keys [M] int64, probs [M, 12] float32, meta (JSON)."""
    keys, probs = policy.to_arrays()
    write_atomic(path, lambda f: np.savez(f, keys=keys, probs=probs.astype(np.float32),
                                          meta=np.array(json.dumps(meta))))


def load_policy(path) -> TabularPolicy:
    """A policy.npz written by save_policy; a missing, malformed or meaningless file is named:
    keys must be distinct integers [M], probs [M, 12] finite, non-negative, each row summing
    to 1 (within ROW_SUM_TOLERANCE)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"policy file {path} not found")
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, probs = data["keys"], data["probs"]
    except Exception as err:  # numpy raises several types for a damaged file
        raise ValueError(f"{path}: not a Tiny Crew policy file ({err})") from None
    _check_arrays(path, keys, probs)
    return TabularPolicy.from_arrays(keys, probs.astype(np.float64))


ROW_SUM_TOLERANCE = 1e-4  # float32 rows of 12 probabilities sum to 1 within a few 1e-7


def _check_arrays(path: Path, keys: np.ndarray, probs: np.ndarray) -> None:
    if keys.ndim != 1 or not np.issubdtype(keys.dtype, np.integer):
        raise ValueError(f"{path}: keys must be integers [M], got {keys.dtype} {keys.shape}")
    if len(np.unique(keys)) != len(keys):
        raise ValueError(f"{path}: keys repeat an information state")
    if not np.issubdtype(probs.dtype, np.floating) or probs.shape != (len(keys), 12):
        raise ValueError(f"{path}: probs has {probs.dtype} {probs.shape}, expected floats "
                         f"({len(keys)}, 12)")
    bad = ~np.isfinite(probs).all(axis=1) | (probs < 0).any(axis=1)
    bad |= np.abs(probs.astype(np.float64).sum(axis=1) - 1.0) > ROW_SUM_TOLERANCE
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{path}: probs row {row} (key {int(keys[row])}) is not a probability "
                         f"distribution ({bad.sum()} of {len(keys)} rows are not: each must be "
                         f"finite, non-negative and sum to 1): {probs[row].tolist()}")
