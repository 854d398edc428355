"""The fit of the inference networks on recorded hidden-hand games (train/hidden_games.py).

`python train.py learner=belief|behaviour inference.data=[DIR,...] run=NAME` trains the
card-location network (nn/belief.py: the true holder of every card the seat cannot see, per card
a softmax over the seats that may hold it) or the behaviour network (nn/behaviour.py: the card the
seat played, a softmax over its legal cards) by cross-entropy, with AdamW and a one-cycle
learning rate, on positions drawn at random from the training games. Games are held out by a hash
of their deal (hidden_games.split), so a game is on the same side whatever folders it is loaded
with; the held-out loss is measured once an epoch (or every `eval_every` steps).

The run is the harness's (scrofazero/runs.py): `checkpoint_dir/run/fit_state.pt` (weights,
optimiser, schedule, the position sampler's state and the loss history, in the envelope with the
run's settings and random states) every `checkpoint_every` steps, so `resume=true` continues a
killed fit exactly; the network file `checkpoint_dir/run/<learner>.pt` (what the players read)
at every evaluation, copied to `inference.out` at the end; `fit.jsonl` and tensorboard
(`loss/train`, `loss/val`) under `log_dir/run`.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import numpy as np
import torch
from pydantic import Field

from scrofazero.atomic import copy_atomic
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.nn.behaviour import (
    BehaviourNet,
    legal_mask,
    load_behaviour,
    masked_log_softmax,
    save_behaviour,
)
from scrofazero.nn.belief import BeliefNet, features, load_belief, masked_log_probs, save_belief
from scrofazero.runs import (
    Envelope,
    RunError,
    RunFolder,
    plain_settings,
    random_states,
    read_envelope,
    restore_random,
    resume_or_start,
    write_torch,
)
from scrofazero.settings import Count, NonNegative, NonNegativeInt, Positive, Share, choice
from scrofazero.train.hidden_games import KINDS, GameRecords, load_shards, positions, split

GAME = "gongzhu-inference"
# Not latest.pt: evaluate.py takes the newest checkpoint_dir/*/latest.pt for its network.
CHECKPOINT = "fit_state.pt"
LOGS = {"fit.jsonl": "step"}
# Settings that may differ on resume without being named (how long, how often, where).
ALWAYS_MAY_CHANGE = ("resume", "resume_overrides", "run", "progress", "debug", "log_dir",
                     "checkpoint_dir", "inference.max_minutes", "inference.checkpoint_every",
                     "inference.device", "inference.threads", "inference.out")


@dataclass
class InferenceFitConfig:
    """The fit's settings (`inference.*` of train.py learner=belief|behaviour)."""

    data: list[str] = field(default_factory=list)  # folders of game shards (hidden_games.py)
    # one weight per data folder: how often its games are drawn relative to their number
    data_weights: list[float] | None = None
    # use only the first this many games of the data, in folder and shard order (None: all;
    # the learning curve's points)
    max_games: Count | None = None
    # leave out every game in which a seat was one of these player kinds (e.g. [greed]: a
    # network that never saw Mr. Greed)
    exclude: list[Annotated[str, choice(*KINDS)]] = field(default_factory=list)
    hidden: Count = 512  # width of the input layer and of the residual blocks
    num_blocks: NonNegativeInt = 2  # residual blocks
    epochs: Positive = 1.5  # passes over the training games' positions (52 per game)
    batch: Count = 512  # positions per step
    lr: Positive = 1e-3  # peak learning rate of the one-cycle schedule
    # after the input layer while training (below 1)
    dropout: Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)] = 0.3
    weight_decay: NonNegative = 0.01  # AdamW's
    val_fraction: Share = 0.05  # games held out (by a hash of their deal)
    val_games: Count = 1000  # held-out games whose every position the held-out loss scores
    eval_every: NonNegativeInt = 0  # steps between held-out losses (0: once an epoch)
    checkpoint_every: Count = 1000  # steps between checkpoints of the run
    max_minutes: NonNegative = 0.0  # stop after this long, evaluated and saved (0: no limit)
    init: str | None = None  # start from this network file of the same kind (fine-tuning)
    device: str = "cpu"  # cpu | cuda | cuda:N
    threads: Count = 1  # torch threads
    out: str | None = None  # also copy the finished network file here (e.g. models/belief.pt)


