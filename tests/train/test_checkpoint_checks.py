"""What is written before stays loadable, and checkpoints that cannot be used are refused by
name before any work, so that a run never spends hours before failing on its input.

Invariants: the shipped networks load (load_model, load_scorer) and are refused as a training
state by name; a copy of the committed long-run state (models/long_run/state.pt) loads and
restores exactly its weights and step; a crafted checkpoint with wrong-typed replay or evals,
`optimizer=None`, no settings, or non-finite weights is refused in one line naming the file
(exit 2); non-finite weights are refused by load_model, so by evaluate.py too; a full disk while
checkpointing ends in one line saying "disk full", the previous checkpoint kept; a crafted
pickle in a Gongzhu or Fish `.pt` file is refused without running it; resume_overrides may name
a group, and the always-changeable keys need no override."""

import builtins
import errno
import shutil
from pathlib import Path

import pytest
import torch
from composed import config, refused, settings_of
from omegaconf import OmegaConf

import scrofazero.nn.checkpoint as checkpoints
from scrofazero import entry
from scrofazero.fish.players.scorer import load_scorer, read_payload
from scrofazero.nn.checkpoint import CheckpointError, load_checkpoint, load_model
from scrofazero.train.loop import run_training
from scrofazero.train.state import load_envelope

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ("experiment=smoke", "train.games_per_batch=2", "train.eval_every=0",
         "train.checkpoint_every=1", "train.threads=1")


def _args(tmp_path, run="r", batches=1, *extra):
    return (*SMOKE, f"run={run}", f"checkpoint_dir={tmp_path / 'ckpt'}",
            f"log_dir={tmp_path / 'runs'}", f"train.max_batches={batches}", *extra)


def _one_line(err):
    assert len(err.strip().splitlines()) == 1, err
    return err


def test_shipped_networks_load_and_are_no_training_state(tmp_path):
    for name in ("scrofazero.pt", "scrofazero_small.pt"):
        assert load_model(ROOT / "models" / name).config()["hidden"]
        with pytest.raises(CheckpointError, match=f"{name}: a model-only file"):
            load_envelope(ROOT / "models" / name)
    assert load_scorer(ROOT / "models" / "fish_learned.pt") is not None


def test_a_copy_of_the_long_run_state_restores_its_weights(tmp_path):
    state = tmp_path / "state.pt"
    shutil.copy(ROOT / "models" / "long_run" / "state.pt", state)  # never the live file itself
    payload = load_checkpoint(state)
    stored = payload.get("run", {}).get("settings") or payload["config"]
    stored["game"].pop("leader", None)  # now a Tiny Crew setting; Gongzhu never read it
    cfg = OmegaConf.merge(config("train"), stored)
    for key, value in {"run": "continued", "checkpoint_dir": str(tmp_path / "ckpt"),
                       "log_dir": str(tmp_path / "runs"), "resume_from": str(state),
                       "train.max_batches": payload["step"], "train.state_file": None,
                       "train.device": "cpu", "progress": False, "resume": False}.items():
        OmegaConf.update(cfg, key, value)
    run = run_training(settings_of(cfg))  # no batch to do: it restores, checks, and stops
    assert run.step == payload["step"] and run.games == payload["extra"]["games"]
    for key, value in payload["model"].items():
        now = run.model.state_dict()[key]
        assert torch.equal(now, value.to(now.dtype)), key  # float16 in the file: exact in float32


def test_model_only_file_as_latest_is_named(tmp_path, capsys, monkeypatch):
    run_dir = tmp_path / "ckpt" / "r"
    run_dir.mkdir(parents=True)
    shutil.copy(ROOT / "models" / "scrofazero_small.pt", run_dir / "latest.pt")
    err = refused(entry.train, config("train", *_args(tmp_path), "resume=true"), capsys,
                  monkeypatch)
    assert "latest.pt: a model-only file" in _one_line(err)


@pytest.fixture
def trained(tmp_path):
    run_training(settings_of(config("train", *_args(tmp_path))))
    return tmp_path / "ckpt" / "r" / "latest.pt"


