"""Training phases: settings that change as self-play games accumulate (`train.schedule`).

A schedule is a list of phases, each starting once the run has played `from_games` self-play
games (in increasing order). A phase sets any of games per batch, replayed batches, passes, the
learning rate, the playout-cap fraction, self-play's search scale and network precision, and the
network's shape; what it leaves unset (None) carries over from the phase
before (the first from the `train` settings and the `model` group). A larger shape grows the
trained network into it without changing what it computes (nn/grow.py) and starts a fresh
optimiser, as the original's authors did between their runs. The original's late fine-tuning
(128 games per batch, replay of the latest batch only, 3 passes, lr 5e-5) is one such phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from scrofazero.nn.evaluator import PRECISIONS
from scrofazero.nn.grow import check_growth

# The train settings a phase can set (besides the network's shape).
PHASE_KEYS = ("games_per_batch", "replay_batches", "passes", "lr", "playout_full", "search_scale",
              "inference")
INFERENCE = PRECISIONS  # self-play's network precision: the evaluator's own choices


@dataclass
class PhaseConfig:
    from_games: int = 0  # the phase starts once the run has played this many self-play games
    games_per_batch: Optional[int] = None  # None: as the phase before
    replay_batches: Optional[int] = None  # None: as the phase before
    passes: Optional[int] = None  # None: as the phase before
    lr: Optional[float] = None  # Adam learning rate (None: as the phase before)
    # fraction of plies searched in full and recorded (None: as before)
    playout_full: Optional[float] = None
    search_scale: Optional[float] = None  # self-play's search budget times this (None: as before)
    # self-play's network precision: float32 | bfloat16 (None: as before)
    inference: Optional[str] = None
    hidden: Optional[list[int]] = None  # grow the network to these trunk widths (None: keep)
    num_blocks: Optional[int] = None  # grow to this many residual blocks (None: keep)


def _get(phase, key):
    return phase.get(key) if isinstance(phase, dict) else getattr(phase, key)


def check_schedule(schedule: Sequence, base: dict, shape: dict, where: str = "train.schedule"):
    """Refuse a schedule that makes no sense, naming the phase and setting."""
    last = -1
    for i, phase in enumerate(schedule):
        start = _get(phase, "from_games")
        if start is None or start < 0:
            raise ValueError(f"{where}[{i}].from_games={start}: must be >= 0")
        if start <= last:
            raise ValueError(f"{where}[{i}].from_games={start}: phases must start at increasing "
                             f"game counts (the phase before starts at {last})")
        last = start
        for key in ("games_per_batch", "replay_batches", "passes", "num_blocks"):
            value = _get(phase, key)
            if value is not None and value < (0 if key == "num_blocks" else 1):
                raise ValueError(f"{where}[{i}].{key}={value}: must be >= "
                                 f"{0 if key == 'num_blocks' else 1}")
        lr = _get(phase, "lr")
        if lr is not None and not lr > 0:
            raise ValueError(f"{where}[{i}].lr={lr}: must be > 0")
        full = _get(phase, "playout_full")
        if full is not None and not 0.0 < full <= 1.0:
            raise ValueError(f"{where}[{i}].playout_full={full}: must lie in (0, 1]")
        scale = _get(phase, "search_scale")
        if scale is not None and not scale > 0:
            raise ValueError(f"{where}[{i}].search_scale={scale}: must be > 0")
        inference = _get(phase, "inference")
        if inference is not None and inference not in INFERENCE:
            raise ValueError(f"{where}[{i}].inference={inference!r}: choose "
                             f"{' or '.join(INFERENCE)}")
        hidden = _get(phase, "hidden")
        if hidden is not None and (len(hidden) == 0 or min(hidden) < 1):
            raise ValueError(f"{where}[{i}].hidden={list(hidden)}: must list positive widths")
    # Each phase's shape must be reachable by growing the one before (nn/grow.py names why not).
    prev = phase_settings(schedule, -1, base, shape)[1]
    for i in range(len(schedule)):
        cur = phase_settings(schedule, i, base, shape)[1]
        if cur != prev:
            try:
                check_growth(prev["hidden"], prev["num_blocks"], cur["hidden"], cur["num_blocks"])
            except ValueError as err:
                raise ValueError(f"{where}[{i}]: {err} ({where}=[] trains without the "
                                 "schedule's phases)") from None
        prev = cur


def phase_index(schedule: Sequence, games: int) -> int:
    """Index of the phase in force after `games` self-play games (-1: none yet)."""
    index = -1
    for i, phase in enumerate(schedule):
        if games >= _get(phase, "from_games"):
            index = i
    return index


def phase_settings(schedule: Sequence, index: int, base: dict, shape: dict) -> tuple[dict, dict]:
    """(train settings {PHASE_KEYS}, shape {hidden, num_blocks}) of phase `index` (-1: base)."""
    settings = {k: base[k] for k in PHASE_KEYS}
    cur = {"hidden": [int(w) for w in shape["hidden"]], "num_blocks": int(shape["num_blocks"])}
    for phase in list(schedule)[: index + 1]:
        for key in PHASE_KEYS:
            if _get(phase, key) is not None:
                settings[key] = _get(phase, key)
        if _get(phase, "hidden") is not None:
            cur["hidden"] = [int(w) for w in _get(phase, "hidden")]
        if _get(phase, "num_blocks") is not None:
            cur["num_blocks"] = int(_get(phase, "num_blocks"))
    return settings, cur