@dataclass(frozen=True)
class Task:
    """What differs between the two networks: how one is built, loaded, scored and saved."""

    name: str
    build: Callable[[InferenceFitConfig], torch.nn.Module]
    load: Callable[[str], torch.nn.Module]  # a copy of the network in a file (fine-tuning)
    # (net, records, games [B], plies [B], owners, device) -> (mean loss, how many it averages)
    loss: Callable[[torch.nn.Module, GameRecords, np.ndarray, np.ndarray, np.ndarray,
                    torch.device], tuple[torch.Tensor, int]]
    # (path, net: the task's network class, meta) -> Path
    save: Callable[[str | Path, Any, dict[str, Any]], Path]


def _belief_loss(net: torch.nn.Module, records: GameRecords, games: np.ndarray, plies: np.ndarray,
                 owners: np.ndarray, device: torch.device) -> tuple[torch.Tensor, int]:
    """Cross-entropy of the true holder of every card the mover cannot see."""
    p, target, allowed = positions(records, games, plies, owners)
    x = torch.from_numpy(features(p)).to(device)
    logp = masked_log_probs(net(x), torch.from_numpy(allowed).to(device))  # [B, 52, 3]
    t = torch.from_numpy(target).to(device)
    mask = t >= 0
    picked = logp.gather(2, t.clamp(min=0).unsqueeze(-1)).squeeze(-1)  # [B, 52]
    picked = torch.where(mask, picked, torch.zeros_like(picked))  # seen cards: -inf, not counted
    count = mask.sum()
    return -picked.sum() / count.clamp(min=1), int(count)


def _behaviour_loss(net: torch.nn.Module, records: GameRecords, games: np.ndarray,
                    plies: np.ndarray, owners: np.ndarray, device: torch.device
                    ) -> tuple[torch.Tensor, int]:
    """Cross-entropy of the card the mover played, over its legal cards; forced plays (one
    legal card) say nothing and are left out."""
    p, _, _ = positions(records, games, plies, owners)
    legal = legal_mask(p)
    chosen = legal.sum(axis=1) > 1
    cards = torch.from_numpy(records.cards[games, plies].astype(np.int64)).to(device)
    x = torch.from_numpy(features(p)).to(device)
    logp = masked_log_softmax(net(x), torch.from_numpy(legal).to(device))  # [B, 52]
    picked = logp.gather(1, cards[:, None])[:, 0]
    mask = torch.from_numpy(chosen).to(device)
    count = mask.sum()
    return -torch.where(mask, picked, torch.zeros_like(picked)).sum() / count.clamp(min=1), \
        int(count)


TASKS = {
    "belief": Task("belief", lambda s: BeliefNet(s.hidden, s.num_blocks, s.dropout),
                   lambda path: copy.deepcopy(load_belief(path).net), _belief_loss, save_belief),
    "behaviour": Task("behaviour", lambda s: BehaviourNet(s.hidden, s.num_blocks, s.dropout),
                      lambda path: copy.deepcopy(load_behaviour(path).net), _behaviour_loss,
                      save_behaviour),
}


def load_games(settings: InferenceFitConfig) -> tuple[GameRecords, np.ndarray]:
    """The games of the settings' data (first max_games, without the excluded kinds) and each
    game's draw weight [G]."""
    parts = [load_shards(folder) for folder in settings.data]
    weights = (np.ones(len(parts)) if settings.data_weights is None
               else np.asarray(settings.data_weights, dtype=float))
    if len(weights) != len(parts) or not np.all(weights > 0):
        raise ValueError(f"inference.data_weights must give one positive weight per data folder "
                         f"({len(parts)}), got {list(weights)}")
    records = GameRecords.concat(parts)
    per_game = np.repeat(weights, [len(p) for p in parts])
    keep = np.ones(len(records), dtype=bool)
    if settings.max_games is not None:
        keep[settings.max_games:] = False
    if settings.exclude:
        excluded = [list(KINDS).index(k) for k in settings.exclude]
        keep &= ~np.isin(records.kinds, excluded).any(axis=1)
    if not keep.any():
        raise ValueError("inference: no game is left to fit on (check data, max_games, exclude)")
    if keep.all():
        return records, per_game
    idx = np.flatnonzero(keep)
    return GameRecords(*(getattr(records, f)[idx] for f in ("deal", "leader", "cards", "seats",
                                                            "kinds"))), per_game[idx]


