"""`python train.py distributed=ray`: self-play actors and one learner on Ray.

The learner (this process) owns the run exactly as the single-process loop does (train/loop.py:
the run folder and its lock, checkpoints, resume, tensorboard, evaluation during training); only
where the self-play records come from changes. `ray.actors` actors (`SelfPlayActor`, one Ray
actor each, `ray.actor_cpus` / `ray.actor_gpus` reserved) each keep their own network and play
`train.games_per_batch` lockstep games per call (train/selfplay.py) from their own seed stream,
(train.seed, actor, call number), never the learner's. Records come back through Ray's object
store; weights go out the same way: every `ray.publish_every` learner steps the learner puts its
weights (numpy arrays) in the object store once, as version = its step, and every call it makes
carries the newest version's reference, which the actor loads before the call's games if it is
newer than its own. Each actor has `ray.in_flight` calls queued, so it starts its next batch
while the learner learns from the last one: the learner never waits for an actor to load
weights, and an actor waits only when the learner is slower than all actors together.

Staleness: a batch's age is the learner's version when it arrives minus the version it was
played with; batches older than `ray.max_staleness` versions are dropped (counted), the rest are
learned from in arrival order, one learner step each (so `train.max_batches`, checkpoints and
evaluations count steps as in the single-process mode). Tensorboard: `distributed/data_age`,
`distributed/dropped`, `distributed/learner_wait_s`, `distributed/actor_<i>/games_per_s`,
`distributed/actor_restarts`.

Faults: actors are created with unlimited restarts; a call that fails because its actor died is
counted, and the actor (restarted by Ray, fresh: it gets the newest weights with its next call)
is given a new call, so the learner loses nothing. A learner crash is a crash of the run:
`resume=true` continues from its last checkpoint and starts new actors from that checkpoint's
weights. A cluster that cannot be reached fails at once (scrofazero/cluster.py).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import numpy as np
import torch

from scrofazero.cluster import connect
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet
from scrofazero.search.mcts import MCTSConfig
from scrofazero.train.config import GongzhuTrainConfig
from scrofazero.train.loop import (
    count_batch,
    enter_phase,
    evaluate_if_due,
    learn_from,
    log_batch,
    log_start,
    open_logs,
    progress_bar,
    run_training,
    save_if_due,
    should_stop,
    show_progress,
    start_fresh,
)
from scrofazero.train.selfplay import SelfPlayRecords, SelfPlaySettings, play_batch
from scrofazero.train.state import Run, milestones_passed

SEED_TAG = 0x5EED  # keeps the actors' seed streams apart from the learner's (train.seed alone)


class SelfPlayActor:
    """One self-play worker: a network of the run's shape, weights loaded by version."""

    def __init__(self, index: int, model_config: dict[str, Any], mcts: MCTSConfig, threads: int,
                 device: str = "cpu"):
        torch.set_num_threads(max(1, int(threads)))
        torch.set_flush_denormal(True)
        self.index = index
        self.model = PolicyValueNet(**model_config)
        self.model.eval()
        self.evaluator = NetworkEvaluator(self.model, device=device)
        self.mcts = mcts
        self.version = -1

    def play(self, weights: dict[str, np.ndarray], version: int, seed: list[int],
             settings: SelfPlaySettings) -> tuple[SelfPlayRecords, dict[str, Any]]:
        """A batch of self-play games as `settings` say (the learner's, for its current phase)
        with the weights of `version` (loaded if newer than the actor's); returns (records,
        info) with the version played and the time taken."""
        if version > self.version:
            state = {k: torch.from_numpy(np.asarray(v)) for k, v in weights.items()}
            self.model.load_state_dict(state)
            self.model.eval()
            self.version = version
        started = time.perf_counter()
        records = play_batch(self.evaluator, np.random.default_rng(seed), self.mcts, settings)
        return records, {"actor": self.index, "version": self.version,
                         "seconds": time.perf_counter() - started}


def run_training_ray(settings: GongzhuTrainConfig) -> Run:
    """train.py with distributed=ray: connect (or start a local Ray), then the run (`settings`
    checked as run_training's)."""
    ray = connect(settings.ray.address, settings.ray.num_cpus)
    return run_training(settings, train_fn=lambda run, s: _train_ray(ray, run, s))


def weights_payload(model: torch.nn.Module) -> dict[str, np.ndarray]:
    """A network's weights as the learner publishes them to the actors through Ray's object
    store (and benchmarks/distributed.py times): its state dict as numpy arrays, copied off the
    learner's tensors, which SelfPlayActor.play turns back into tensors."""
    return {k: v.detach().cpu().numpy().copy() for k, v in model.state_dict().items()}


