"""A Gongzhu training run's state and its checkpoints: what `resume=true` must restore.

A checkpoint holds model, optimiser, step, config, the replay, the rng states and the evaluation
history (inside the run harness's envelope, scrofazero/runs.py), so a killed run continues from
its last checkpoint with nothing else lost. `Run` is that state; `checked_state` refuses a
damaged or crafted file by name before anything of it is used; `open_run` starts a run fresh or
restores it (from its own latest checkpoint with resume=true, or from a compact state file with
resume_from=PATH); milestone copies of a checkpoint are kept when training time or self-play
games pass the configured marks.

With train.ema > 0 the run also keeps an exponential moving average of the network's weights
(one update after each optimiser step): self-play and the learner use the weights, the periodic
evaluation and the network of every checkpoint, milestone and state file (load_model's) are the
average. It is part of the run's state (restored on resume; a file without one starts it from
the weights) and starts again from the weights whenever the network is replaced (grown by the
schedule, started from train.init_from) and after the warm start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict, ValidationError

from scrofazero.atomic import copy_atomic
from scrofazero.nn.checkpoint import (
    file_sha256,
    is_model_only,
    latest_checkpoint,
    load_checkpoint,
    load_model,
    save_checkpoint,
    save_state_file,
)
from scrofazero.nn.grow import grow
from scrofazero.nn.network import PolicyValueNet
from scrofazero.runs import (
    CheckpointError,
    Envelope,
    RunFolder,
    check_finite,
    random_states,
    read_envelope,
    resume_or_start,
)
from scrofazero.train.config import GongzhuTrainConfig, TrainConfig
from scrofazero.train.learner import average_of, make_optimizer
from scrofazero.train.replay import ReplayBuffer
from scrofazero.train.schedule import PHASE_KEYS, in_force, phase_index
from scrofazero.train.selfplay import SelfPlayRecords


def pick_device(name: str) -> torch.device:
    """'auto' -> cuda when available, else cpu; anything else is passed to torch.device."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


GAME = "gongzhu"
EVAL_LOG = {"eval.jsonl": "step"}  # the run's jsonl log and the key of a line's step


class _Optimizer(BaseModel):
    """What torch's optimiser state_dict holds (the rest is checked by load_state_dict)."""

    model_config = ConfigDict(extra="allow")
    state: dict[Any, Any]  # (keyed by parameter index)
    param_groups: list[dict[Any, Any]]


class CheckpointState(BaseModel):
    """The trainer's part of a checkpoint: the types every field must have, so that a crafted
    or damaged file is refused by name before anything of it is used."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)
    model: dict[Any, Any]
    optimizer: _Optimizer
    step: int
    ema: dict[Any, Any] | None = None
    games: int = 0
    train_seconds: float = 0.0
    rng_state: dict[Any, Any] | None = None
    evals: list[dict[Any, Any]] = []
    warm_start: dict[Any, Any] | None = None
    phase: int = -1
    phases: list[dict[Any, Any]] = []
    init_from: dict[Any, Any] | None = None
    replay: list[dict[str, Any]] = []


def checked_state(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload's `extra`, once every field of the trainer's state has its type and the
    weights are finite; CheckpointError naming the file (and the field) otherwise."""
    path = payload["path"]
    if payload.get("optimizer") is None:
        raise CheckpointError(f"{path}: holds a network only (no optimiser state), so it cannot "
                              "be continued exactly; start a new run from it with "
                              "train.init_from=PATH")
    extra: dict[str, Any] = payload.get("extra") or {}
    try:
        CheckpointState.model_validate({**extra, "model": payload.get("model"),
                                        "optimizer": payload.get("optimizer"),
                                        "step": payload.get("step"), "ema": payload.get("ema")},
                                       strict=True)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise CheckpointError(f"{path}: {where}: {first['msg']} (a damaged or crafted "
                              "checkpoint)") from None
    check_finite(payload["model"], path)
    if payload.get("ema") is not None:
        check_finite(payload["ema"], path)
    return extra


