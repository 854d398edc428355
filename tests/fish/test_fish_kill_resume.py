"""Fish (fish/train.py under the run harness, scrofazero/runs.py): a run killed with SIGKILL at
a random moment after its first checkpoint and resumed ends with exactly the weights,
train.jsonl and eval.jsonl of an uninterrupted run (before the harness, a kill between
checkpoints repeated train.jsonl lines on resume). A latest.pt in the layout before the harness
resumes to the same end; model.pt copied in as latest.pt is refused by name.

The killed run is a real `train.py` process; the uninterrupted run and the resumed half run
in-process on the same settings."""

import shutil

import pytest
import torch
from composed import config, refused
from kill_run import GlobalRandom, jsonl_records, kill_after_checkpoint

from scrofazero import entry

SETTINGS = ("game=fish", "game.train_sizes=[6]", "game.games_per_update=1", "game.max_moves=40",
            "game.helping=[0.0,0.0]", "game.checkpoint_every=1", "game.eval_every=2",
            "game.eval_games=1", "game.table_sizes=[6]")
TIMING = ("seconds", "games_per_s", "update_s")


def _args(tmp_path, run, updates):
    return [*SETTINGS, f"run={run}", f"checkpoint_dir={tmp_path / 'ck'}",
            f"log_dir={tmp_path / 'runs'}", f"game.updates={updates}"]


def _same_end(tmp_path, a, b, logs=("train.jsonl", "eval.jsonl")):
    wa = torch.load(tmp_path / "ck" / a / "latest.pt", weights_only=True)["model"]
    wb = torch.load(tmp_path / "ck" / b / "latest.pt", weights_only=True)["model"]
    assert all(torch.equal(wa[k], wb[k]) for k in wa)
    for log in logs:
        assert (jsonl_records(tmp_path / "ck" / a / log, TIMING)
                == jsonl_records(tmp_path / "ck" / b / log, TIMING)), log


@pytest.fixture(autouse=True)
def _give_back_random_states():
    with GlobalRandom():
        yield


def test_killed_run_resumes_to_the_uninterrupted_end(tmp_path):
    delay = kill_after_checkpoint(_args(tmp_path, "killed", 100000),
                                  tmp_path / "ck" / "killed" / "latest.pt", max_delay=3.0)
    latest = torch.load(tmp_path / "ck" / "killed" / "latest.pt", weights_only=True)
    end = latest["trainer"]["updates"] + 2
    entry.train(config("train", *_args(tmp_path, "killed", end), "resume=true"))
    entry.train(config("train", *_args(tmp_path, "whole", end)))
    _same_end(tmp_path, "killed", "whole")
    updates = [r["update"] for r in jsonl_records(tmp_path / "ck" / "killed" / "train.jsonl", ())]
    assert updates == list(range(1, end + 1)), f"killed {delay:.2f} s after the checkpoint"


def test_old_layout_resumes_and_a_model_file_is_not_a_training_state(tmp_path, capsys,
                                                                     monkeypatch):
    entry.train(config("train", *_args(tmp_path, "old", 1), "game.eval_every=0"))
    latest = tmp_path / "ck" / "old" / "latest.pt"
    payload = torch.load(latest, weights_only=True)
    del payload["run"]  # the layout written before the run harness
    torch.save(payload, latest)
    entry.train(config("train", *_args(tmp_path, "old", 3), "game.eval_every=0", "resume=true"))
    entry.train(config("train", *_args(tmp_path, "whole", 3), "game.eval_every=0"))
    _same_end(tmp_path, "old", "whole", logs=("train.jsonl",))
    shutil.copy(tmp_path / "ck" / "old" / "model.pt", latest)
    err = refused(entry.train, config("train", *_args(tmp_path, "old", 4), "game.eval_every=0",
                                      "resume=true"), capsys, monkeypatch)
    assert "latest.pt" in err and "model file without the trainer's state" in err


def test_resume_overrides_allow_a_named_setting(tmp_path, capsys, monkeypatch):
    entry.train(config("train", *_args(tmp_path, "r", 1), "game.eval_every=0"))
    err = refused(entry.train, config("train", *_args(tmp_path, "r", 2), "game.eval_every=0",
                                      "game.lr=0.5", "resume=true"), capsys, monkeypatch)
    assert "game.lr" in err and "resume_overrides=[game.lr]" in err
    entry.train(config("train", *_args(tmp_path, "r", 2), "game.eval_every=0", "game.lr=0.5",
                       "resume=true", "resume_overrides=[game.lr]"))
    latest = torch.load(tmp_path / "ck" / "r" / "latest.pt", weights_only=True)
    assert latest["trainer"]["updates"] == 2 and latest["run"]["settings"]["game"]["lr"] == 0.5
