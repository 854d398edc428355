"""The training driver behind `train.py`: self-play -> replay -> learner -> checkpoint -> eval.

Owns the run directory (checkpoints/<run>/), tensorboard (runs/<run>/), the tqdm bar and
resuming: a checkpoint holds model, optimiser, step, config, the replay and the rng state, so
`resume=true` continues a killed run from its last checkpoint with nothing else lost.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from scrofazero.atomic import copy_atomic
from scrofazero.eval.arena import duplicate_match
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.nn.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet
from scrofazero.train.learner import make_optimizer, train_step
from scrofazero.train.replay import ReplayBuffer
from scrofazero.train.selfplay import SelfPlayRecords, play_selfplay


def pick_device(name: str) -> torch.device:
    """'auto' -> cuda when available, else cpu; anything else is passed to torch.device."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


class Run:
    """Mutable state of one training run (what a checkpoint must restore)."""

    def __init__(self, cfg: DictConfig, device: torch.device):
        self.cfg = cfg
        self.device = device
        self.dir = Path(cfg.checkpoint_dir) / cfg.run
        torch.manual_seed(cfg.train.seed)  # the initial weights are part of the run's seed
        self.model = PolicyValueNet(
            hidden=list(cfg.model.hidden), num_blocks=cfg.model.num_blocks,
            value_scale=cfg.model.value_scale,
        ).to(device)
        t = cfg.train
        self.optimizer = make_optimizer(self.model, t.lr, tuple(t.betas), t.weight_decay)
        self.replay = ReplayBuffer(max_batches=t.replay_batches)
        self.rng = np.random.default_rng(t.seed)
        self.step = 0  # self-play batches done
        self.games = 0
        self.train_seconds = 0.0  # self-play + learning, evaluation excluded
        self.evals: list[dict] = []

    def save(self) -> Path:
        extra = {
            "games": self.games,
            "train_seconds": self.train_seconds,
            "rng_state": self.rng.bit_generator.state,
            "replay": [asdict(r) for r in self.replay.batches],
            "evals": self.evals,
        }
        return save_checkpoint(
            self.dir, model=self.model, optimizer=self.optimizer, step=self.step,
            config=OmegaConf.to_container(self.cfg, resolve=True), extra=extra,
            keep=self.cfg.train.keep_checkpoints,
        )

    def restore(self, path: Path) -> None:
        payload = load_checkpoint(path, map_location="cpu")
        if payload["model_config"] != self.model.config():
            raise ValueError(
                f"{path}: the checkpoint's network {payload['model_config']} differs from the "
                f"configured one {self.model.config()}; resume with the run's own settings"
            )
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        self.step = int(payload["step"])
        extra = payload.get("extra") or {}
        self.games = int(extra.get("games", 0))
        self.train_seconds = float(extra.get("train_seconds", 0.0))
        if "rng_state" in extra:
            self.rng.bit_generator.state = extra["rng_state"]
        for rec in extra.get("replay", []):
            self.replay.add(SelfPlayRecords(**rec))
        self.evals = list(extra.get("evals", []))


def _learn(run: Run) -> dict:
    t = run.cfg.train
    run.model.train()
    sums: dict[str, float] = {}
    count = 0
    for batch in run.replay.minibatches(t.minibatch, t.passes, run.rng):
        metrics = train_step(run.model, run.optimizer, batch, run.device,
                             value_weight=t.value_weight, value_unit=t.value_unit,
                             value_loss=t.value_loss)
        for key, value in metrics.items():
            sums[key] = sums.get(key, 0.0) + value
        count += 1
    run.model.eval()
    return {k: v / max(count, 1) for k, v in sums.items()}


def _evaluate(run: Run, checkpoint: Path, deals: np.ndarray) -> dict:
    """Raw network (1-ply value search over sampled deals) vs two Mr. Greeds and vs Mr. Random."""

    t = run.cfg.train
    kwargs = {"raw": {"checkpoint": str(checkpoint), "num_deals": t.eval_raw_deals}}
    started = time.perf_counter()
    greed = duplicate_match("raw", "greed", deals, seed=t.seed, workers=t.eval_workers,
                            progress=False, agent_kwargs=kwargs)
    rand = duplicate_match("raw", "random", deals, seed=t.seed, workers=t.eval_workers,
                           progress=False, agent_kwargs=kwargs)
    return {
        "step": run.step, "games": run.games, "train_minutes": run.train_seconds / 60,
        "wpg_raw": greed.mean, "wpg_raw_stderr": greed.stderr,
        "vs_random": rand.mean, "vs_random_stderr": rand.stderr,
        "deals": greed.deals, "eval_seconds": time.perf_counter() - started,
    }