class Run:
    """The mutable state of one training run: what a checkpoint must restore, and nothing of
    the settings. Its methods that depend on the settings receive them (`settings`: the run's
    GongzhuTrainConfig; `train`: the train settings in force, `in_force`)."""

    distributed_stats: dict[str, Any]  # set at its end by train/distributed.py's learner

    def __init__(self, settings: GongzhuTrainConfig, device: torch.device):
        t, m = settings.train, settings.model
        self.device = device
        self.dir = Path(settings.checkpoint_dir) / settings.run
        torch.manual_seed(t.seed)  # the initial weights are part of the run's seed
        self.model = PolicyValueNet(hidden=list(m.hidden), num_blocks=m.num_blocks,
                                    value_scale=m.value_scale, aux=m.aux).to(device)
        self.phase = -1  # index into train.schedule of the phase in force (-1: none yet)
        self.optimizer = make_optimizer(self.model, t.lr, tuple(t.betas), t.weight_decay)
        self.replay = ReplayBuffer(max_batches=t.replay_batches)
        self.rng = np.random.default_rng(t.seed)
        self.step = 0  # self-play batches done
        self.games = 0
        self.train_seconds = 0.0  # self-play + learning, evaluation excluded
        self.evals: list[dict[str, Any]] = []
        # summary of the Greed warm start, if one was made
        self.warm_start: dict[str, Any] | None = None
        # where the first network came from (train.init_from)
        self.init_from: dict[str, Any] | None = None
        # phase changes made: phase, step, games, minutes, shape
        self.phases: list[dict[str, Any]] = []
        self.folder: RunFolder | None = None  # the harness's run folder (logs, tensorboard)
        self.ema: PolicyValueNet | None = None  # the weights' average (train.ema > 0)
        self.restart_average(t)

    def in_force(self, settings: GongzhuTrainConfig) -> TrainConfig:
        """The train settings in force at the run's phase: dataclasses.replace of the train
        group by what the schedule's phases up to it set."""
        return in_force(settings.train, settings.model, self.phase)[0]

    def restart_average(self, train: TrainConfig) -> None:
        """Start the weights' average anew at the network's weights (None when train.ema is 0)."""
        self.ema = average_of(self.model) if train.ema > 0 else None

    def is_fresh(self) -> bool:
        """Whether the run has no checkpoint yet: it starts with the warm start and the
        untrained network's evaluation and checkpoint."""
        return self.step == 0 and not (self.dir / "latest.pt").is_file()

    @property
    def network(self) -> PolicyValueNet:
        """The network the run evaluates and saves as its own: the average of the weights when
        the run keeps one, else the trained network itself."""
        return self.model if self.ema is None else self.ema

    def _extra(self, replay: bool = True) -> dict[str, Any]:
        extra = {
            "games": self.games,
            "train_seconds": self.train_seconds,
            "rng_state": self.rng.bit_generator.state,
            "evals": self.evals,
            "warm_start": self.warm_start,
            "phase": self.phase,
            "phases": self.phases,
            "init_from": self.init_from,
        }
        if replay:
            extra["replay"] = [asdict(r) for r in self.replay.batches]
        return extra

    def save(self, settings: GongzhuTrainConfig, milestones: Sequence[str] = ()) -> Path:
        """Checkpoint the run, its `settings` in the envelope; copies of it named `milestones`
        are made before latest.pt moves (so a kill in between redoes the step and its copies on
        resume). With train.state_file the compact state (no replay) is written there too,
        after latest.pt."""
        t = settings.train
        config = settings_dict(settings)
        header = Envelope(GAME, settings=config, step=self.step, random=random_states()).header()
        snapshot = save_checkpoint(
            self.dir, model=self.model, optimizer=self.optimizer, step=self.step,
            config=config, extra=self._extra(), keep=t.keep_checkpoints,
            before_latest=lambda snapshot: keep_milestones(self, snapshot, list(milestones)),
            run=header, ema=self.ema,
        )
        if self.folder is not None:
            self.folder.checkpointed(self.step)
        if t.state_file:
            save_state_file(t.state_file, model=self.model, optimizer=self.optimizer,
                            step=self.step, config=config, extra=self._extra(replay=False),
                            moments=t.state_moments, run=header, weights=t.state_weights,
                            ema=self.ema)
        return snapshot

    def restore(self, settings: GongzhuTrainConfig, payload: dict[str, Any]) -> None:
        """Continue from a checkpoint payload (load_checkpoint's), its state checked first
        (checked_state): CheckpointError naming the file for one that does not fit."""
        path = payload["path"]
        extra = checked_state(payload)
        self.phase = int(extra.get("phase", -1))
        train, shape = in_force(settings.train, settings.model, self.phase)
        expected = dict(self.model.config(), **shape)
        if payload["model_config"] != expected:
            raise ValueError(
                f"{path}: the checkpoint's network {payload['model_config']} differs from the "
                f"one the run's settings give at its phase {self.phase}: {expected}; resume with "
                "the run's own settings"
            )
        if shape != self._shape():
            self._replace_model(PolicyValueNet.from_config(expected).to(self.device), train)
        self.model.load_state_dict(payload["model"])
        self.restart_average(train)  # a file from a run without an average: it starts here
        if self.ema is not None and payload.get("ema") is not None:
            try:
                self.ema.load_state_dict(payload["ema"])
            except RuntimeError as err:
                raise CheckpointError(f"{path}: ema does not fit its network ({err})") from None
        self.optimizer.load_state_dict(payload["optimizer"])
        self.step = int(payload["step"])
        self.games = int(extra.get("games", 0))
        self.train_seconds = float(extra.get("train_seconds", 0.0))
        if "rng_state" in extra:
            self.rng.bit_generator.state = extra["rng_state"]
        self.replay = ReplayBuffer(max_batches=train.replay_batches)
        for rec in extra.get("replay", []):
            self.replay.add(SelfPlayRecords(**rec))
        self.evals = list(extra.get("evals", []))
        self.warm_start = extra.get("warm_start")
        self.init_from = extra.get("init_from")
        self.phases = list(extra.get("phases", []))

    def _shape(self) -> dict[str, Any]:
        """The network's shape as phases name it."""
        return {"hidden": list(self.model.hidden), "num_blocks": self.model.num_blocks}

    def _replace_model(self, model: PolicyValueNet, train: TrainConfig) -> None:
        """A new network (grown or restored in another shape) with a fresh optimiser (`train`:
        the settings in force) and the weights' average started anew at it: the old average
        has the old shape, and a grown network computes what the trained one did, not what the
        average did."""
        self.model = model.eval()
        self.optimizer = make_optimizer(self.model, train.lr, tuple(train.betas),
                                        train.weight_decay)
        self.restart_average(train)

    def init_network(self, path: str, train: TrainConfig) -> None:
        """Start from the network in `path` (train.init_from), grown to the configured shape if
        it is smaller; the optimiser stays fresh."""
        payload = load_checkpoint(path, map_location="cpu")
        parent = load_model(payload).to(self.device)
        want = self.model.config()
        grown = parent.config() != want
        if grown:
            grows = ("hidden", "num_blocks", "aux")
            rest = {k: v for k, v in want.items() if k not in grows}
            have = {k: v for k, v in parent.config().items() if k not in grows}
            if have != rest:
                raise ValueError(f"train.init_from={path}: its network {parent.config()} cannot "
                                 f"become the configured {want} (only widths, blocks and the "
                                 "auxiliary heads grow)")
            try:
                parent = grow(parent, want["hidden"], want["num_blocks"],
                              generator=torch.Generator().manual_seed(int(train.seed)),
                              aux=self.model.aux)
            except ValueError as err:
                raise ValueError(f"train.init_from={path}: {err}") from None
        self._replace_model(parent, train)
        extra = payload.get("extra") or {}
        self.init_from = {
            "path": str(path), "sha256": file_sha256(path), "step": int(payload["step"]),
            "model_config": payload["model_config"], "grown": grown,
            "games": extra.get("games"), "train_minutes": (
                None if extra.get("train_seconds") is None else extra["train_seconds"] / 60),
            "init_from": extra.get("init_from"), "phases": extra.get("phases"),
        }

    def advance_phase(self, settings: GongzhuTrainConfig) -> bool:
        """Enter the schedule's phase for the games played so far, if it changed: new settings,
        the network grown (fresh optimiser) when the phase's shape is bigger. True when the
        network object was replaced (a caller holding it must take the new one)."""
        index = phase_index(settings.train.schedule, self.games)
        if index == self.phase:
            return False
        train, shape = in_force(settings.train, settings.model, index)
        replaced = shape != self._shape()
        self.phase = index
        if replaced:
            gen = torch.Generator().manual_seed(int(train.seed) * 1_000_003 + self.games)
            self._replace_model(grow(self.model, shape["hidden"], shape["num_blocks"], gen),
                                train)
        else:
            for group in self.optimizer.param_groups:
                group["lr"] = train.lr
        old = list(self.replay.batches)
        self.replay = ReplayBuffer(max_batches=train.replay_batches)
        for rec in old:
            self.replay.add(rec)
        self.phases.append({"phase": index, "step": self.step, "games": self.games,
                            "train_minutes": self.train_seconds / 60, "grown": replaced,
                            **{key: getattr(train, key) for key in PHASE_KEYS}, **shape})
        return replaced


