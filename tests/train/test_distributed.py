"""train.py / evaluate.py with distributed=ray, on a real local Ray instance (2 CPUs).

Invariants: a distributed smoke run writes checkpoints, tensorboard (with the data age and each
actor's games/s) and evaluations during training like the single-process mode, resumes from its
checkpoint, and its checkpoint plays in the single-process evaluate.py; an actor killed during a
run is restarted and the run reaches its last batch; evaluation split over Ray tasks gives the
same per-deal values as one process; an unreachable cluster fails at once with a message naming
the address.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")

# One local Ray instance at a time: under pytest-xdist these tests all run in one worker.
pytestmark = pytest.mark.xdist_group("ray")

from composed import config  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)

from scrofazero import entry  # noqa: E402
from scrofazero.cluster import connect  # noqa: E402
from scrofazero.eval.arena import duplicate_match  # noqa: E402
from scrofazero.games.gongzhu.deals import load_deals  # noqa: E402
from scrofazero.train import distributed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def local_ray():
    connect(num_cpus=2)
    yield ray
    ray.shutdown()


def _scalars(log_dir: Path) -> dict:
    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    return {tag: [e.value for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def test_smoke_run_resumes_and_plays_in_evaluate(tmp_path, local_ray):
    common = ("experiment=smoke", "distributed=ray", "ray.actors=2", "ray.actor_cpus=0.5",
              f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}", "run=dist")
    run = entry.train(config("train", *common))
    folder = tmp_path / "ck" / "dist"
    assert run.step == 2 and (folder / "latest.pt").is_file()
    evals = [json.loads(x) for x in (folder / "eval.jsonl").read_text().splitlines()]
    assert [e["step"] for e in evals] == [0, 2]
    tags = _scalars(tmp_path / "runs" / "dist")
    assert len(tags["distributed/data_age"]) == 2 and min(tags["distributed/data_age"]) >= 0
    assert max(tags["distributed/data_age"]) <= 4  # ray.max_staleness
    assert any(t.startswith("distributed/actor_") and t.endswith("games_per_s") for t in tags)
    assert tags["train/games"][-1] == 8  # two batches of train.games_per_batch=4
    # resumed: new actors start from the checkpoint's weights, the step count goes on
    run = entry.train(config("train", *common, "resume=true", "train.max_batches=3"))
    assert run.step == 3 and run.games == 12
    # the single-process evaluate.py plays the distributed run's checkpoint
    out = tmp_path / "wpg.json"
    entry.evaluate(config("evaluate", "mode=wpg", "player=raw",
                          f"checkpoint={folder / 'latest.pt'}", "deals=2", "workers=1",
                          f"out={out}"))
    assert json.loads(out.read_text())["deals"] == 2


def test_a_killed_actor_is_restarted_and_the_run_goes_on(tmp_path, local_ray, monkeypatch):
    original = distributed._Actors.next_batch
    calls = []

    def next_batch(self):
        if len(calls) == 1:  # after the first batch: kill actor 0 (Ray restarts it)
            ray.kill(self.handles[0], no_restart=False)
        calls.append(1)
        return original(self)

    monkeypatch.setattr(distributed._Actors, "next_batch", next_batch)
    # one actor, so every call after the kill goes to it: the loss is certain to be seen
    run = entry.train(config("train", "experiment=smoke", "distributed=ray", "ray.actors=1",
                             "train.max_batches=4", "train.eval_every=0",
                             f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}",
                             "run=kill"))
    assert run.step == 4 and (tmp_path / "ck" / "kill" / "latest.pt").is_file()
    assert run.distributed_stats["actor_restarts"] >= 1
    assert max(_scalars(tmp_path / "runs" / "kill")["distributed/actor_restarts"]) >= 1


def test_evaluation_on_ray_equals_one_process(local_ray):
    deals = load_deals(limit=5)
    one = duplicate_match("if", "random", deals, seed=3, workers=1, progress=False)
    split = duplicate_match("if", "random", deals, seed=3, workers=3, progress=False,
                            backend="ray")
    np.testing.assert_array_equal(one.values, split.values)
    assert one.mean == split.mean


def test_unreachable_cluster_fails_at_once(tmp_path):
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "train.py", "distributed=ray", "ray.address=127.0.0.1:9",
         "experiment=smoke", f"checkpoint_dir={tmp_path}", f"log_dir={tmp_path}",
         "progress=false"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "ray.address=127.0.0.1:9" in proc.stderr and "cannot reach" in proc.stderr
    assert time.perf_counter() - started < 60
    assert not any(tmp_path.iterdir())  # no run folder left behind
