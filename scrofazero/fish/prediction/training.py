"""Training the learned hand predictor on simulated games (fish/prediction/data.py): the
sequence loss, the training loop with validation, and `train_predictor`, what
`train.py game=fish game.learner=predictor` runs with the `game.predictor` settings
(`PredictorTraining`, one dataclass from the command line to the loop)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np
import torch
from pydantic import Field
from torch import nn

from scrofazero.atomic import write_json_atomic
from scrofazero.fish.prediction.data import DEFAULT_MIX, GameArrays, generate_dataset, load_dataset
from scrofazero.fish.prediction.network import (
    CERTAIN,
    PredictorConfig,
    PredictorNet,
    num_parameters,
    save_predictor,
)
from scrofazero.fish.prediction.sequences import (
    Batch,
    ObserverSequence,
    collate,
    observer_sequence,
    permute_arrays,
    random_symmetry,
)
from scrofazero.games.fish.cards import TABLE_SIZES
from scrofazero.settings import (
    Count,
    Fraction,
    NonNegative,
    NonNegativeInt,
    Positive,
    Seed,
    at_most,
    one_of,
)

if TYPE_CHECKING:  # the plain type (mypy takes no call in a type)
    TableSizes = list[int]
else:
    TableSizes = Annotated[list[one_of(*TABLE_SIZES)], Field(min_length=1)]  # 6 and/or 8 players


@dataclass
class PredictorTraining:
    """The predictor's training, `game.predictor` of train.py game=fish game.learner=predictor
    and what train_predictor and train_on take. data: a folder of simulated-game shards,
    train/ and val/ (generated there when empty: `games` per table size with seed `seed`,
    val_games with seed + 1); steps of `batch` sequences (one table size per step,
    alternating); Adam at `lr` with cosine decay; validation loss every `eval_every` steps
    (0: every steps // 6, at least 1), the best weights kept; stops at `max_minutes`. augment: a
    random team-keeping relabelling per sequence (for this equivariant network it changes the
    loss only by rounding, see the tests; kept so that a non-equivariant variant trains the
    same way)."""

    data: str = "results/fish_predictor"  # folder of the simulated games (train/, val/)
    # simulated training games per table size (generated into data/train when empty)
    games: Count = 200
    val_games: NonNegativeInt = 6  # simulated validation games per table size (data/val)
    table_sizes: TableSizes = field(default_factory=lambda: [6, 8])  # table sizes trained on
    # player kinds of the simulated games and their shares
    mix: dict[str, Fraction] = field(default_factory=lambda: dict(DEFAULT_MIX))
    limit_games: Count | None = None  # read at most this many training games
    # the network (model.core=gru|lstm|transformer|none)
    model: PredictorConfig = field(default_factory=PredictorConfig)
    steps: Count = 300  # Adam steps of `batch` sequences
    batch: Count = 8  # sequences per step
    lr: Positive = 3e-3  # Adam learning rate (cosine decay over the steps)
    weight_decay: NonNegative = 0.0  # Adam weight decay
    eval_every: NonNegativeInt = 0  # steps between validations (0: steps // 6, at least 1)
    max_minutes: Positive = 60.0  # stop training after this long
    augment: bool = True  # a random team-keeping relabelling per sequence
    seed: Seed = 0  # seeds the simulated games, the initial weights and the minibatches
    # torch threads
    threads: at_most(256) = 1  # type: ignore[valid-type]
    log: str | None = None  # a JSON file for the log and the training notes

    def validation_every(self) -> int:
        return self.eval_every or max(1, self.steps // 6)


def sequence_loss(model: PredictorNet, batch: Batch) -> tuple[torch.Tensor, int]:
    """(mean log-loss of the true holder over the scored elements, their number): in-play cards
    the tracker does not know for certain, at valid steps, true holder possible under the
    tracker (always, for a consistent game)."""
    _, log_p = model(batch.probs, batch.events)
    target = batch.target.clamp_min(0)  # [B, T, C]
    picked = log_p.gather(2, target.unsqueeze(2)).squeeze(2)  # [B, T, C]
    tracker_true = batch.probs.gather(2, target.unsqueeze(2)).squeeze(2)
    uncertain = batch.probs.max(2).values < CERTAIN
    mask = (batch.target >= 0) & uncertain & batch.valid.unsqueeze(-1) & (tracker_true > 0)
    count = int(mask.sum())
    return -torch.where(mask, picked, torch.zeros_like(picked)).sum() / max(count, 1), count


def all_sequences(games: Sequence[GameArrays]) -> list[ObserverSequence]:
    return [observer_sequence(g, o) for g in games for o in range(g.num_players)]


def evaluate_loss(model: PredictorNet, seqs: Sequence[ObserverSequence], batch: int = 8) -> float:
    """Mean log-loss over every scored element of `seqs` (a simulated validation set)."""
    total = count = 0.0
    with torch.no_grad():
        for n in sorted({s.num_players for s in seqs}):
            group = [s for s in seqs if s.num_players == n]
            for i in range(0, len(group), batch):
                loss, k = sequence_loss(model, collate(group[i:i + batch]))
                total += float(loss) * k
                count += k
    return total / max(count, 1)


def train_on(model: PredictorNet, games: Sequence[GameArrays], cfg: PredictorTraining,
             val: Sequence[ObserverSequence] = (),
             log: Callable[[str], None] | None = None) -> dict:
    """Trains `model` in place on `games`; returns the history (and leaves the best weights by
    validation loss in the model when `val` is given)."""
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    by_size = {n: [g for g in games if g.num_players == n] for n in cfg.table_sizes}
    by_size = {n: gs for n, gs in by_size.items() if gs}
    sizes = sorted(by_size)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: 0.5 * (1 + math.cos(math.pi * min(k, cfg.steps) / cfg.steps)))
    started = time.perf_counter()
    history: dict[str, Any] = {"step": [], "train_loss": [], "val_loss": [], "seconds": []}
    best: tuple[float, dict[str, torch.Tensor] | None, int] = (math.inf, None, 0)
    running, seen = 0.0, 0

    def validate(step: int) -> None:
        nonlocal best
        model.eval()
        v = evaluate_loss(model, val) if val else math.nan
        model.train()
        history["step"].append(step)
        history["train_loss"].append(running / max(seen, 1))
        history["val_loss"].append(v)
        history["seconds"].append(time.perf_counter() - started)
        if val and v < best[0]:
            best = (v, {k: t.clone() for k, t in model.state_dict().items()}, step)
        if log:
            log(f"step {step}: train {running / max(seen, 1):.4f} val {v:.4f} "
                f"({time.perf_counter() - started:.0f} s)")

    model.train()
    if val:
        validate(0)
    step = 0
    for step in range(1, cfg.steps + 1):
        n = sizes[step % len(sizes)]
        pool = by_size[n]
        seqs = []
        for _ in range(cfg.batch):
            g = pool[int(rng.integers(len(pool)))]
            if cfg.augment:
                g = permute_arrays(g, random_symmetry(rng, n))
            seqs.append(observer_sequence(g, int(rng.integers(n))))
        loss, _ = sequence_loss(model, collate(seqs))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        running, seen = running + float(loss.detach()), seen + 1
        if step % cfg.validation_every() == 0 or step == cfg.steps:
            validate(step)
            running, seen = 0.0, 0
        if time.perf_counter() - started > 60 * cfg.max_minutes:
            if step % cfg.validation_every():
                validate(step)
            break
    model.eval()
    if best[1] is not None:
        model.load_state_dict(best[1])
    history["best_step"], history["best_val_loss"] = best[2], best[0]
    history["steps_run"] = step
    history["minutes"] = (time.perf_counter() - started) / 60
    return history


def train_predictor(cfg: PredictorTraining, out,
                    progress: Callable[[str], None] | None = print) -> Path:
    """Trains the predictor as `cfg` says; generates the simulated data first where cfg.data's
    train/ or val/ is empty. Saves the model (config and training notes inside) to `out` and
    returns that path."""
    torch.set_num_threads(cfg.threads)
    logs = []

    def log(msg: str) -> None:
        logs.append(msg)
        if progress:
            progress(msg)

    train, val_folder = str(Path(cfg.data) / "train"), str(Path(cfg.data) / "val")
    for folder, count, seed in ((train, cfg.games, cfg.seed),
                                (val_folder, cfg.val_games, cfg.seed + 1)):
        if folder and count and not any(Path(folder).glob("*.npz")):
            log(f"generating {count} games per table size into {folder}")
            generate_dataset(folder, count, cfg.table_sizes, seed=seed, mix=cfg.mix,
                             shard_size=20 if folder == train else count, progress=log)
    data = [g for g in load_dataset(train, cfg.limit_games).games
            if g.num_players in cfg.table_sizes]
    val = all_sequences([g for g in load_dataset(val_folder).games
                         if g.num_players in cfg.table_sizes])
    log(f"{len(data)} training games ({sum(g.num_steps for g in data)} steps), "
        f"{len(val)} validation sequences")
    torch.manual_seed(cfg.seed)
    model = PredictorNet(cfg.model).zero_head()
    history = train_on(model, data, cfg, val, log)
    meta = {"train_config": _jsonable(asdict(cfg)), "history": history,
            "train_games": len(data), "parameters": num_parameters(model)}
    path = save_predictor(out, model, meta)
    log(f"saved {path} ({num_parameters(model)} parameters, best step {history['best_step']}, "
        f"val {history['best_val_loss']:.4f}, {history['minutes']:.1f} min)")
    if cfg.log:
        write_json_atomic(cfg.log, {"log": logs, **meta})
    return path


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x
