"""The training loop behind `train.py`: self-play -> replay -> learner -> eval -> checkpoint.

`train_loop` is the algorithm, read top to bottom: a fresh run first fits the network to Mr.
Greed's games when asked (the warm start), evaluates it and checkpoints it; then every batch
enters the schedule's phase for the games played so far, plays a batch of self-play games (in
this process, or on train.actors' processes: train/actors.py), adds them to the replay and
learns from it, logs, evaluates when due and checkpoints when due, until train.max_batches or
train.max_minutes. Each step is a function of its own, which the distributed trainer
(train/distributed.py) calls in the same order with its actors' records.

The run's state and its checkpoints are train/state.py's; the run folder (checkpoints/<run>/,
locked), tensorboard (runs/<run>/), the fresh-or-resume decision and eval.jsonl belong to the
run harness (scrofazero/runs.py). An evaluation is made before the checkpoint of its step and
its eval.jsonl line written then; tensorboard is flushed before every checkpoint; on resume the
harness drops what came after the checkpoint from both, so nothing is logged twice. Each start
of a run, fresh or resumed, writes the resolved config to tensorboard (text `config`).
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

from scrofazero.agents import player_spec
from scrofazero.atomic import strict_json
from scrofazero.eval.arena import duplicate_match
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.nn.checkpoint import save_model_file
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.runs import RunFolder
from scrofazero.search.mcts import MCTSConfig
from scrofazero.train.actors import ActorPool, actor_count, batch_seed
from scrofazero.train.config import GongzhuTrainConfig, TrainConfig
from scrofazero.train.learner import train_step, update_average
from scrofazero.train.schedule import PHASE_KEYS
from scrofazero.train.selfplay import SelfPlayRecords, SelfPlaySettings, play_batch
from scrofazero.train.state import EVAL_LOG, Run, milestones_passed, open_run
from scrofazero.train.warm_start import warm_start


def run_training(settings: GongzhuTrainConfig,
                 train_fn: Callable[[Run, GongzhuTrainConfig], None] | None = None) -> Run:
    """Train Gongzhu until max_batches / max_minutes (or forever); returns the finished run.
    train_fn(run, settings) runs the batches (default: this process's self-play then learn
    loop; train/distributed.py passes Ray's).

    The run folder is the harness's (runs.RunFolder): locked for the whole run; a fresh run that
    fails before its first batch is checkpointed leaves no folder behind. `settings` are
    already checked (scrofazero/config.py check_train, which train.py makes once, before any
    work); each step below reads the part it needs."""
    with RunFolder(Path(settings.checkpoint_dir) / settings.run,
                   Path(settings.log_dir) / settings.run, logs=EVAL_LOG) as folder:
        run = open_run(settings, folder)
        (train_fn or train_loop)(run, settings)
    return run


CONFIG_TAG = "config"  # tensorboard text: the run's resolved config, at every start


@dataclass
class Logs:
    """Where the loop reports, held from batch to batch: the run folder's tensorboard writer
    (on resume, purged of events past the checkpoint, to be made again), the evaluation deals
    (None: no evaluation during training) and the progress bar (once the run has started)."""

    writer: SummaryWriter
    eval_deals: np.ndarray | None
    bar: tqdm | None = None

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.writer.close()


def open_logs(run: Run, t: TrainConfig) -> Logs:
    """The run's tensorboard writer and evaluation deals (read now: a missing deal file fails
    before any training)."""
    assert run.folder is not None and run.folder.writer is not None  # open_run's, begun
    return Logs(run.folder.writer, load_deals(limit=t.eval_deals) if t.eval_every > 0 else None)


def train_loop(run: Run, settings: GongzhuTrainConfig) -> None:
    """Self-play then learn in this process, batch after batch, until the stop condition."""
    t = settings.train
    logs = open_logs(run, t)
    log_start(run, settings, logs)
    if run.is_fresh():
        start_fresh(run, settings, logs)
    logs.bar = progress_bar(run, settings)
    evaluator = NetworkEvaluator(run.model, device=run.device)
    try:  # the bar is closed on Ctrl-C too: what train.py then says starts on a line of its own
        with start_actors(run, t) as actors:
            while not should_stop(run, t):
                if enter_phase(run, settings, logs):  # grown: self-play must play the new one
                    evaluator = NetworkEvaluator(run.model, device=run.device)
                now = run.in_force(settings)  # the train settings of the run's phase
                started = time.perf_counter()
                records = self_play(run, settings.search, now, evaluator, actors)
                play_seconds = time.perf_counter() - started
                metrics = learn_from(run, now, records)
                before = count_batch(run, records, time.perf_counter() - started)
                log_batch(run, logs, records, metrics, play_seconds)
                evaluated = evaluate_if_due(run, t, logs)
                save_if_due(run, settings, logs, milestones_passed(run, t, *before), evaluated)
                show_progress(run, logs, metrics)
    finally:
        logs.close()


def start_actors(run: Run, t: TrainConfig) -> ActorPool | nullcontext[None]:
    """The run's self-play processes (train/actors.py ActorPool, to be closed after use) when
    train.actors asks for two or more; else an empty context: self-play in this process."""
    count = actor_count(str(t.actors), run.device)
    if count < 2 or should_stop(run, t):
        return nullcontext(None)
    return ActorPool.start(count, run.device, threads=t.threads)


def self_play(run: Run, mcts: MCTSConfig, now: TrainConfig, evaluator: NetworkEvaluator,
              actors: ActorPool | None) -> SelfPlayRecords:
    """One batch of self-play as the train settings in force (`now`) say: in this process from
    the run's generator (no actors), or on the actors with the learner's weights as of this
    step, game g of the batch seeded (train.seed, step, g)."""
    if actors is None:
        return play_batch(evaluator, run.rng, mcts, SelfPlaySettings.of(now))
    actors.publish(run.model, run.step)
    return actors.play(batch_seed(now.seed, run.step), mcts, SelfPlaySettings.of(now))


def start_fresh(run: Run, settings: GongzhuTrainConfig, logs: Logs) -> None:
    """A fresh run's start: the warm start (train.warm_start.games > 0), then the evaluation
    and the checkpoint of step 0, the network before any self-play."""
    t = settings.train
    if t.warm_start.games > 0:
        warm_start_network(run, settings, logs.writer)
    if logs.eval_deals is not None:
        log_eval(run, logs.writer, evaluate(run, t, logs.eval_deals))
    checkpoint(run, settings, logs, milestones_passed(run, t, -1.0, -1))


def log_start(run: Run, settings: GongzhuTrainConfig, logs: Logs) -> None:
    """What a run logs each time it starts (fresh or resumed), at its step: its settings as
    YAML (tensorboard text `config`), and where its first network came from
    (`train/init_from`, before its first batch)."""
    logs.writer.add_text(CONFIG_TAG, config_text(settings), run.step)
    if run.step == 0 and run.init_from is not None:
        logs.writer.add_text("train/init_from", json.dumps(strict_json(run.init_from)), 0)


def config_text(settings: GongzhuTrainConfig) -> str:
    """The settings as a YAML block of markdown (tensorboard renders text as markdown)."""
    return f"```yaml\n{OmegaConf.to_yaml(settings)}```"


def progress_bar(run: Run, settings: GongzhuTrainConfig) -> tqdm:
    """The run's progress bar over batches, out of train.max_batches (the `cpu` preset's 4800,
    the shipped network's recipe; none without a limit); silent with progress=false."""
    return tqdm(total=settings.train.max_batches, initial=run.step, unit="batch",
                disable=not settings.progress, desc=f"train {settings.run}")