@dataclass
class FitState:
    """What a checkpoint of the fit holds besides the envelope."""

    step: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    minutes: float = 0.0


def fit(settings: InferenceFitConfig, task: Task, seed: int, net_file: str | Path,
        folder: RunFolder | None = None, envelope: Envelope | None = None,
        on_eval: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Train `task`'s network on the settings' games; write it to `net_file` at every held-out
    evaluation. With a run `folder`: checkpoints, fit.jsonl and tensorboard, and `envelope` (a
    checkpoint's) continues a stopped fit exactly.

    Args:
        settings: the fit's settings.
        task: TASKS[name], the network fitted.
        seed: seeds the draws of positions and the network's initial weights.
        net_file: the network file written.
        folder: the run (harness) whose checkpoints and logs are written; None: none.
        envelope: the run's checkpoint to continue (None: a fresh fit).
        on_eval: called with each held-out evaluation's record.

    Returns:
        The summary stored in the network file's meta (games, steps, history, minutes).
    """
    device = torch.device(settings.device)
    records, per_game = load_games(settings)
    train_g, val_g = split(records, settings.val_fraction)
    draw_p = per_game[train_g] / per_game[train_g].sum()
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    net = task.load(settings.init) if settings.init else task.build(settings)
    net.to(device).train()
    steps = int(settings.epochs * len(train_g) * NUM_CARDS / settings.batch)
    opt = torch.optim.AdamW(net.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=settings.lr,
                                                total_steps=max(steps, 1), pct_start=0.05)
    state = FitState()
    if envelope is not None:
        state = _restore(envelope, net, opt, sched, rng)
    owners = records.owners()
    val_g = val_g[:settings.val_games]
    every = settings.eval_every or max(1, math.ceil(steps / max(1, math.ceil(settings.epochs))))
    meta = {"task": task.name, "data": list(settings.data), "data_weights": settings.data_weights,
            "max_games": settings.max_games, "exclude": list(settings.exclude)}
    started = time.perf_counter() - 60 * state.minutes
    summary: dict[str, Any] = {}
    for step in range(state.step, steps):
        games = rng.choice(train_g, settings.batch, p=draw_p)
        plies = rng.integers(0, NUM_CARDS, settings.batch)
        loss, _ = task.loss(net, records, games, plies, owners, device)
        opt.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
        opt.step()
        sched.step()
        done = step + 1
        minutes = (time.perf_counter() - started) / 60
        over = bool(settings.max_minutes) and minutes > settings.max_minutes
        if done % every == 0 or done == steps or over:
            record = {"step": done, "train_loss": float(loss.detach()),
                      "val_loss": _val_loss(task, net, records, val_g, owners, device),
                      "minutes": minutes}
            state.history.append(record)
            summary = {"games": len(records), "train_games": len(train_g),
                       "val_games": len(val_g), "steps": done, "batch": settings.batch,
                       "lr": settings.lr, "minutes": minutes, "history": state.history, **meta}
            task.save(net_file, copy.deepcopy(net).cpu(), summary)
            if folder is not None:
                assert folder.writer is not None  # begun
                folder.log("fit.jsonl", record)
                folder.writer.add_scalar("loss/train", record["train_loss"], done)
                folder.writer.add_scalar("loss/val", record["val_loss"], done)
            if on_eval is not None:
                on_eval(record)
        if folder is not None and (done % settings.checkpoint_every == 0 or done == steps
                                   or over):
            state.step, state.minutes = done, minutes
            _checkpoint(folder, settings, task, seed, net, opt, sched, rng, state)
        if over:
            break
    return summary


@torch.no_grad()
def _val_loss(task: Task, net: torch.nn.Module, records: GameRecords, val_g: np.ndarray,
              owners: np.ndarray, device: torch.device, chunk: int = 4096) -> float:
    """The task's loss on every position of the held-out games `val_g`, each target counted
    once."""
    net.eval()
    games = np.repeat(val_g, NUM_CARDS)
    plies = np.tile(np.arange(NUM_CARDS), len(val_g))
    total = count = 0.0
    for s in range(0, len(games), chunk):
        loss, n = task.loss(net, records, games[s:s + chunk], plies[s:s + chunk], owners, device)
        total += float(loss) * n
        count += n
    net.train()
    return total / max(count, 1)


def _settings(settings: InferenceFitConfig, task: Task, seed: int) -> dict[str, Any]:
    return {"learner": task.name, "seed": seed, "inference": plain_settings(settings)}


def _checkpoint(folder: RunFolder, settings: InferenceFitConfig, task: Task, seed: int,
                net: torch.nn.Module, opt: torch.optim.Optimizer,
                sched: torch.optim.lr_scheduler.LRScheduler, rng: np.random.Generator,
                state: FitState) -> None:
    envelope = Envelope(GAME, _settings(settings, task, seed), state.step, random=random_states())
    payload = {"run": envelope.header(), "model": net.state_dict(),
               "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
               "rng": rng.bit_generator.state, "history": state.history,
               "minutes": state.minutes, "step": state.step}
    write_torch(folder.folder / CHECKPOINT, payload)
    folder.checkpointed(state.step)


def load_envelope(path: str | Path) -> Envelope:
    """The envelope of a fit's checkpoint; RunError naming the file when it is not one."""
    try:
        payload = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # noqa: BLE001 - a corrupt or foreign file: say which
        raise RunError(f"{path}: not a readable checkpoint ({err})") from None
    if not isinstance(payload, dict) or "run" not in payload or "step" not in payload:
        raise RunError(f"{path}: not a checkpoint of an inference network's fit")
    return read_envelope(payload["run"], payload, path, GAME, step=int(payload["step"]),
                         legacy_settings={}, counted=f"the checkpoint's step {payload['step']}")


def _restore(envelope: Envelope, net: torch.nn.Module, opt: torch.optim.Optimizer,
             sched: torch.optim.lr_scheduler.LRScheduler, rng: np.random.Generator) -> FitState:
    state = envelope.state
    try:
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        sched.load_state_dict(state["scheduler"])
        rng.bit_generator.state = state["rng"]
    except (KeyError, RuntimeError, ValueError, TypeError) as err:
        raise RunError(f"{envelope.path}: does not fit this fit's network ({err})") from None
    # Building the network drew from torch's generator: the run's own state again (dropout).
    restore_random(envelope.random, envelope.path)
    return FitState(int(state["step"]), list(state["history"]), float(state["minutes"]))


def run_inference_fit(cfg: Any) -> dict[str, Any]:
    """train.py learner=belief|behaviour: the fit under the run harness; its settings were
    checked before (entry.py). `cfg`: train/config.py GongzhuTrainConfig (which imports this
    module, so it is not named here)."""
    settings: InferenceFitConfig = cfg.inference
    if not settings.data:
        raise ValueError("inference.data=[DIR,...]: give the folders of the games to fit on "
                         "(python -m scrofazero.train.hidden_games makes them)")
    task = TASKS[cfg.learner]
    torch.set_num_threads(settings.threads)
    run_dir = Path(cfg.checkpoint_dir) / cfg.run
    with RunFolder(run_dir, Path(cfg.log_dir) / cfg.run, logs=LOGS) as folder:
        envelope = resume_or_start(folder.folder / CHECKPOINT, resume=bool(cfg.resume),
                                   load=load_envelope,
                                   settings=_settings(settings, task, int(cfg.seed)),
                                   always=ALWAYS_MAY_CHANGE,
                                   overrides=list(cfg.resume_overrides))
        folder.begin(envelope)
        net_file = run_dir / f"{task.name}.pt"

        def report(record: dict[str, Any]) -> None:
            if cfg.progress:
                print(f"step {record['step']}: train {record['train_loss']:.4f} held-out "
                      f"{record['val_loss']:.4f} ({record['minutes']:.1f} min)", flush=True)

        summary = fit(settings, task, int(cfg.seed), net_file, folder, envelope, report)
    if settings.out:
        copy_atomic(net_file, settings.out)
        print(f"wrote {settings.out}")
    return summary
