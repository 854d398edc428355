"""Gongzhu: a run killed with SIGKILL at a random moment after its first checkpoint and resumed
ends with exactly the weights, eval.jsonl and tensorboard evaluations of an uninterrupted run
(the run harness, scrofazero/runs.py, and train/loop.py). Also: a checkpoint in the layout
before the harness (no run envelope) resumes to the same end.

The killed run is a real `train.py` process (only its files carry over); the uninterrupted run
and the resumed half run in-process on the same settings (one torch thread both)."""

import pytest
import torch
from composed import config, settings_of
from kill_run import (
    assert_same_end,
    eval_steps_in_tensorboard,
    jsonl_records,
    kill_after_checkpoint,
)

from scrofazero.nn.checkpoint import load_checkpoint
from scrofazero.train.loop import run_training

SETTINGS = ("experiment=smoke", "train.games_per_batch=2", "train.eval_deals=1",
            "train.eval_raw_deals=1", "train.eval_every=2", "train.checkpoint_every=1",
            "train.threads=1")
TIMING = ("train_minutes", "eval_seconds")
# a resume in-process sets the global random states to its checkpoint's: each test gives them back
pytestmark = pytest.mark.usefixtures("global_random_states")


def _args(tmp_path, run, batches):
    return [*SETTINGS, f"run={run}", f"checkpoint_dir={tmp_path / 'ckpt'}",
            f"log_dir={tmp_path / 'runs'}", f"train.max_batches={batches}"]


def _same_end(tmp_path, a, b):
    assert_same_end(tmp_path / "ckpt" / a, tmp_path / "ckpt" / b, ("eval.jsonl",), TIMING)


def test_killed_run_resumes_to_the_uninterrupted_end(tmp_path):
    delay = kill_after_checkpoint(_args(tmp_path, "killed", 100000),
                                  tmp_path / "ckpt" / "killed" / "latest.pt", max_delay=3.0)
    step = load_checkpoint(tmp_path / "ckpt" / "killed" / "latest.pt")["step"]
    end = step + 2
    run_training(settings_of(config("train", *_args(tmp_path, "killed", end), "resume=true")))
    run_training(settings_of(config("train", *_args(tmp_path, "whole", end))))
    _same_end(tmp_path, "killed", "whole")
    steps = [r["step"] for r in jsonl_records(tmp_path / "ckpt" / "killed" / "eval.jsonl", ())]
    assert steps == list(range(0, end + 1, 2)), f"killed {delay:.2f} s after the checkpoint"
    assert eval_steps_in_tensorboard(tmp_path / "runs" / "killed") == steps


def test_a_checkpoint_without_the_run_envelope_resumes(tmp_path):
    run_training(settings_of(config("train", *_args(tmp_path, "old", 1))))
    latest = tmp_path / "ckpt" / "old" / "latest.pt"
    payload = torch.load(latest, weights_only=True)
    del payload["run"]  # the layout written before the run harness
    torch.save(payload, latest)
    run_training(settings_of(config("train", *_args(tmp_path, "old", 3), "resume=true")))
    run_training(settings_of(config("train", *_args(tmp_path, "whole", 3))))
    _same_end(tmp_path, "old", "whole")
    assert "run" in torch.load(latest, weights_only=True)  # continued in the new layout