def milestones_passed(run: Run, t: TrainConfig, before_seconds: float,
                      before_games: int) -> list[str]:
    """File names of the milestones passed since (before_seconds, before_games): minutes of
    training (milestone_<M>min.pt) and self-play games (games_<N>.pt), by the train settings
    `t`."""
    names = [f"milestone_{m:g}min.pt" for m in t.milestone_minutes
             if before_seconds < 60 * m <= run.train_seconds]
    names += [f"games_{int(n)}.pt" for n in t.milestone_games if before_games < n <= run.games]
    return names


def keep_milestones(run: Run, path: Path, names: list[str]) -> None:
    """Copy checkpoint `path` to each milestone file in `names` (never pruned), so figures
    'after M minutes' or 'after N games' of training can be measured later."""
    for name in names:
        copy_atomic(path, run.dir / name)


# Settings that may differ on resume without being named: run length, logging, evaluation and
# resources; everything else changes the run and must be allowed with resume_overrides=[...].
ALWAYS_MAY_CHANGE = (
    "resume", "resume_overrides", "resume_from", "run", "progress", "debug", "log_dir",
    "checkpoint_dir", "train.max_minutes", "train.max_batches", "train.eval_every",
    "train.eval_deals", "train.eval_raw_deals", "train.eval_workers", "train.checkpoint_every",
    "train.keep_checkpoints", "train.milestone_minutes", "train.milestone_games",
    "train.device", "train.threads", "train.state_file", "train.state_moments",
    "train.state_weights", "train.init_from", "train.actors", "distributed", "ray",
    "inference",  # the inference fits' settings (learner=belief|behaviour), unread by self-play
)


