"""`python train.py game=tiny_crew` (scrofazero/tiny_crew/train.py, policy_file.py) and its
policy files.

Invariants: both methods train with exact evaluations logged to eval.jsonl and tensorboard and
write policy.npz, which evaluate.py reads back to the same exact win rate and improves by best
responses (never lowering it); an existing run is
not overwritten; a run stopped and resumed ends with exactly the policy of an uninterrupted run;
resuming a missing or mismatched run is refused; the trainer file holds only arrays and JSON, so
a crafted one (a pickle, an object array) or a damaged one is refused by name without running
anything; a damaged policy file is reported with its name; save/load round-trips.

Speed: each train.py / evaluate.py process compiles the numba core again (some 15-20 s), so
most runs here go in-process through scrofazero.entry.train / entry.evaluate (what the two
scripts call) with the config hydra composes from configs/ for the same overrides; the command
line itself runs where it matters: the resumed half of a run is a fresh `train.py` process
(nothing but the files carries over), and refusing to overwrite a run is checked on `train.py`
run in this process (composed.script).
"""

import builtins
import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from composed import config, refused, script

from scrofazero import entry
from scrofazero.tiny_crew.exact import TabularPolicy
from scrofazero.tiny_crew.policy_file import load_policy, save_policy
from scrofazero.tiny_crew.train import TRAINER_FILE, _start_or_resume

ROOT = Path(__file__).resolve().parents[2]


