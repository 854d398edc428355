"""Fish (fish/learning/train.py under the run harness, scrofazero/runs.py): a run killed with
SIGKILL at a random moment after its first checkpoint and resumed ends with exactly the weights,
train.jsonl and eval.jsonl of an uninterrupted run (before the harness, a kill between
checkpoints repeated train.jsonl lines on resume). A latest.pt in the layout before the harness
resumes to the same end; model.pt copied in as latest.pt is refused by name. A latest.pt written
before FishConfig was split into parts (its settings named game.lr, ..., train.seed) is read with
today's names and the same values.

The killed run is a real `train.py` process; the uninterrupted run and the resumed half run
in-process on the same settings."""

import shutil
from pathlib import Path

import pytest
import torch
from composed import config, refused
from kill_run import assert_same_end, jsonl_records, kill_after_checkpoint

from scrofazero import entry
from scrofazero.fish.learning.train import load_envelope, run_meta, run_settings
from scrofazero.runs import settings_changes

SETTINGS = ("game=fish", "game.selfplay.train_sizes=[6]", "game.selfplay.games_per_update=1",
            "game.match.max_moves=40", "game.selfplay.helping=[0.0,0.0]",
            "game.selfplay.checkpoint_every=1", "game.selfplay.eval_every=2",
            "game.selfplay.eval_games=1", "game.match.table_sizes=[6]")
NO_EVAL = "game.selfplay.eval_every=0"
ROOT = Path(__file__).resolve().parents[2]
TIMING = ("seconds", "games_per_s", "update_s")
# a resume in-process sets the global random states to its checkpoint's: each test gives them back
pytestmark = pytest.mark.usefixtures("global_random_states")


def _args(tmp_path, run, updates):
    return [*SETTINGS, f"run={run}", f"checkpoint_dir={tmp_path / 'ck'}",
            f"log_dir={tmp_path / 'runs'}", f"game.selfplay.updates={updates}"]


def _same_end(tmp_path, a, b, logs=("train.jsonl", "eval.jsonl")):
    assert_same_end(tmp_path / "ck" / a, tmp_path / "ck" / b, logs, TIMING)


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
    entry.train(config("train", *_args(tmp_path, "old", 1), NO_EVAL))
    latest = tmp_path / "ck" / "old" / "latest.pt"
    payload = torch.load(latest, weights_only=True)
    del payload["run"]  # the layout written before the run harness
    torch.save(payload, latest)
    entry.train(config("train", *_args(tmp_path, "old", 3), NO_EVAL, "resume=true"))
    entry.train(config("train", *_args(tmp_path, "whole", 3), NO_EVAL))
    _same_end(tmp_path, "old", "whole", logs=("train.jsonl",))
    shutil.copy(tmp_path / "ck" / "old" / "model.pt", latest)
    err = refused(entry.train, config("train", *_args(tmp_path, "old", 4), NO_EVAL,
                                      "resume=true"), capsys, monkeypatch)
    assert "latest.pt" in err and "model file without the trainer's state" in err


def test_resume_overrides_allow_a_named_setting(tmp_path, capsys, monkeypatch):
    entry.train(config("train", *_args(tmp_path, "r", 1), NO_EVAL))
    err = refused(entry.train, config("train", *_args(tmp_path, "r", 2), NO_EVAL,
                                      "game.selfplay.lr=0.5", "resume=true"), capsys, monkeypatch)
    assert "game.selfplay.lr" in err and "resume_overrides=[game.selfplay.lr]" in err
    entry.train(config("train", *_args(tmp_path, "r", 2), NO_EVAL, "game.selfplay.lr=0.5",
                       "resume=true", "resume_overrides=[game.selfplay.lr]"))
    latest = torch.load(tmp_path / "ck" / "r" / "latest.pt", weights_only=True)
    assert latest["trainer"]["updates"] == 2
    assert latest["run"]["settings"]["game"]["selfplay"]["lr"] == 0.5


def test_a_checkpoint_from_before_the_settings_parts_reads_with_todays_names():
    """tests/data/fish_latest_b0b7147.pt: `train.py game=fish run=sp game.train_sizes=[6]
    game.games_per_update=1 game.max_moves=40 game.updates=2 game.eval_every=2
    game.eval_games=1 game.table_sizes=[6] game.lr=2e-3 game.helping=[0.5,0.0]` at b0b7147."""
    old = load_envelope(ROOT / "tests" / "data" / "fish_latest_b0b7147.pt")
    same = config("train", "game=fish", "game.selfplay.train_sizes=[6]",
                  "game.selfplay.games_per_update=1", "game.match.max_moves=40",
                  "game.selfplay.lr=2e-3", "game.selfplay.helping=[0.5,0.0]")
    assert old.step == 2 and old.settings == run_settings(run_meta(same))
    assert settings_changes(old.settings, run_settings(run_meta(same))) == []
    other = config("train", "game=fish", "game.selfplay.train_sizes=[6]",
                   "game.selfplay.games_per_update=1", "game.match.max_moves=40")
    changes = settings_changes(old.settings, run_settings(run_meta(other)))
    assert any("game.selfplay.lr" in c for c in changes) and any("helping" in c for c in changes)
