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
    """A policy.npz written by save_policy; a missing or malformed file is named."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"policy file {path} not found")
    try:
        with np.load(path) as data:
            keys, probs = data["keys"], data["probs"].astype(np.float64)
    except Exception as err:  # numpy raises several types for a damaged file
        raise ValueError(f"{path}: not a Tiny Crew policy file ({err})") from None
    if probs.shape != (len(keys), 12):
        raise ValueError(f"{path}: probs has shape {probs.shape}, expected ({len(keys)}, 12)")
    return TabularPolicy.from_arrays(keys, probs)