def _craft(path, change):
    payload = torch.load(path, weights_only=True)
    change(payload)
    torch.save(payload, path)


@pytest.mark.parametrize("change,named", [
    (lambda p: p["extra"].update(replay="three batches"), "replay"),
    (lambda p: p["extra"].update(evals={"step": 0}), "evals"),
    (lambda p: p.update(optimizer=None), "network only"),
    (lambda p: p.update(config={}) or p.pop("run"), "holds no settings"),
    (lambda p: p["model"][next(iter(p["model"]))].fill_(float("nan")), "non-finite weights"),
])
def test_crafted_training_states_are_refused_by_name(trained, tmp_path, capsys, monkeypatch,
                                                     change, named):
    _craft(trained, change)
    before = trained.read_bytes()
    err = refused(entry.train, config("train", *_args(tmp_path, "r", 2), "resume=true"), capsys,
                  monkeypatch)
    assert "latest.pt" in _one_line(err) and named in err
    assert trained.read_bytes() == before


def test_non_finite_weights_are_refused_by_load_model_and_evaluate(trained, tmp_path, capsys,
                                                                   monkeypatch):
    _craft(trained, lambda p: [w.fill_(float("nan")) for w in p["model"].values()
                               if w.is_floating_point()])
    with pytest.raises(CheckpointError, match="latest.pt: non-finite weights"):
        load_model(trained)
    err = refused(entry.evaluate, config("evaluate", "mode=wpg", "player=raw",
                                         f"checkpoint={trained}", "deals=1", "workers=1"),
                  capsys, monkeypatch)
    assert "non-finite weights" in _one_line(err)


def test_disk_full_while_checkpointing_keeps_the_previous_one(trained, tmp_path, capsys,
                                                             monkeypatch):
    write = checkpoints.write_atomic

    def full_disk(path, data, **kwargs):
        def fail(f):
            raise OSError(errno.ENOSPC, "No space left on device")
        return write(path, fail, **kwargs)

    monkeypatch.setattr(checkpoints, "write_atomic", full_disk)
    err = refused(entry.train, config("train", *_args(tmp_path, "r", 2), "resume=true"), capsys,
                  monkeypatch)
    assert "disk full" in _one_line(err) and "ckpt_0000002.pt" in err
    assert load_checkpoint(trained)["step"] == 1
    assert not list(trained.parent.glob(".*.tmp"))


class _Payload:
    """Unpickling this creates `marker`: proof that loading ran code from the file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return builtins.open, (self.marker, "w")


def test_crafted_pickles_in_pt_files_are_refused_without_running(tmp_path):
    marker = tmp_path / "code_ran"
    gongzhu, fish = tmp_path / "gongzhu.pt", tmp_path / "fish.pt"
    torch.save({"format": checkpoints.FORMAT, "format_version": 1, "x": _Payload(marker)},
               gongzhu)
    torch.save({"format": "scrofazero fish scorer", "model": _Payload(marker)}, fish)
    with pytest.raises(CheckpointError, match="gongzhu.pt"):
        load_checkpoint(gongzhu)
    with pytest.raises(ValueError, match="fish.pt"):
        read_payload(fish)
    assert not marker.exists()
    torch.load(fish, weights_only=False)  # the payload is live: a trusting loader runs it
    assert marker.exists()


def test_resume_overrides_name_a_group_and_some_keys_always_change(trained, tmp_path):
    run_training(settings_of(config("train", *_args(tmp_path, "r", 2, "train.lr=0.5", "resume=true",
                                        "resume_overrides=[train]"))))
    assert load_checkpoint(trained)["config"]["train"]["lr"] == 0.5
    run_training(settings_of(config("train", *_args(tmp_path, "r", 3, "train.lr=0.5", "resume=true",
                                        "resume_overrides=[train.lr]", "train.eval_every=5",
                                        "train.keep_checkpoints=2", "train.milestone_games=[99]",
                                        "progress=true"))))
    assert load_checkpoint(trained)["step"] == 3
