"""The training driver behind `train.py`: self-play -> replay -> learner -> eval -> checkpoint.

The run folder (checkpoints/<run>/, locked), tensorboard (runs/<run>/), the fresh-or-resume
decision and eval.jsonl belong to the run harness (scrofazero/runs.py); this module supplies the
Gongzhu run: a checkpoint holds model, optimiser, step, config, the replay, the rng states and the
evaluation history (inside the harness's envelope), so `resume=true` continues a killed run from
its last checkpoint with nothing else lost and nothing logged twice. An evaluation is made before
the checkpoint of its step (from a model-only file) and its eval.jsonl line written then;
tensorboard is flushed before every checkpoint; on resume the harness drops what came after the
checkpoint from both.

With train.ema > 0 the run also keeps an exponential moving average of the network's weights
(one update after each optimiser step): self-play and the learner use the weights, the periodic
evaluation and the network of every checkpoint, milestone and state file (load_model's) are the
average. It is part of the run's state (restored on resume; a file without one starts it from
the weights) and starts again from the weights whenever the network is replaced (grown by the
schedule, started from train.init_from) and after the warm start.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from pydantic import BaseModel, ConfigDict, ValidationError
from tqdm import tqdm

from scrofazero.agents import player_spec
from scrofazero.atomic import copy_atomic, strict_json
from scrofazero.eval.arena import duplicate_match
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.nn.checkpoint import (
    MOMENTS,
    WEIGHTS,
    CheckpointError,
    check_finite,
    file_sha256,
    is_model_only,
    latest_checkpoint,
    load_checkpoint,
    load_model,
    save_checkpoint,
    save_model_file,
    save_state_file,
)
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.grow import grow
from scrofazero.nn.network import PolicyValueNet
from scrofazero.runs import (
    Envelope,
    RunFolder,
    random_states,
    read_envelope,
    resume_or_start,
)
from scrofazero.search.mcts import MCTSConfig, check_search
from scrofazero.train.learner import average_of, make_optimizer, train_step, update_average
from scrofazero.train.replay import ReplayBuffer
from scrofazero.train.schedule import (
    INFERENCE,
    PHASE_KEYS,
    check_schedule,
    phase_index,
    phase_settings,
)
from scrofazero.train.selfplay import (
    POLICY_TARGETS,
    SelfPlayRecords,
    play_selfplay,
    selfplay_options,
)
from scrofazero.train.warm_start import check_warm_start, warm_start


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
    state: dict
    param_groups: list[dict]


class _State(BaseModel):
    """The trainer's part of a checkpoint: the types every field must have, so that a crafted
    or damaged file is refused by name before anything of it is used."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)
    model: dict
    optimizer: _Optimizer
    step: int
    ema: Optional[dict] = None
    games: int = 0
    train_seconds: float = 0.0
    rng_state: Optional[dict] = None
    evals: list[dict] = []
    warm_start: Optional[dict] = None
    phase: int = -1
    phases: list[dict] = []
    init_from: Optional[dict] = None
    replay: list[dict[str, Any]] = []


