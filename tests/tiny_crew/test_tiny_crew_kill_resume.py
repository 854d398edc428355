"""Tiny Crew (tiny_crew/train.py under the run harness, scrofazero/runs.py): a run killed with
SIGKILL at a random moment after its first checkpoint and resumed ends with exactly the policy
table and eval.jsonl of an uninterrupted run; a trainer.npz in the layout before the harness (no
run envelope in its info) resumes to the same end.

The killed run is a real `train.py` process; the uninterrupted run and the resumed half run
in-process on the same settings."""

import json

import numpy as np
import pytest
from composed import config
from kill_run import jsonl_records, kill_after_checkpoint

from scrofazero import entry
from scrofazero.tiny_crew.policy_file import load_policy

SETTINGS = ("game=tiny_crew", "game.method=cfr", "game.eval_every=2", "game.deal_stride=350")
TIMING = ("seconds",)
# a resume in-process sets the global random states to its checkpoint's: each test gives them back
pytestmark = pytest.mark.usefixtures("global_random_states")


def _args(tmp_path, run, iterations):
    return [*SETTINGS, f"run={run}", f"checkpoint_dir={tmp_path / 'ck'}",
            f"log_dir={tmp_path / 'runs'}", f"game.iterations={iterations}"]


def _same_end(tmp_path, a, b):
    pa = load_policy(tmp_path / "ck" / a / "policy.npz").to_arrays()
    pb = load_policy(tmp_path / "ck" / b / "policy.npz").to_arrays()
    assert np.array_equal(pa[0], pb[0]) and np.array_equal(pa[1], pb[1])
    assert (jsonl_records(tmp_path / "ck" / a / "eval.jsonl", TIMING)
            == jsonl_records(tmp_path / "ck" / b / "eval.jsonl", TIMING))


def _iterations(path):
    with np.load(path, allow_pickle=False) as data:
        return json.loads(str(data["info"]))["iterations"]


def test_killed_run_resumes_to_the_uninterrupted_end(tmp_path):
    delay = kill_after_checkpoint(_args(tmp_path, "killed", 10**7),
                                  tmp_path / "ck" / "killed" / "trainer.npz", max_delay=3.0)
    end = _iterations(tmp_path / "ck" / "killed" / "trainer.npz") + 4
    entry.train(config("train", *_args(tmp_path, "killed", end), "resume=true"))
    entry.train(config("train", *_args(tmp_path, "whole", end)))
    _same_end(tmp_path, "killed", "whole")
    steps = [r["iterations"] for r in jsonl_records(tmp_path / "ck" / "killed" / "eval.jsonl",
                                                     ())]
    assert steps == list(range(2, end + 1, 2)), f"killed {delay:.2f} s after the checkpoint"


def test_a_trainer_file_without_the_run_envelope_resumes(tmp_path):
    entry.train(config("train", *_args(tmp_path, "old", 4)))
    path = tmp_path / "ck" / "old" / "trainer.npz"
    with np.load(path, allow_pickle=False) as data:
        arrays = {name: data[name] for name in data.files}
    info = json.loads(str(arrays.pop("info")))
    del info["run"]  # the layout written before the run harness
    np.savez(path, info=np.array(json.dumps(info)), **arrays)
    entry.train(config("train", *_args(tmp_path, "old", 8), "resume=true"))
    entry.train(config("train", *_args(tmp_path, "whole", 8)))
    _same_end(tmp_path, "old", "whole")
