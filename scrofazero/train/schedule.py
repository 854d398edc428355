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

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Protocol, TypeVar

from pydantic import Field

from scrofazero.nn.evaluator import PRECISIONS
from scrofazero.nn.grow import check_growth
from scrofazero.settings import Count, NonNegativeInt, Positive, Share, choice

if TYPE_CHECKING:
    from scrofazero.nn.network import ModelConfig

# The train settings a phase can set (besides the network's shape).
PHASE_KEYS = ("games_per_batch", "replay_batches", "passes", "lr", "playout_full", "search_scale",
              "inference")
INFERENCE = PRECISIONS  # self-play's network precision: the evaluator's own choices
Widths = Annotated[list[Count], Field(min_length=1)]  # a trunk's layer widths


@dataclass
class PhaseConfig:
    # the phase starts once the run has played this many self-play games
    from_games: NonNegativeInt = 0
    games_per_batch: Count | None = None  # None: as the phase before
    replay_batches: Count | None = None  # None: as the phase before
    passes: Count | None = None  # None: as the phase before
    lr: Positive | None = None  # Adam learning rate (None: as the phase before)
    # fraction of plies searched in full and recorded (None: as before)
    playout_full: Share | None = None
    # self-play's search budget times this (None: as before)
    search_scale: Positive | None = None
    # self-play's network precision: float32 | bfloat16 (None: as before)
    inference: Annotated[str, choice(*INFERENCE)] | None = None
    hidden: Widths | None = None  # grow the network to these trunk widths (None: keep)
    num_blocks: NonNegativeInt | None = None  # grow to this many residual blocks (None: keep)


def _get(phase: PhaseConfig | dict[str, Any], key: str) -> Any:
    return phase.get(key) if isinstance(phase, dict) else getattr(phase, key)


def check_schedule(schedule: Sequence[PhaseConfig | dict[str, Any]], base: dict[str, Any],
                   shape: dict[str, Any], where: str = "train.schedule") -> None:
    """Refuse phases that do not follow each other, naming the phase: each must start later
    than the one before, and grow the network the one before leaves (or keep it). Each phase's
    own values are bounded by PhaseConfig's field types (checked with the rest of the config)."""
    last = -1
    for i, phase in enumerate(schedule):
        start = _get(phase, "from_games")
        if start <= last:
            raise ValueError(f"{where}[{i}].from_games={start}: phases must start at increasing "
                             f"game counts (the phase before starts at {last})")
        last = start
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


def phase_index(schedule: Sequence[PhaseConfig | dict[str, Any]], games: int) -> int:
    """Index of the phase in force after `games` self-play games (-1: none yet)."""
    index = -1
    for i, phase in enumerate(schedule):
        if games >= _get(phase, "from_games"):
            index = i
    return index


def phase_settings(schedule: Sequence[PhaseConfig | dict[str, Any]], index: int,
                   base: dict[str, Any], shape: dict[str, Any]
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
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


class Scheduled(Protocol):
    """What `in_force` reads of the train settings (train/config.py TrainConfig, which imports
    this module): a dataclass with a schedule, and PHASE_KEYS' fields."""

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    schedule: list[PhaseConfig]


TrainT = TypeVar("TrainT", bound=Scheduled)


def in_force(train: TrainT, model: ModelConfig, index: int) -> tuple[TrainT, dict[str, Any]]:
    """(the `train` settings (train/config.py TrainConfig) with phase `index`'s in force, the
    network shape {hidden, num_blocks} of that phase) for the `model` settings' base shape;
    index -1: the train settings as they are."""
    settings, shape = phase_settings(train.schedule, index,
                                     {k: getattr(train, k) for k in PHASE_KEYS},
                                     {"hidden": model.hidden, "num_blocks": model.num_blocks})
    return dataclasses.replace(train, **settings), shape