def _checked_state(payload: dict) -> dict:
    """The payload's `extra`, once every field of the trainer's state has its type and the
    weights are finite; CheckpointError naming the file (and the field) otherwise."""
    path = payload["path"]
    if payload.get("optimizer") is None:
        raise CheckpointError(f"{path}: holds a network only (no optimiser state), so it cannot "
                              "be continued exactly; start a new run from it with "
                              "train.init_from=PATH")
    extra = payload.get("extra") or {}
    try:
        _State.model_validate({**extra, "model": payload.get("model"),
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
    """Mutable state of one training run (what a checkpoint must restore)."""

    def __init__(self, cfg: DictConfig, device: torch.device):
        self.cfg = cfg
        self.device = device
        self.dir = Path(cfg.checkpoint_dir) / cfg.run
        torch.manual_seed(cfg.train.seed)  # the initial weights are part of the run's seed
        self.model = PolicyValueNet(
            hidden=list(cfg.model.hidden), num_blocks=cfg.model.num_blocks,
            value_scale=cfg.model.value_scale, aux=cfg.model.aux,
        ).to(device)
        t = cfg.train
        self.phase = -1  # index into train.schedule of the phase in force (-1: none yet)
        self.settings = {k: t[k] for k in PHASE_KEYS}  # the phase-settable train settings now
        self.optimizer = make_optimizer(self.model, t.lr, tuple(t.betas), t.weight_decay)
        self.replay = ReplayBuffer(max_batches=t.replay_batches)
        self.rng = np.random.default_rng(t.seed)
        self.step = 0  # self-play batches done
        self.games = 0
        self.train_seconds = 0.0  # self-play + learning, evaluation excluded
        self.evals: list[dict] = []
        self.warm_start: dict | None = None  # summary of the Greed warm start, if one was made
        self.init_from: dict | None = None  # where the first network came from (train.init_from)
        self.phases: list[dict] = []  # phase changes made: phase, step, games, minutes, shape
        self.folder: RunFolder | None = None  # the harness's run folder (logs, tensorboard)
        self.ema: PolicyValueNet | None = None  # the weights' average (train.ema > 0)
        self.restart_average()

    def restart_average(self) -> None:
        """Start the weights' average anew at the network's weights (None when train.ema is 0)."""
        self.ema = average_of(self.model) if self.cfg.train.ema > 0 else None

    @property
    def network(self) -> PolicyValueNet:
        """The network the run evaluates and saves as its own: the average of the weights when
        the run keeps one, else the trained network itself."""
        return self.model if self.ema is None else self.ema

    def _extra(self, replay: bool = True) -> dict:
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

    def save(self, milestones: list[str] = ()) -> Path:
        """Checkpoint the run; copies of it named `milestones` are made before latest.pt moves
        (so a kill in between redoes the step and its copies on resume). With train.state_file
        the compact state (no replay) is written there too, after latest.pt."""
        config = OmegaConf.to_container(self.cfg, resolve=True)
        header = Envelope(GAME, settings=config, step=self.step, random=random_states()).header()
        snapshot = save_checkpoint(
            self.dir, model=self.model, optimizer=self.optimizer, step=self.step,
            config=config, extra=self._extra(), keep=self.cfg.train.keep_checkpoints,
            before_latest=lambda snapshot: _keep_milestones(self, snapshot, list(milestones)),
            run=header, ema=self.ema,
        )
        if self.folder is not None:
            self.folder.checkpointed(self.step)
        if self.cfg.train.state_file:
            save_state_file(self.cfg.train.state_file, model=self.model, optimizer=self.optimizer,
                            step=self.step, config=config, extra=self._extra(replay=False),
                            moments=self.cfg.train.state_moments, run=header,
                            weights=self.cfg.train.state_weights, ema=self.ema)
        return snapshot

    def _phase_config(self, index: int) -> tuple[dict, dict]:
        """(train settings, network shape) of schedule phase `index` (-1: before any)."""
        t, m = self.cfg.train, self.cfg.model
        return phase_settings(t.schedule, index, {k: t[k] for k in PHASE_KEYS},
                              {"hidden": list(m.hidden), "num_blocks": m.num_blocks})

    def restore(self, payload: dict) -> None:
        """Continue from a checkpoint payload (load_checkpoint's), its state checked first
        (_checked_state): CheckpointError naming the file for one that does not fit."""
        path = payload["path"]
        extra = _checked_state(payload)
        self.phase = int(extra.get("phase", -1))
        self.settings, shape = self._phase_config(self.phase)
        expected = dict(self.model.config(), **shape)
        if payload["model_config"] != expected:
            raise ValueError(
                f"{path}: the checkpoint's network {payload['model_config']} differs from the "
                f"one the run's settings give at its phase {self.phase}: {expected}; resume with "
                "the run's own settings"
            )
        if shape != self._shape():
            self._replace_model(PolicyValueNet.from_config(expected).to(self.device))
        self.model.load_state_dict(payload["model"])
        self.restart_average()  # a file from a run without an average: it starts here
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
        self.replay = ReplayBuffer(max_batches=self.settings["replay_batches"])
        for rec in extra.get("replay", []):
            self.replay.add(SelfPlayRecords(**rec))
        self.evals = list(extra.get("evals", []))
        self.warm_start = extra.get("warm_start")
        self.init_from = extra.get("init_from")
        self.phases = list(extra.get("phases", []))

    def _shape(self) -> dict:
        """The network's shape as phases name it."""
        return {"hidden": list(self.model.hidden), "num_blocks": self.model.num_blocks}

    def _replace_model(self, model: PolicyValueNet) -> None:
        """A new network (grown or restored in another shape) with a fresh optimiser and the
        weights' average started anew at it: the old average has the old shape, and a grown
        network computes what the trained one did, not what the average did."""
        t = self.cfg.train
        self.model = model.eval()
        self.optimizer = make_optimizer(self.model, self.settings["lr"], tuple(t.betas),
                                        t.weight_decay)
        self.restart_average()

    def init_network(self, path: str) -> None:
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
                              generator=torch.Generator().manual_seed(int(self.cfg.train.seed)),
                              aux=self.model.aux)
            except ValueError as err:
                raise ValueError(f"train.init_from={path}: {err}") from None
        self._replace_model(parent)
        extra = payload.get("extra") or {}
        self.init_from = {
            "path": str(path), "sha256": file_sha256(path), "step": int(payload["step"]),
            "model_config": payload["model_config"], "grown": grown,
            "games": extra.get("games"), "train_minutes": (
                None if extra.get("train_seconds") is None else extra["train_seconds"] / 60),
            "init_from": extra.get("init_from"), "phases": extra.get("phases"),
        }

    def advance_phase(self) -> bool:
        """Enter the schedule's phase for the games played so far, if it changed: new settings,
        the network grown (fresh optimiser) when the phase's shape is bigger. True when the
        network object was replaced (a caller holding it must take the new one)."""
        index = phase_index(self.cfg.train.schedule, self.games)
        if index == self.phase:
            return False
        settings, shape = self._phase_config(index)
        replaced = shape != self._shape()
        self.phase, self.settings = index, settings
        if replaced:
            gen = torch.Generator().manual_seed(int(self.cfg.train.seed) * 1_000_003 + self.games)
            self._replace_model(grow(self.model, shape["hidden"], shape["num_blocks"], gen))
        else:
            for group in self.optimizer.param_groups:
                group["lr"] = settings["lr"]
        old = list(self.replay.batches)
        self.replay = ReplayBuffer(max_batches=settings["replay_batches"])
        for rec in old:
            self.replay.add(rec)
        self.phases.append({"phase": index, "step": self.step, "games": self.games,
                            "train_minutes": self.train_seconds / 60, "grown": replaced,
                            **settings, **shape})
        return replaced




def _learn(run: Run) -> dict:
    t = run.cfg.train
    run.model.train()
    sums: dict[str, float] = {}
    count = 0
    for batch in run.replay.minibatches(t.minibatch, run.settings["passes"], run.rng):
        metrics = train_step(run.model, run.optimizer, batch, run.device,
                             value_weight=t.value_weight, value_unit=t.value_unit,
                             value_loss=t.value_loss, aux_weight=t.aux_weight)
        if run.ema is not None:
            update_average(run.ema, run.model, t.ema)
        for key, value in metrics.items():
            sums[key] = sums.get(key, 0.0) + value
        count += 1
    run.model.eval()
    return {k: v / max(count, 1) for k, v in sums.items()}


def _evaluate(run: Run, deals: np.ndarray) -> dict:
    """Raw network (1-ply value search over sampled deals) vs two Mr. Greeds and vs Mr. Random,
    for the run's network as it is now (the weights' average with train.ema; written to a
    model-only file the players load)."""
    t = run.cfg.train
    model_file = save_model_file(run.dir / "eval_model.pt", run.network, run.step)
    raw = player_spec("raw")
    # The paper's benchmark: uniform deals. The raw player's default is the belief network's
    # deals, which would change what the training curves measure and break their comparison
    # with earlier runs and with the original's curve.
    settings = raw.settings_from({"num_deals": t.eval_raw_deals, "sampling": "uniform"})
    kwargs = {"raw": raw.arguments(settings,
                                   checkpoint=str(model_file))}
    started = time.perf_counter()
    greed = duplicate_match("raw", "greed", deals, seed=t.seed, workers=t.eval_workers,
                            progress=False, agent_kwargs=kwargs)
    rand = duplicate_match("raw", "random", deals, seed=t.seed, workers=t.eval_workers,
                           progress=False, agent_kwargs=kwargs)
    model_file.unlink(missing_ok=True)
    return {
        "step": run.step, "games": run.games, "train_minutes": run.train_seconds / 60,
        "wpg_raw": greed.mean, "wpg_raw_stderr": greed.stderr,
        "vs_random": rand.mean, "vs_random_stderr": rand.stderr,
        "deals": greed.deals, "eval_seconds": time.perf_counter() - started,
    }


def _log_eval(run: Run, writer, result: dict) -> None:
    """Add an evaluation to the run's history, eval.jsonl and tensorboard (made before the
    checkpoint of its step: on resume the harness drops lines and events past the checkpoint)."""
    run.evals.append(result)
    run.folder.log("eval.jsonl", result)
    writer.add_scalar("eval/wpg_raw", result["wpg_raw"], run.step)
    writer.add_scalar("eval/vs_random", result["vs_random"], run.step)


def _milestones_passed(run: Run, before_seconds: float, before_games: int) -> list[str]:
    """File names of the milestones passed since (before_seconds, before_games): minutes of
    training (milestone_<M>min.pt) and self-play games (games_<N>.pt)."""
    t = run.cfg.train
    names = [f"milestone_{m:g}min.pt" for m in t.milestone_minutes
             if before_seconds < 60 * m <= run.train_seconds]
    names += [f"games_{int(n)}.pt" for n in t.milestone_games if before_games < n <= run.games]
    return names


def _keep_milestones(run: Run, path: Path, names: list[str]) -> None:
    """Copy checkpoint `path` to each milestone file in `names` (never pruned), so figures
    'after M minutes' or 'after N games' of training can be measured later."""
    for name in names:
        copy_atomic(path, run.dir / name)


def _warm_start(run: Run, writer) -> None:
    """Fit the fresh network to Mr. Greed's games (train/warm_start.py); its time counts as
    training time and its losses go to tensorboard under warm_start/ by epoch."""
    t = run.cfg.train
    ws = OmegaConf.to_object(t.warm_start)
    if run.cfg.progress:
        print(f"warm start: {ws.games} Mr. Greed games, then {ws.epochs} epochs of fitting",
              flush=True)
    started = time.perf_counter()
    # Its own random stream, so self-play's deals are those of the same run without it.
    rng = np.random.default_rng([t.seed, 1])
    summary = warm_start(run.model, ws, rng, run.device, value_unit=t.value_unit,
                         value_loss=t.value_loss)
    run.restart_average()  # the average is of self-play's training, from the fitted network
    run.train_seconds += time.perf_counter() - started
    run.warm_start = summary
    for epoch, metrics in enumerate(summary["epochs"], start=1):
        for key, value in metrics.items():
            writer.add_scalar(f"warm_start/{key.split('/')[-1]}", value, epoch)
    if run.cfg.progress:
        last = summary["epochs"][-1]
        print(f"warm start done in {(time.perf_counter() - started) / 60:.1f} min: policy "
              f"{last['loss/policy']:.3f}, value {last['loss/value']:.1f}", flush=True)


def _should_stop(run: Run) -> bool:
    t = run.cfg.train
    if t.max_batches is not None and run.step >= t.max_batches:
        return True
    return t.max_minutes is not None and run.train_seconds >= 60 * t.max_minutes


# Settings that may differ on resume without being named: run length, logging, evaluation and
# resources; everything else changes the run and must be allowed with resume_overrides=[...].
ALWAYS_MAY_CHANGE = (
    "resume", "resume_overrides", "resume_from", "run", "progress", "debug", "log_dir",
    "checkpoint_dir", "train.max_minutes", "train.max_batches", "train.eval_every",
    "train.eval_deals", "train.eval_raw_deals", "train.eval_workers", "train.checkpoint_every",
    "train.keep_checkpoints", "train.milestone_minutes", "train.milestone_games",
    "train.device", "train.threads", "train.state_file", "train.state_moments",
    "train.state_weights", "train.init_from", "distributed", "ray",
)


def check_settings(cfg: DictConfig) -> MCTSConfig:
    """Refuse settings that make no sense, naming each; returns the search config."""
    t = cfg.train
    name = str(cfg.run)
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        raise ValueError(f"run={name!r}: a run name is a plain folder name, not empty or a path")
    positive = {"train.games_per_batch": t.games_per_batch, "train.replay_batches":
                t.replay_batches, "train.passes": t.passes, "train.minibatch": t.minibatch,
                "train.checkpoint_every": t.checkpoint_every, "train.keep_checkpoints":
                t.keep_checkpoints, "train.eval_raw_deals": t.eval_raw_deals,
                "train.eval_workers": t.eval_workers}
    if t.eval_every > 0:
        positive["train.eval_deals"] = t.eval_deals
    for key, value in positive.items():
        if value < 1:
            raise ValueError(f"{key}={value}: must be >= 1")
    for key, value in (("train.eval_every", t.eval_every), ("train.threads", t.threads)):
        if value < 0:
            raise ValueError(f"{key}={value}: must be >= 0")
    if not t.lr > 0 or not t.value_unit > 0 or t.value_weight < 0:
        raise ValueError(f"train.lr={t.lr}, train.value_unit={t.value_unit} must be > 0 and "
                         f"train.value_weight={t.value_weight} >= 0")
    if not 0.0 < t.playout_full <= 1.0 or not 0.0 < t.playout_cheap <= 1.0:
        raise ValueError(f"train.playout_full={t.playout_full} and train.playout_cheap="
                         f"{t.playout_cheap}: both must lie in (0, 1]")
    if t.policy_target not in POLICY_TARGETS:
        raise ValueError(f"train.policy_target={t.policy_target!r}: choose "
                         f"{' or '.join(POLICY_TARGETS)}")
    if not 0.0 <= t.outcome_weight <= 1.0:
        raise ValueError(f"train.outcome_weight={t.outcome_weight}: must lie in [0, 1]")
    for key in ("max_batches", "max_minutes"):
        if t[key] is not None and t[key] < 0:
            raise ValueError(f"train.{key}={t[key]}: must be >= 0")
    check_warm_start(OmegaConf.to_object(t.warm_start), "train.warm_start")
    check_schedule(list(t.schedule), {k: t[k] for k in PHASE_KEYS},
                   {"hidden": list(cfg.model.hidden), "num_blocks": cfg.model.num_blocks})
    if t.state_moments not in MOMENTS:
        raise ValueError(f"train.state_moments={t.state_moments!r}: choose {' or '.join(MOMENTS)}")
    if t.inference not in INFERENCE:
        raise ValueError(f"train.inference={t.inference!r}: choose {' or '.join(INFERENCE)}")
    if not 0.0 <= t.ema < 1.0:  # also NaN
        raise ValueError(f"train.ema={t.ema}: the average's decay per optimiser step must lie in "
                         "[0, 1) (0: off; 0.999 averages about the last 1000 steps)")
    if t.state_weights not in WEIGHTS:
        raise ValueError(f"train.state_weights={t.state_weights!r}: choose {' or '.join(WEIGHTS)}")
    if cfg.get("resume_from") and cfg.resume:
        raise ValueError("resume=true and resume_from=PATH: resume continues this run's folder, "
                         "resume_from a state file in a new folder; choose one")
    if cfg.get("resume_from") and t.init_from:
        raise ValueError("train.init_from and resume_from: a continued run keeps its network; "
                         "choose one")
    mcts = OmegaConf.to_object(cfg.search)  # an MCTSConfig
    check_search(mcts, "search")
    return mcts


def load_envelope(path) -> Envelope:
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


def _open_run(cfg: DictConfig, folder: RunFolder) -> Run:
    """The run of cfg, fresh or restored from its latest checkpoint (resume=true) or from a state
    file (resume_from=PATH, into a folder without checkpoints); `folder` (held) then begins."""
    if cfg.train.threads > 0:
        torch.set_num_threads(cfg.train.threads)
    torch.set_flush_denormal(True)  # denormal weights slow CPU training many-fold (evaluator.py)
    run = Run(cfg, pick_device(cfg.train.device))
    run.folder = folder
    latest = latest_checkpoint(run.dir)
    from_state = bool(cfg.get("resume_from")) and latest is None
    source = Path(cfg.resume_from) if from_state else latest or run.dir / "latest.pt"
    current = OmegaConf.to_container(cfg, resolve=True)
    envelope = resume_or_start(
        source, resume=bool(cfg.resume) or from_state, load=load_envelope,
        settings=current, always=ALWAYS_MAY_CHANGE,
        overrides=list(cfg.get("resume_overrides") or []), found=latest)
    if envelope is not None:
        run.restore(envelope.state)
    elif cfg.train.init_from:
        run.init_network(cfg.train.init_from)
    folder.begin(envelope)
    return run


def run_training(cfg: DictConfig, train_fn=None) -> Run:
    """Train Gongzhu until max_batches / max_minutes (or forever); returns the finished run.
    train_fn(run, mcts) runs the batches (default: this process's self-play then learn loop;
    train/distributed.py passes Ray's).

    The run folder is the harness's (runs.RunFolder): locked for the whole run; a fresh run that
    fails before its first batch is checkpointed leaves no folder behind."""
    mcts = check_settings(cfg)
    with RunFolder(Path(cfg.checkpoint_dir) / cfg.run, Path(cfg.log_dir) / cfg.run,
                   logs=EVAL_LOG) as folder:
        run = _open_run(cfg, folder)
        (train_fn or _train)(run, mcts)
    return run


class Session:
    """What a loop over batches shares between them: tensorboard, the evaluation deals, the
    progress bar; `begin` makes the untrained network's evaluation and checkpoint on a fresh
    run, `finish_batch` does everything after a batch of records was learned from."""

    def __init__(self, run: Run):
        cfg, t = run.cfg, run.cfg.train
        self.run = run
        # The harness's tensorboard: events past the checkpoint (a killed run's last steps)
        # were purged, to be made again.
        self.writer = run.folder.writer
        self.eval_deals = load_deals(limit=t.eval_deals) if t.eval_every > 0 else None
        run.model.eval()
        if run.step == 0 and not (run.dir / "latest.pt").is_file():
            if t.warm_start.games > 0:
                _warm_start(run, self.writer)
            if self.eval_deals is not None:
                _log_eval(run, self.writer, _evaluate(run, self.eval_deals))
            self.writer.flush()
            run.save(_milestones_passed(run, -1.0, -1))  # the untrained network
        if run.step == 0 and run.init_from is not None:
            self.writer.add_text("train/init_from", json.dumps(strict_json(run.init_from)), 0)
        self.bar = tqdm(total=t.max_batches, initial=run.step, unit="batch",
                        disable=not cfg.progress, desc=f"train {cfg.run}")

    def finish_batch(self, records: SelfPlayRecords, metrics: dict, seconds: float,
                     play_seconds: float) -> None:
        """Count the batch (its records already learned from, `seconds` of training time),
        log, evaluate and checkpoint when due."""
        run, t, writer = self.run, self.run.cfg.train, self.writer
        before, before_games = run.train_seconds, run.games
        run.train_seconds += seconds
        run.step += 1
        run.games += records.games
        metrics["selfplay/games_per_s"] = records.games / max(play_seconds, 1e-9)
        metrics["selfplay/simulations_per_s"] = records.simulations / max(play_seconds, 1e-9)
        metrics["selfplay/evaluations_per_s"] = records.evaluations / max(play_seconds, 1e-9)
        # How far the search's bootstrapped target sits from what the games actually gave.
        metrics["selfplay/value_target_gap"] = float(
            np.abs(records.search_value - records.outcome_value).mean())
        metrics["train/games"] = run.games
        metrics["train/minutes"] = run.train_seconds / 60
        for key, value in metrics.items():
            writer.add_scalar(key, value, run.step)
        due_eval = self.eval_deals is not None and run.step % t.eval_every == 0
        if due_eval:  # evaluate, then checkpoint: the result is in the checkpoint of its step
            _log_eval(run, writer, _evaluate(run, self.eval_deals))
        passed = _milestones_passed(run, before, before_games)
        if due_eval or passed or run.step % t.checkpoint_every == 0 or _should_stop(run):
            writer.flush()  # tensorboard holds no less than the checkpoint
            run.save(passed)
        self.bar.update(1)
        self.bar.set_postfix(policy=f"{metrics.get('loss/policy', 0):.3f}",
                             value=f"{metrics.get('loss/value', 0):.3f}",
                             gps=f"{metrics['selfplay/games_per_s']:.1f}",
                             wpg=f"{run.evals[-1]['wpg_raw']:+.0f}" if run.evals else "-")

    def enter_phase(self) -> bool:
        """Run.advance_phase, logged (tensorboard train/phase, a line when progress is on); True
        when the network was replaced."""
        run = self.run
        before = run.phase
        replaced = run.advance_phase()
        if run.phase != before:
            self.writer.add_scalar("train/phase", run.phase, run.step)
            change = run.phases[-1]
            self.writer.add_text("train/phases", json.dumps(strict_json(change)), run.step)
            if run.cfg.progress:
                tqdm.write(f"phase {run.phase} from {run.games} games: "
                           + ", ".join(f"{k}={change[k]}" for k in PHASE_KEYS)
                           + (f"; network grown to hidden={change['hidden']}, "
                              f"num_blocks={change['num_blocks']}" if replaced else ""))
        return replaced

    def close(self) -> None:
        self.bar.close()
        self.writer.close()


def learn_from(run: Run, records: SelfPlayRecords) -> dict:
    """Add a batch of records to the replay and make the learner's passes over it."""
    run.replay.add(records)
    return _learn(run)


def _train(run: Run, mcts: MCTSConfig) -> None:
    t = run.cfg.train
    session = Session(run)
    evaluator = NetworkEvaluator(run.model, device=run.device)
    while not _should_stop(run):
        if session.enter_phase():
            evaluator = NetworkEvaluator(run.model, device=run.device)
        started = time.perf_counter()
        records = play_selfplay(evaluator, run.settings["games_per_batch"], run.rng, mcts,
                                **selfplay_options(t, run.settings))
        play_seconds = time.perf_counter() - started
        metrics = learn_from(run, records)
        session.finish_batch(records, metrics, time.perf_counter() - started, play_seconds)
    session.close()
