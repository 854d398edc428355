"""`python train.py game=tiny_crew` (scrofazero/train/tiny_crew.py) and its policy files.

Invariants: both methods train with exact evaluations logged to eval.jsonl and tensorboard and
write policy.npz, which evaluate.py reads back to the same exact win rate; an existing run is
not overwritten; a damaged policy file is reported with its name; save/load round-trips.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scrofazero.games.tiny_crew.exact import TabularPolicy
from scrofazero.train.tiny_crew import load_policy, save_policy

ROOT = Path(__file__).resolve().parents[1]


def run(script, *args):
    return subprocess.run([sys.executable, script, *args, "progress=false"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("method", ["cfr", "mccfr"])
def test_train_then_evaluate(method, tmp_path):
    args = ("game=tiny_crew", f"game.method={method}", "game.iterations=12",
            "game.eval_every=6", "game.deal_stride=350", "run=r",
            f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}")
    proc = run("train.py", *args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    evals = [json.loads(x) for x in (tmp_path / "ck" / "r" / "eval.jsonl").read_text().splitlines()]
    assert [e["iterations"] for e in evals] == [6, 12]
    assert list((tmp_path / "runs" / "r").glob("events.out.tfevents.*"))
    out = tmp_path / "e.json"
    proc = run("evaluate.py", "game=tiny_crew", "game.deal_stride=350", "game.improve_rounds=1",
               f"game.{method}_policy={tmp_path / 'ck' / 'r' / 'policy.npz'}", f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(out.read_text())[method] == pytest.approx(evals[-1]["win_rate"], abs=1e-6)
    proc = run("train.py", *args)
    assert proc.returncode != 0 and "exists" in proc.stderr


def test_policy_file_round_trip_and_errors(tmp_path):
    policy = TabularPolicy()
    policy.set_rows([5, 9], np.eye(12)[[3, 4]])
    save_policy(tmp_path / "p.npz", policy, {"method": "cfr"})
    back = load_policy(tmp_path / "p.npz")
    assert back.to_arrays()[0].tolist() == [5, 9]
    assert np.array_equal(back.probs, policy.probs)
    (tmp_path / "bad.npz").write_bytes(b"not a policy")
    with pytest.raises(ValueError, match="bad.npz"):
        load_policy(tmp_path / "bad.npz")
    with pytest.raises(FileNotFoundError, match="none.npz"):
        load_policy(tmp_path / "none.npz")