def should_stop(run: Run, t: TrainConfig) -> bool:
    """Whether the run has done train.max_batches batches or train.max_minutes of training."""
    if t.max_batches is not None and run.step >= t.max_batches:
        return True
    return t.max_minutes is not None and run.train_seconds >= 60 * t.max_minutes


def enter_phase(run: Run, settings: GongzhuTrainConfig, logs: Logs) -> bool:
    """Run.advance_phase, logged (tensorboard train/phase, a line when progress is on); True
    when the network was replaced."""
    before = run.phase
    replaced = run.advance_phase(settings)
    if run.phase != before:
        logs.writer.add_scalar("train/phase", run.phase, run.step)
        change = run.phases[-1]
        logs.writer.add_text("train/phases", json.dumps(strict_json(change)), run.step)
        if settings.progress:
            tqdm.write(f"phase {run.phase} from {run.games} games: "
                       + ", ".join(f"{k}={change[k]}" for k in PHASE_KEYS)
                       + (f"; network grown to hidden={change['hidden']}, "
                          f"num_blocks={change['num_blocks']}" if replaced else ""))
    return replaced


def learn_from(run: Run, t: TrainConfig, records: SelfPlayRecords) -> dict[str, float]:
    """Add a batch of records to the replay and make the learner's passes over it (`t`: the
    train settings in force); the mean of each training metric over the optimiser steps."""
    run.replay.add(records)
    run.model.train()
    sums: dict[str, float] = {}
    count = 0
    for batch in run.replay.minibatches(t.minibatch, t.passes, run.rng):
        metrics = train_step(run.model, run.optimizer, batch, run.device,
                             value_weight=t.value_weight, value_unit=t.value_unit,
                             value_loss=t.value_loss, aux_weight=t.aux_weight,
                             precision=t.learner_precision)
        if run.ema is not None:
            update_average(run.ema, run.model, t.ema)
        for key, value in metrics.items():
            sums[key] = sums.get(key, 0.0) + value
        count += 1
    run.model.eval()
    return {k: v / max(count, 1) for k, v in sums.items()}


