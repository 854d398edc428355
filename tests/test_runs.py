"""The run harness (scrofazero/runs.py) on its own.

Invariants: rewind_jsonl keeps exactly the whole lines up to a step (a torn last line goes);
random_states / restore_random give back python's, numpy's and torch's draws; a run header of
another game or version is refused by name; settings_changes names every difference, a group
or key allowed aside; a checkpoint without settings is refused; a fresh start refuses a folder
that holds a run; a fresh RunFolder that fails before a checkpoint past step 0 removes the
folders it created and keeps them once one was made; evaluate.py checks out= before any work."""

import random

import numpy as np
import pytest
import torch
from composed import script

from scrofazero.runs import (
    Envelope,
    RunError,
    RunFolder,
    check_same_settings,
    random_states,
    restore_random,
    resume_or_start,
    rewind_jsonl,
    settings_changes,
)


def test_rewind_keeps_whole_lines_up_to_the_step(tmp_path):
    log = tmp_path / "train.jsonl"
    log.write_text('{"update": 1}\n{"update": 2}\n{"update": 3}\n{"upd')
    rewind_jsonl(log, "update", 2)
    assert log.read_text() == '{"update": 1}\n{"update": 2}\n'
    rewind_jsonl(log, "update", -1)
    assert log.read_text() == ""
    rewind_jsonl(tmp_path / "none.jsonl", "update", 3)
    assert not (tmp_path / "none.jsonl").exists()


def test_random_states_round_trip():
    saved = random_states()
    first = (random.random(), np.random.random(), torch.rand(1).item())
    restore_random(saved, "x")
    assert (random.random(), np.random.random(), torch.rand(1).item()) == first
    with pytest.raises(RunError, match="ckpt.pt: its random states"):
        restore_random({"torch": "no state"}, "ckpt.pt")


def test_headers_of_another_game_or_version_are_refused():
    header = Envelope("fish", settings={"a": 1}, step=3).header()
    assert Envelope.read_header(header, {}, "f.pt", "fish").step == 3
    with pytest.raises(RunError, match="f.pt: a checkpoint of game 'fish', not 'gongzhu'"):
        Envelope.read_header(header, {}, "f.pt", "gongzhu")
    with pytest.raises(RunError, match="f.pt: run envelope version 9"):
        Envelope.read_header({**header, "version": 9}, {}, "f.pt", "fish")


def test_settings_changes_allow_keys_and_groups():
    stored = {"train": {"lr": 1.0, "seed": 0}, "game": {"x": 1}, "old": 2}
    current = {"train": {"lr": 2.0, "seed": 1}, "game": {"x": 1}, "new": 3}
    assert settings_changes(stored, current) == ["train.lr: 1.0 -> 2.0", "train.seed: 0 -> 1"]
    assert settings_changes(stored, current, ["train.lr"]) == ["train.seed: 0 -> 1"]
    assert settings_changes(stored, current, ["train"]) == []
    # a schedule phase key added later, unset (None), is no difference; a set one is
    phases = {"train": {"schedule": [{"from_games": 0, "lr": 1.0}]}}
    later = {"train": {"schedule": [{"from_games": 0, "lr": 1.0, "search_scale": None}]}}
    assert settings_changes(phases, later) == []
    later["train"]["schedule"][0]["search_scale"] = 2.0
    assert settings_changes(phases, later) == [f"train.schedule: {phases['train']['schedule']!r}"
                                               f" -> {later['train']['schedule']!r}"]
    with pytest.raises(RunError, match=r"resume_overrides=\[train.lr,train.seed\]"):
        check_same_settings(Envelope("g", settings=stored, step=1, path="c.pt"), current)
    with pytest.raises(RunError, match="c.pt: holds no settings"):
        check_same_settings(Envelope("g", settings={}, step=1, path="c.pt"), current)


def test_fresh_start_refuses_a_folder_holding_a_run(tmp_path):
    (tmp_path / "latest.pt").write_bytes(b"x")
    with pytest.raises(FileExistsError, match="latest.pt exists"):
        resume_or_start(tmp_path / "latest.pt", resume=False, load=None, settings={})
    with pytest.raises(FileNotFoundError, match="resume=true but .*none.pt"):
        resume_or_start(tmp_path / "none.pt", resume=True, load=None, settings={})


@pytest.mark.parametrize("checkpoint,kept", [(0, False), (1, True)])
def test_failed_fresh_start_removes_what_it_created(tmp_path, checkpoint, kept):
    folder, logs = tmp_path / "ck" / "r", tmp_path / "runs" / "r"
    with pytest.raises(RuntimeError), RunFolder(folder, logs, logs={"eval.jsonl": "step"}) as run:
        run.begin(None)
        run.log("eval.jsonl", {"step": 0, "x": float("nan")})
        run.checkpointed(checkpoint)
        raise RuntimeError("failed")
    assert folder.exists() == kept and logs.exists() == kept
    if kept:
        assert (folder / "eval.jsonl").read_text() == '{"step": 0, "x": null}\n'


def test_out_is_checked_before_any_work(tmp_path):
    proc = script("evaluate.py", "--wpg", "player=greed", "deals=100000", f"out={tmp_path}",
                  "progress=false")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert str(tmp_path) in proc.stderr and "directory" in proc.stderr
