"""train.py end to end with the smoke preset.

Invariants: `python train.py experiment=smoke` trains, writes tensorboard events, a loadable
`latest.pt` and numbered snapshots, and an evaluation record; evaluate.py loads that checkpoint
for the 'raw' player; starting again without resume refuses to overwrite; resume=true continues
from the saved step (no step is lost or repeated); a corrupt latest gets an error naming it.
The training runs are real processes; the evaluation and the refusals run the scripts in this
process (composed.script).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from composed import script

from scrofazero.nn.checkpoint import load_checkpoint

ROOT = Path(__file__).resolve().parents[1]


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("smoke")
    args = ("experiment=smoke", "run=s", f"checkpoint_dir={base / 'ckpt'}",
            f"log_dir={base / 'runs'}", "progress=false")
    proc = run("train.py", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return base, args


def test_smoke_writes_checkpoint_events_and_eval(smoke_run):
    base, _ = smoke_run
    run_dir = base / "ckpt" / "s"
    payload = load_checkpoint(run_dir / "latest.pt")
    assert payload["step"] == 2
    assert sorted(p.name for p in run_dir.glob("ckpt_*.pt"))[-1] == "ckpt_0000002.pt"
    assert load_checkpoint(run_dir / "milestone_0min.pt")["step"] == 0
    evals = [json.loads(line) for line in (run_dir / "eval.jsonl").read_text().splitlines()]
    assert [e["step"] for e in evals] == [0, 2]
    assert all(abs(e["wpg_raw"]) < 1000 for e in evals)
    assert list((base / "runs" / "s").glob("events.out.tfevents.*"))


def test_evaluate_loads_the_checkpoint(smoke_run, tmp_path):
    base, _ = smoke_run
    out = tmp_path / "wpg.json"
    proc = script("evaluate.py", "--wpg", "player=raw",
               f"checkpoint={base / 'ckpt' / 's' / 'latest.pt'}", "deals=2", "workers=1",
               "progress=false", f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(out.read_text())["player"] == "raw"


def test_no_overwrite_then_resume(smoke_run):
    base, args = smoke_run
    proc = script("train.py", *args)  # in this process: a refusal before any work
    assert proc.returncode != 0 and "resume=true" in proc.stderr
    proc = run("train.py", *args, "resume=true", "train.max_batches=3", "train.eval_every=0")
    assert proc.returncode == 0, proc.stderr[-3000:]
    payload = load_checkpoint(base / "ckpt" / "s" / "latest.pt")
    assert payload["step"] == 3
    assert payload["extra"]["games"] == 3 * 4  # games_per_batch 4 in the smoke preset


def test_corrupt_latest_is_named(tmp_path):
    run_dir = tmp_path / "ckpt" / "bad"
    run_dir.mkdir(parents=True)
    (run_dir / "latest.pt").write_bytes(b"not a checkpoint")
    proc = script("train.py", "experiment=smoke", "run=bad", f"checkpoint_dir={tmp_path / 'ckpt'}",
               f"log_dir={tmp_path / 'runs'}", "resume=true", "progress=false")
    assert proc.returncode != 0 and "latest.pt" in proc.stderr