def count_batch(run: Run, records: SelfPlayRecords, seconds: float) -> tuple[float, int]:
    """Count a batch learned from (`seconds` of training time) in the run's step, games and
    time; returns the (training seconds, games) before it, for the milestones it passed."""
    before = (run.train_seconds, run.games)
    run.train_seconds += seconds
    run.step += 1
    run.games += records.games
    return before


def log_batch(run: Run, logs: Logs, records: SelfPlayRecords, metrics: dict[str, float],
              play_seconds: float) -> None:
    """The batch's learner `metrics` and self-play figures (added to `metrics`) to tensorboard
    at the run's step."""
    seconds = max(play_seconds, 1e-9)
    metrics["selfplay/games_per_s"] = records.games / seconds
    metrics["selfplay/simulations_per_s"] = records.simulations / seconds
    metrics["selfplay/evaluations_per_s"] = records.evaluations / seconds
    # How far the search's bootstrapped target sits from what the games actually gave.
    metrics["selfplay/value_target_gap"] = float(
        np.abs(records.search_value - records.outcome_value).mean())
    metrics["train/games"] = run.games
    metrics["train/minutes"] = run.train_seconds / 60
    for key, value in metrics.items():
        logs.writer.add_scalar(key, value, run.step)


def evaluate_if_due(run: Run, t: TrainConfig, logs: Logs) -> bool:
    """Evaluate and log the network every train.eval_every steps; True when it did (its result
    belongs in the checkpoint of this step, which must then be made)."""
    if logs.eval_deals is None or run.step % t.eval_every != 0:
        return False
    log_eval(run, logs.writer, evaluate(run, t, logs.eval_deals))
    return True


def save_if_due(run: Run, settings: GongzhuTrainConfig, logs: Logs, milestones: list[str],
                evaluated: bool) -> None:
    """Checkpoint the run when this step was evaluated, passed `milestones`, is a multiple of
    train.checkpoint_every or is the last."""
    t = settings.train
    if evaluated or milestones or run.step % t.checkpoint_every == 0 or should_stop(run, t):
        checkpoint(run, settings, logs, milestones)


def checkpoint(run: Run, settings: GongzhuTrainConfig, logs: Logs,
               milestones: Sequence[str] = ()) -> None:
    """Flush tensorboard (it holds no less than the checkpoint), then checkpoint the run."""
    logs.writer.flush()
    run.save(settings, milestones)


def show_progress(run: Run, logs: Logs, metrics: dict[str, float]) -> None:
    """Advance the progress bar by the batch, with its losses, speed and the last evaluation."""
    assert logs.bar is not None  # the run has started
    logs.bar.update(1)
    logs.bar.set_postfix(policy=f"{metrics.get('loss/policy', 0):.3f}",
                         value=f"{metrics.get('loss/value', 0):.3f}",
                         gps=f"{metrics['selfplay/games_per_s']:.1f}",
                         wpg=f"{run.evals[-1]['wpg_raw']:+.0f}" if run.evals else "-")