def load_envelope(path: str | Path) -> Envelope:
    """The run envelope of Gongzhu checkpoint `path` around its payload; a file written before
    the envelope (no `run` header) gives its config as the settings and no random states.
    CheckpointError naming the file for a network-only file (e.g. models/scrofazero.pt copied in
    as latest.pt), RunError for a header that does not fit."""
    payload = load_checkpoint(path, map_location="cpu")
    if is_model_only(payload):
        raise CheckpointError(f"{path}: a model-only file (a network without optimiser, "
                              "settings or history), not a training state; start a new run "
                              "from it with train.init_from=PATH")
    return read_envelope(payload.get("run"), payload, path, GAME, step=int(payload["step"]),
                         legacy_settings=payload.get("config") or {},
                         counted=f"the checkpoint's step {payload['step']}")


def settings_dict(settings: GongzhuTrainConfig) -> dict[str, Any]:
    """The run's settings as plain data: what its checkpoints record and a resume compares."""
    return dataclasses.asdict(settings)


def open_run(settings: GongzhuTrainConfig, folder: RunFolder) -> Run:
    """The run of `settings`, fresh or restored from its latest checkpoint (resume=true) or from
    a state file (resume_from=PATH, into a folder without checkpoints); `folder` (held) then
    begins."""
    t = settings.train
    if t.threads > 0:
        torch.set_num_threads(t.threads)
    torch.set_flush_denormal(True)  # denormal weights slow CPU training many-fold (evaluator.py)
    run = Run(settings, pick_device(t.device))
    run.folder = folder
    latest = latest_checkpoint(run.dir)
    from_state = bool(settings.resume_from) and latest is None
    source = (Path(settings.resume_from) if from_state and settings.resume_from
              else latest or run.dir / "latest.pt")
    envelope = resume_or_start(
        source, resume=settings.resume or from_state, load=load_envelope,
        settings=settings_dict(settings), always=ALWAYS_MAY_CHANGE,
        overrides=list(settings.resume_overrides), found=latest)
    if envelope is not None:
        run.restore(settings, envelope.state)
    elif t.init_from:
        run.init_network(t.init_from, t)
    run.model.eval()  # trained only within the learner's passes (train/loop.py learn_from)
    folder.begin(envelope)
    return run