def run(script, *args):
    return subprocess.run([sys.executable, script, *args, "progress=false"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(autouse=True)
def _numpy_global_random_state():
    """In-process mccfr training seeds numpy's global generator (OpenSpiel's sampler draws from
    it): give the tests after these their state back."""
    state = np.random.get_state()
    yield
    np.random.set_state(state)


@pytest.mark.parametrize("method", ["cfr", "mccfr"])
def test_train_then_evaluate(method, tmp_path):
    args = ("game=tiny_crew", f"game.method={method}", "game.iterations=12",
            "game.eval_every=6", "game.deal_stride=350", "run=r",
            f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}")
    entry.train(config("train", *args))
    evals = [json.loads(x) for x in (tmp_path / "ck" / "r" / "eval.jsonl").read_text().splitlines()]
    assert [e["iterations"] for e in evals] == [6, 12]
    assert list((tmp_path / "runs" / "r").glob("events.out.tfevents.*"))
    out = tmp_path / "e.json"
    entry.evaluate(config("evaluate", "game=tiny_crew", "game.deal_stride=350",
                          "game.improve_rounds=1",
                          f"game.{method}_policy={tmp_path / 'ck' / 'r' / 'policy.npz'}",
                          "game.improve_learned=1", f"out={out}"))
    result = json.loads(out.read_text())
    assert result[method] == pytest.approx(evals[-1]["win_rate"], abs=1e-6)
    # best responses only ever raise the exact win rate, and each step is logged
    steps = [s["win_rate"] for s in result[f"{method}_improvement_steps"]]
    assert result[f"{method}_improved"] == (steps[-1] if steps else result[method])
    assert steps == sorted(steps) and all(v > result[method] for v in steps)
    policy = (tmp_path / "ck" / "r" / "policy.npz").read_bytes()
    proc = script("train.py", *args, "progress=false")  # in this process (composed.script)
    assert proc.returncode != 0 and "exists" in proc.stderr
    assert (tmp_path / "ck" / "r" / "policy.npz").read_bytes() == policy


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
def test_resume_equals_uninterrupted(method, tmp_path, capsys, monkeypatch):
    common = ("game=tiny_crew", f"game.method={method}", "game.eval_every=4",
              "game.deal_stride=350", f"checkpoint_dir={tmp_path / 'ck'}",
              f"log_dir={tmp_path / 'runs'}")
    entry.train(config("train", *common, "run=whole", "game.iterations=8"))
    entry.train(config("train", *common, "run=split", "game.iterations=4"))
    # the second half in a fresh process: only what the first half wrote carries over
    proc = run("train.py", *common, "run=split", "game.iterations=8", "resume=true")
    assert proc.returncode == 0, proc.stderr[-3000:]
    whole = load_policy(tmp_path / "ck" / "whole" / "policy.npz").to_arrays()
    split = load_policy(tmp_path / "ck" / "split" / "policy.npz").to_arrays()
    assert np.array_equal(whole[0], split[0]) and np.array_equal(whole[1], split[1])
    iterations = [json.loads(x)["iterations"] for x in
                  (tmp_path / "ck" / "split" / "eval.jsonl").read_text().splitlines()]
    assert iterations == [4, 8]
    assert [p.name for p in (tmp_path / "ck" / "split").glob("trainer.*")] == ["trainer.npz"]
    err = refused(entry.train, config("train", *common, "run=split", "game.iterations=8",
                                      "resume=true", "game.t2=2"), capsys, monkeypatch)
    assert "different run" in err
    err = refused(entry.train, config("train", *common, "run=nothing", "resume=true"),
                  capsys, monkeypatch)
    assert "does not exist" in err


class _Payload:
    """Unpickling this creates `marker`: proof that loading ran code from the file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return builtins.open, (self.marker, "w")


RUN_META = {"method": "cfr", "setting": {}, "deal_stride": 1, "seed": 0}


def _resume(run_dir):
    restored = []
    learner = {"restore": lambda *args: restored.append(args)}
    try:
        return _start_or_resume(run_dir, True, RUN_META, learner)
    finally:
        assert not restored, "a refused file reached the learner"


def _crafted(kind, path, marker):
    info = np.array(json.dumps({"format": "scrofazero tiny_crew trainer", "version": 1,
                                "meta": RUN_META, "iterations": 4, "seconds": 1.0,
                                "learner": {}}))
    if kind == "pickle":  # a pickle payload under the trainer file's name
        path.write_bytes(pickle.dumps({"meta": RUN_META, "x": _Payload(marker)}))
    elif kind == "object_array":  # a valid npz whose member is a pickled object array
        np.savez(path, info=info, regret=np.array([_Payload(marker)], dtype=object))
    elif kind == "object_info":
        np.savez(path, info=np.array([_Payload(marker)], dtype=object))
    elif kind == "truncated":
        np.savez(path, info=info, regret=np.zeros((3, 12)))
        path.write_bytes(path.read_bytes()[:100])
    elif kind == "not_json":
        np.savez(path, info=np.array("{meta: 1"))
    elif kind == "no_info":
        np.savez(path, regret=np.zeros((3, 12)))


def _load_trusting(path):
    if path.read_bytes().startswith(b"PK"):  # a zip: numpy's npz
        with np.load(path, allow_pickle=True) as data:
            [data[name] for name in data.files]
    else:
        with open(path, "rb") as f:
            pickle.load(f)


@pytest.mark.parametrize("kind", ["pickle", "object_array", "object_info", "truncated",
                                  "not_json", "no_info"])
def test_crafted_or_damaged_trainer_file_is_refused_without_running_code(kind, tmp_path):
    run_dir, marker = tmp_path / "run", tmp_path / "code_ran"
    run_dir.mkdir()
    path = run_dir / TRAINER_FILE
    _crafted(kind, path, marker)
    if kind in ("pickle", "object_array", "object_info"):
        _load_trusting(path)  # the payload is live: a loader that unpickles runs it
        assert marker.exists()
        marker.unlink()
    with pytest.raises(ValueError, match=str(path)):
        _resume(run_dir)
    assert not marker.exists()


def test_old_pickle_trainer_file_is_not_read(tmp_path):
    run_dir, marker = tmp_path / "run", tmp_path / "code_ran"
    run_dir.mkdir()
    (run_dir / "trainer.pkl").write_bytes(pickle.dumps(_Payload(marker)))
    with pytest.raises(ValueError, match="trainer.pkl.*no longer read"):
        _resume(run_dir)
    assert not marker.exists()
