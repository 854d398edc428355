"""`python train.py game=tiny_crew` (scrofazero/tiny_crew/train.py, policy_file.py) and its policy files.

Invariants: both methods train with exact evaluations logged to eval.jsonl and tensorboard and
write policy.npz, which evaluate.py reads back to the same exact win rate and improves by best
responses (never lowering it); an existing run is
not overwritten; a run stopped and resumed ends with exactly the policy of an uninterrupted run;
resuming a missing or mismatched run is refused; a damaged policy file is reported with its name;
save/load round-trips.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scrofazero.tiny_crew.exact import TabularPolicy
from scrofazero.tiny_crew.policy_file import load_policy, save_policy

ROOT = Path(__file__).resolve().parents[2]


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
               f"game.{method}_policy={tmp_path / 'ck' / 'r' / 'policy.npz'}",
               "game.improve_learned=1", f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result[method] == pytest.approx(evals[-1]["win_rate"], abs=1e-6)
    # best responses only ever raise the exact win rate, and each step is logged
    steps = [s["win_rate"] for s in result[f"{method}_improvement_steps"]]
    assert result[f"{method}_improved"] == (steps[-1] if steps else result[method])
    assert steps == sorted(steps) and all(v > result[method] for v in steps)
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


@pytest.mark.parametrize("method", ["cfr", "mccfr"])
def test_resume_equals_uninterrupted(method, tmp_path):
    common = ("game=tiny_crew", f"game.method={method}", "game.eval_every=4",
              "game.deal_stride=350", f"checkpoint_dir={tmp_path / 'ck'}",
              f"log_dir={tmp_path / 'runs'}")
    assert run("train.py", *common, "run=whole", "game.iterations=8").returncode == 0
    assert run("train.py", *common, "run=split", "game.iterations=4").returncode == 0
    proc = run("train.py", *common, "run=split", "game.iterations=8", "resume=true")
    assert proc.returncode == 0, proc.stderr[-3000:]
    whole = load_policy(tmp_path / "ck" / "whole" / "policy.npz").to_arrays()
    split = load_policy(tmp_path / "ck" / "split" / "policy.npz").to_arrays()
    assert np.array_equal(whole[0], split[0]) and np.array_equal(whole[1], split[1])
    iterations = [json.loads(x)["iterations"] for x in
                  (tmp_path / "ck" / "split" / "eval.jsonl").read_text().splitlines()]
    assert iterations == [4, 8]
    proc = run("train.py", *common, "run=split", "game.iterations=8", "resume=true",
               "game.t2=2")
    assert proc.returncode != 0 and "different run" in proc.stderr
    proc = run("train.py", *common, "run=nothing", "resume=true")
    assert proc.returncode != 0 and "does not exist" in proc.stderr