class _Actors:
    """The actors, their queued calls and what they have sent (the learner's side)."""

    def __init__(self, ray: Any, run: Run, settings: GongzhuTrainConfig):
        r, mcts = settings.ray, settings.search
        self.ray, self.run, self.settings = ray, run, settings
        remote = ray.remote(SelfPlayActor).options(
            num_cpus=float(r.actor_cpus), num_gpus=float(r.actor_gpus), max_restarts=-1,
            max_task_retries=0)
        device = "cuda" if float(r.actor_gpus) > 0 else "cpu"
        self.handles = [remote.remote(i, run.model.config(), mcts, int(r.actor_threads), device)
                        for i in range(int(r.actors))]
        self.calls = [0] * len(self.handles)
        self.pending: dict[Any, int] = {}  # object ref -> actor index
        self.restarts = 0
        self.publish()
        for i in range(len(self.handles)):
            for _ in range(int(r.in_flight)):
                self.submit(i)

    def publish(self) -> None:
        """The learner's weights as the newest version (version = learner step)."""
        self.version = self.run.step
        self.weights_ref = self.ray.put(weights_payload(self.run.model))

    def submit(self, i: int) -> None:
        now = self.run.in_force(self.settings)  # the train settings of the run's phase
        seed = [int(now.seed), SEED_TAG, i, self.run.step, self.calls[i]]
        self.calls[i] += 1
        ref = self.handles[i].play.remote(self.weights_ref, self.version, seed,
                                          SelfPlaySettings.of(now))
        self.pending[ref] = i

    def next_batch(self) -> tuple[SelfPlayRecords, dict[str, Any]]:
        """The next finished call: (records, info), after queueing the actor's next call; a
        call lost with its actor is counted and replaced."""
        while True:
            ready, _ = self.ray.wait(list(self.pending), num_returns=1)
            i = self.pending.pop(ready[0])
            try:
                result: tuple[SelfPlayRecords, dict[str, Any]] = self.ray.get(ready[0])
            except self.ray.exceptions.RayActorError:
                self.restarts += 1  # Ray restarts the actor; the next call goes to the new one
                self.submit(i)
                continue
            self.submit(i)
            return result

    def stop(self) -> None:
        for handle in self.handles:
            self.ray.kill(handle, no_restart=True)


def _train_ray(ray: Any, run: Run, settings: GongzhuTrainConfig) -> None:
    r, t = settings.ray, settings.train
    logs = open_logs(run, t)
    log_start(run, settings, logs)
    if run.is_fresh():
        start_fresh(run, settings, logs)
    logs.bar = progress_bar(run, settings)
    actors = _Actors(ray, run, settings)
    dropped, ages, waits = 0, [], []
    # actor -> [games, seconds]
    actor_games: defaultdict[int, list[float]] = defaultdict(lambda: [0, 0.0])
    try:
        while not should_stop(run, t):
            if enter_phase(run, settings, logs):
                raise ValueError(
                    f"train.schedule phase {run.phase} grows the network at {run.games} games, "
                    "which distributed=ray does not do yet (its actors are built for one shape):"
                    " run that phase with distributed=none, then continue on Ray")
            started = time.perf_counter()
            records, info = actors.next_batch()
            waited = time.perf_counter() - started
            age = actors.version - info["version"]
            games = actor_games[info["actor"]]
            games[0] += records.games
            games[1] += info["seconds"]
            if age > int(r.max_staleness):
                dropped += 1
                continue
            ages.append(age)
            waits.append(waited)
            metrics = learn_from(run, run.in_force(settings), records)
            metrics["distributed/data_age"] = float(age)
            metrics["distributed/dropped"] = float(dropped)
            metrics["distributed/learner_wait_s"] = waited
            metrics["distributed/actor_restarts"] = float(actors.restarts)
            for a, (n, seconds) in actor_games.items():
                metrics[f"distributed/actor_{a}/games_per_s"] = n / max(seconds, 1e-9)
            # Training time = the learner's wall time per step (waiting included): what a
            # user waits, comparable with the single-process mode's.
            before = count_batch(run, records, time.perf_counter() - started)
            log_batch(run, logs, records, metrics, info["seconds"])
            evaluated = evaluate_if_due(run, t, logs)
            save_if_due(run, settings, logs, milestones_passed(run, t, *before), evaluated)
            show_progress(run, logs, metrics)
            if run.step % int(r.publish_every) == 0:
                actors.publish()
    finally:
        run.distributed_stats = {"actor_restarts": actors.restarts, "dropped": dropped,
                                 "mean_data_age": float(np.mean(ages)) if ages else None,
                                 "learner_wait_s": float(np.sum(waits)),
                                 "actor_games": {a: n for a, (n, _) in actor_games.items()}}
        actors.stop()
        logs.close()