def evaluate(run: Run, t: TrainConfig, deals: np.ndarray) -> dict[str, Any]:
    """Raw network (1-ply value search over sampled deals) vs two Mr. Greeds and vs Mr. Random,
    for the run's network as it is now (the weights' average with train.ema).

    With one evaluation worker the players are built in this process from a CPU copy of the
    network; with more, each worker process loads it from a model-only file written for the
    evaluation (run folder's eval_model.pt, removed after). Both give the same results: the
    players compute with the same weights on the CPU."""
    raw = player_spec("raw")
    # The paper's benchmark: uniform deals. The raw player's default is the belief network's
    # deals, which would change what the training curves measure and break their comparison
    # with earlier runs and with the original's curve.
    settings = raw.settings_from({"sampling": {"method": "uniform",
                                                "num_deals": t.eval_raw_deals}})
    model_file = None
    if t.eval_workers == 1:
        # A copy: the player's evaluator moves its network to the CPU and may not touch the
        # trained one.
        kwargs = {"raw": raw.arguments(settings, model=copy.deepcopy(run.network).cpu())}
    else:
        model_file = save_model_file(run.dir / "eval_model.pt", run.network, run.step)
        kwargs = {"raw": raw.arguments(settings, checkpoint=str(model_file))}
    started = time.perf_counter()
    greed = duplicate_match("raw", "greed", deals, seed=t.seed, workers=t.eval_workers,
                            progress=False, agent_kwargs=kwargs)
    rand = duplicate_match("raw", "random", deals, seed=t.seed, workers=t.eval_workers,
                           progress=False, agent_kwargs=kwargs)
    if model_file is not None:
        model_file.unlink(missing_ok=True)
    return {
        "step": run.step, "games": run.games, "train_minutes": run.train_seconds / 60,
        "wpg_raw": greed.mean, "wpg_raw_stderr": greed.stderr,
        "vs_random": rand.mean, "vs_random_stderr": rand.stderr,
        "deals": greed.deals, "eval_seconds": time.perf_counter() - started,
    }


def log_eval(run: Run, writer: SummaryWriter, result: dict[str, Any]) -> None:
    """Add an evaluation to the run's history, eval.jsonl and tensorboard (made before the
    checkpoint of its step: on resume the harness drops lines and events past the checkpoint)."""
    run.evals.append(result)
    assert run.folder is not None  # open_run's
    run.folder.log("eval.jsonl", result)
    writer.add_scalar("eval/wpg_raw", result["wpg_raw"], run.step)
    writer.add_scalar("eval/vs_random", result["vs_random"], run.step)


def warm_start_network(run: Run, settings: GongzhuTrainConfig, writer: SummaryWriter) -> None:
    """Fit the fresh network to Mr. Greed's games (train/warm_start.py); its time counts as
    training time and its losses go to tensorboard under warm_start/ by epoch."""
    t = settings.train
    ws = t.warm_start
    if settings.progress:
        print(f"warm start: {ws.games} Mr. Greed games, then {ws.epochs} epochs of fitting",
              flush=True)
    started = time.perf_counter()
    # Its own random stream, so self-play's deals are those of the same run without it.
    rng = np.random.default_rng([t.seed, 1])
    summary = warm_start(run.model, ws, rng, run.device, value_unit=t.value_unit,
                         value_loss=t.value_loss)
    run.restart_average(t)  # the average is of self-play's training, from the fitted network
    run.train_seconds += time.perf_counter() - started
    run.warm_start = summary
    for epoch, metrics in enumerate(summary["epochs"], start=1):
        for key, value in metrics.items():
            writer.add_scalar(f"warm_start/{key.split('/')[-1]}", value, epoch)
    if settings.progress:
        last = summary["epochs"][-1]
        print(f"warm start done in {(time.perf_counter() - started) / 60:.1f} min: policy "
              f"{last['loss/policy']:.3f}, value {last['loss/value']:.1f}", flush=True)