def _log_eval(run: Run, writer, result: dict) -> None:
    run.evals.append(result)
    writer.add_scalar("eval/wpg_raw", result["wpg_raw"], run.step)
    writer.add_scalar("eval/vs_random", result["vs_random"], run.step)
    with open(run.dir / "eval.jsonl", "a") as f:
        f.write(json.dumps(result) + "\n")


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


def _should_stop(run: Run) -> bool:
    t = run.cfg.train
    if t.max_batches is not None and run.step >= t.max_batches:
        return True
    return t.max_minutes is not None and run.train_seconds >= 60 * t.max_minutes


def _open_run(cfg: DictConfig) -> Run:
    if cfg.train.threads > 0:
        torch.set_num_threads(cfg.train.threads)
    torch.set_flush_denormal(True)  # denormal weights slow CPU training many-fold (evaluator.py)
    run = Run(cfg, pick_device(cfg.train.device))
    latest = latest_checkpoint(run.dir)
    if cfg.resume:
        if latest is None:
            raise FileNotFoundError(f"resume=true but {run.dir} holds no checkpoint")
        run.restore(latest)
    elif latest is not None:
        raise FileExistsError(
            f"{latest} exists: pass resume=true to continue that run, or choose another run=NAME"
        )
    run.dir.mkdir(parents=True, exist_ok=True)
    return run


def run_training(cfg: DictConfig) -> Run:
    """Train Gongzhu until max_batches / max_minutes (or forever); returns the finished run."""
    run = _open_run(cfg)
    t = cfg.train
    writer = SummaryWriter(str(Path(cfg.log_dir) / cfg.run), purge_step=run.step + 1)
    eval_deals = load_deals(limit=t.eval_deals) if t.eval_every > 0 else None
    mcts = OmegaConf.to_object(cfg.search)  # an MCTSConfig (validated on creation)
    evaluator = NetworkEvaluator(run.model, device=run.device)
    run.model.eval()
    if run.step == 0:
        path = run.save()
        _keep_milestones(run, path, _milestones_passed(run, -1.0, -1))  # the untrained network
        if eval_deals is not None and not run.evals:
            _log_eval(run, writer, _evaluate(run, path, eval_deals))
    bar = tqdm(total=t.max_batches, initial=run.step, unit="batch", disable=not cfg.progress,
               desc=f"train {cfg.run}")
    while not _should_stop(run):
        started, before, before_games = time.perf_counter(), run.train_seconds, run.games
        records = play_selfplay(evaluator, t.games_per_batch, run.rng, mcts, beta=t.beta,
                                outcome_weight=t.outcome_weight)
        play_seconds = time.perf_counter() - started
        run.replay.add(records)
        metrics = _learn(run)
        run.train_seconds += time.perf_counter() - started
        run.step += 1
        run.games += records.games
        metrics["selfplay/games_per_s"] = records.games / play_seconds
        metrics["selfplay/simulations_per_s"] = records.simulations / play_seconds
        metrics["selfplay/evaluations_per_s"] = records.evaluations / play_seconds
        # How far the search's bootstrapped target sits from what the games actually gave.
        metrics["selfplay/value_target_gap"] = float(
            np.abs(records.search_value - records.outcome_value).mean())
        metrics["train/games"] = run.games
        metrics["train/minutes"] = run.train_seconds / 60
        for key, value in metrics.items():
            writer.add_scalar(key, value, run.step)
        due_eval = eval_deals is not None and run.step % t.eval_every == 0
        passed = _milestones_passed(run, before, before_games)
        if due_eval or passed or run.step % t.checkpoint_every == 0 or _should_stop(run):
            path = run.save()
            _keep_milestones(run, path, passed)
            if due_eval:
                _log_eval(run, writer, _evaluate(run, path, eval_deals))
                run.save()  # keep the evaluation history in the checkpoint too
        bar.update(1)
        bar.set_postfix(policy=f"{metrics.get('loss/policy', 0):.3f}",
                        value=f"{metrics.get('loss/value', 0):.3f}",
                        gps=f"{metrics['selfplay/games_per_s']:.1f}",
                        wpg=f"{run.evals[-1]['wpg_raw']:+.0f}" if run.evals else "-")
    bar.close()
    writer.close()
    return run
