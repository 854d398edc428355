"""Distributed training speed: the single-process loop beside Ray actor-learner runs, in one run.

For each setting (the single-process loop, then distributed=ray with each actor count of
`--actors`), a fresh run of `--batches` learner steps of the `--experiment` preset (no
evaluation during training, one run folder each in a temporary directory) is timed from its
first batch to its last, and reports: self-play games/s (all actors together, per the learner's
clock), learner samples/s (positions passed through train_step / time inside the learner's
passes) and the learner's share of the wall time; distributed runs add each actor's own
games/s, the mean data age in weight versions and the learner's time waiting for records.
Object-store overhead: a batch of records of the same size (and the weights) sent to and back
from a Ray actor, minus the same round trip with an empty payload.
Usage: python benchmarks/distributed.py --json PATH [--experiment cpu] [--batches 6]
       [--actors 1,2] [--num-cpus 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from hydra import compose, initialize_config_dir

from scrofazero import entry
from scrofazero.atomic import write_json_atomic
from scrofazero.cluster import connect
from scrofazero.train import distributed, loop

ROOT = Path(__file__).resolve().parents[1]


def _config(*overrides):
    entry.register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        return compose(config_name="train", overrides=[*overrides, "progress=false"])


class _Clock:
    """Wraps learn_from and show_progress (both loops call them, show_progress last in every
    step) to time every step."""

    def __init__(self):
        self.learn_seconds = 0.0
        self.samples = 0
        self.step_times: list[float] = []
        self.last_records = None
        self.games_per_batch = 0

    def install(self):
        learn, shown = loop.learn_from, loop.show_progress
        clock = self

        def timed_learn(run, train, records):
            started = time.perf_counter()
            out = learn(run, train, records)
            clock.learn_seconds += time.perf_counter() - started
            clock.samples += len(run.replay) * int(train.passes)
            clock.games_per_batch = int(train.games_per_batch)
            clock.last_records = records
            return out

        def timed_progress(run, logs, metrics):
            shown(run, logs, metrics)
            clock.step_times.append(time.perf_counter())

        loop.learn_from = distributed.learn_from = timed_learn
        loop.show_progress = distributed.show_progress = timed_progress
        return learn, shown

    @staticmethod
    def uninstall(saved):
        loop.learn_from = distributed.learn_from = saved[0]
        loop.show_progress = distributed.show_progress = saved[1]


def measure(experiment: str, batches: int, actors: int | None, folder: Path) -> dict:
    """One fresh run; actors None: the single-process loop."""
    overrides = [f"experiment={experiment}", f"train.max_batches={batches}",
                 "train.eval_every=0", f"checkpoint_dir={folder / 'ck'}",
                 f"log_dir={folder / 'runs'}", f"run=r{actors or 0}"]
    if actors:
        overrides += ["distributed=ray", f"ray.actors={actors}"]
    clock = _Clock()
    saved = clock.install()
    try:
        run = entry.train(_config(*overrides))
    finally:
        _Clock.uninstall(saved)
    times = clock.step_times
    wall = times[-1] - times[0]  # first batch done -> last batch done: start-up excluded
    steps = len(times) - 1
    games = steps * clock.games_per_batch
    out = {"setting": f"ray, {actors} actor(s)" if actors else "single process",
           "steps_timed": steps, "games_per_s": games / wall,
           "learner_samples_per_s": clock.samples / clock.learn_seconds,
           "learner_share_of_wall": clock.learn_seconds * steps / len(times) / wall,
           "positions_per_batch": int(clock.last_records.plies_searched)}
    if actors:
        stats = run.distributed_stats
        out["actor_restarts"] = stats["actor_restarts"]
        out["dropped"] = stats["dropped"]
        out["mean_data_age"] = stats["mean_data_age"]
        out["learner_wait_s"] = stats["learner_wait_s"]
        out["actor_games"] = {str(k): v for k, v in stats["actor_games"].items()}
    return out, clock.last_records


class _Echo:
    def echo(self, payload):
        return payload


def object_store_overhead(ray, records, weights: dict, repeats: int = 10) -> dict:
    """Round trips through an actor: a records batch, the weights, and nothing (the baseline)."""
    actor = ray.remote(_Echo).options(num_cpus=0).remote()
    ray.get(actor.echo.remote(None))

    def round_trip(payload) -> float:
        ray.get(actor.echo.remote(ray.put(payload)))  # untimed: the first one imports its types
        started = time.perf_counter()
        for _ in range(repeats):
            ray.get(actor.echo.remote(ray.put(payload)))
        return (time.perf_counter() - started) / repeats

    empty = round_trip(None)
    rec = round_trip(records)
    wts = round_trip(weights)
    nbytes = sum(np.asarray(v).nbytes for v in vars(records).values() if hasattr(v, "nbytes"))
    ray.kill(actor)
    return {"empty_round_trip_ms": 1e3 * empty, "records_ms": 1e3 * (rec - empty),
            "records_mb": nbytes / 1e6, "weights_ms": 1e3 * (wts - empty),
            "weights_mb": sum(v.nbytes for v in weights.values()) / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True)
    parser.add_argument("--experiment", default="cpu")
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--actors", default="1,2")
    parser.add_argument("--num-cpus", type=int, default=None)
    args = parser.parse_args()
    ray = connect(num_cpus=args.num_cpus)
    result = {"experiment": args.experiment, "batches": args.batches, "settings": []}
    with tempfile.TemporaryDirectory() as tmp:
        single, records = measure(args.experiment, args.batches, None, Path(tmp))
        result["settings"].append(single)
        for n in (int(x) for x in args.actors.split(",")):
            result["settings"].append(measure(args.experiment, args.batches, n, Path(tmp))[0])
        run_cfg = _config(f"experiment={args.experiment}")
        from scrofazero.nn.network import PolicyValueNet  # the preset's network shape
        net = PolicyValueNet(hidden=list(run_cfg.model.hidden),
                             num_blocks=run_cfg.model.num_blocks)
        weights = distributed.weights_payload(net)
    result["object_store"] = object_store_overhead(ray, records, weights)
    base = result["settings"][0]
    for s in result["settings"]:
        s["games_per_s_vs_single"] = s["games_per_s"] / base["games_per_s"]
        print(f"{s['setting']}: {s['games_per_s']:.2f} games/s "
              f"({s['games_per_s_vs_single']:.2f}x single), learner "
              f"{s['learner_samples_per_s']:.0f} samples/s, learner busy "
              f"{100 * s['learner_share_of_wall']:.0f}% of the wall time"
              + (f"; per actor {s['actor_games']} games, {s['dropped']} batches dropped"
                 if "actor_games" in s else ""))
    o = result["object_store"]
    print(f"object store: a records batch ({o['records_mb']:.1f} MB) {o['records_ms']:.1f} ms "
          f"over an empty round trip ({o['empty_round_trip_ms']:.1f} ms); the weights "
          f"({o['weights_mb']:.1f} MB) {o['weights_ms']:.1f} ms")
    print(f"wrote {write_json_atomic(args.json, result)}")


if __name__ == "__main__":
    main()
