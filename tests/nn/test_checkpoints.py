"""Checkpoints: crash-safe writes and strict loading.

Invariants covered:
- save/load round trip restores the model weights, the optimiser state and the step, and
  load_model rebuilds the network from the checkpoint alone;
- latest.pt is always loadable and follows the newest save;
- truncated, corrupt, non-torch, wrong-format and wrong-encoding-version files raise
  CheckpointError naming the file; a missing file too;
- a crash in the middle of writing leaves the previous latest.pt intact and no temp files;
- `keep` prunes old numbered snapshots but never latest.pt;
- numpy arrays and a numpy rng state inside `extra` come back equal, as numpy arrays;
- latest_checkpoint of an empty or missing directory is None.
"""

import os

import numpy as np
import pytest
import torch

from scrofazero.nn import checkpoint as checkpoints
from scrofazero.nn.checkpoint import (
    CheckpointError,
    latest_checkpoint,
    load_checkpoint,
    load_model,
    save_checkpoint,
)
from scrofazero.nn.encoding import ENCODING_VERSION, INPUT_SIZE
from scrofazero.nn.network import PolicyValueNet


def _tiny():
    torch.manual_seed(0)
    model = PolicyValueNet(hidden=(32, 16), num_blocks=1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return model, opt


def _train_a_bit(model, opt, steps=2):
    x = torch.randn(8, INPUT_SIZE)
    for _ in range(steps):
        logits, value = model(x)
        loss = logits.square().mean() + value.square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def _save(run_dir, model, opt, step, **kw):
    return save_checkpoint(
        run_dir, model=model, optimizer=opt, step=step, config={"lr": 1e-3}, **kw
    )


def test_round_trip_restores_model_optimizer_and_step(tmp_path):
    model, opt = _tiny()
    _train_a_bit(model, opt)
    path = _save(tmp_path, model, opt, 12, extra={"games": 64})
    assert path.name == "ckpt_0000012.pt"
    payload = load_checkpoint(tmp_path / "latest.pt")
    assert payload["step"] == 12 and payload["config"] == {"lr": 1e-3}
    assert payload["extra"] == {"games": 64}
    assert payload["encoding_version"] == ENCODING_VERSION
    rebuilt = load_model(tmp_path / "latest.pt")
    assert type(rebuilt) is PolicyValueNet and not rebuilt.training
    for (k, a), (_, b) in zip(model.state_dict().items(), rebuilt.state_dict().items()):
        assert torch.equal(a, b), k
    opt2 = torch.optim.Adam(rebuilt.parameters(), lr=1e-3)
    opt2.load_state_dict(payload["optimizer"])
    s1, s2 = opt.state_dict(), opt2.state_dict()
    assert s1["param_groups"] == s2["param_groups"]
    for i in s1["state"]:
        for k in s1["state"][i]:
            assert torch.equal(s1["state"][i][k], s2["state"][i][k])
    x = torch.randn(4, INPUT_SIZE)
    model.eval()
    with torch.no_grad():
        assert torch.equal(model(x)[0], rebuilt(x)[0])


def test_extra_with_numpy_arrays_round_trips(tmp_path):
    model, opt = _tiny()
    rng = np.random.default_rng(3)
    arrays = {
        "f": rng.normal(size=(5, 7)).astype(np.float32),
        "b": rng.random((5, 52)) < 0.5,
        "i8": np.arange(-3, 3, dtype=np.int8),
        "u64": np.array([2**63 + 5, 7], dtype=np.uint64),
        "view": np.arange(20, dtype=np.int64)[::3],  # not contiguous
    }
    extra = {"replay": [arrays, arrays], "rng_state": rng.bit_generator.state, "n": np.int64(4)}
    _save(tmp_path, model, opt, 1, extra=extra)
    back = load_checkpoint(tmp_path / "latest.pt")["extra"]
    assert back["n"] == 4 and back["rng_state"] == rng.bit_generator.state
    for got in back["replay"]:
        for k, a in arrays.items():
            assert isinstance(got[k], np.ndarray) and got[k].dtype == a.dtype
            assert np.array_equal(got[k], a), k


def test_latest_follows_newest_save(tmp_path):
    model, opt = _tiny()
    for step in (1, 2, 3):
        _save(tmp_path, model, opt, step)
        assert latest_checkpoint(tmp_path) == tmp_path / "latest.pt"
        assert load_checkpoint(latest_checkpoint(tmp_path))["step"] == step


@pytest.mark.parametrize("damage", ["truncate", "garbage", "text", "empty"])
def test_damaged_file_raises_checkpoint_error_naming_it(tmp_path, damage):
    model, opt = _tiny()
    path = _save(tmp_path, model, opt, 1)
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(bytes(range(256)) * 10)
    elif damage == "text":
        path.write_text("not a checkpoint\n")
    else:
        path.write_bytes(b"")
    with pytest.raises(CheckpointError, match=path.name):
        load_checkpoint(path)


def test_missing_file_raises_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="nope.pt"):
        load_checkpoint(tmp_path / "nope.pt")


def test_checkpoint_error_is_value_error():
    assert issubclass(CheckpointError, ValueError)


def test_wrong_format_or_encoding_version_is_refused(tmp_path):
    model, opt = _tiny()
    path = _save(tmp_path, model, opt, 1)
    good = torch.load(path, weights_only=True)
    cases = {
        "other.pt": {"weights": good["model"]},  # a plain torch file, not ours
        "fmt.pt": {**good, "format_version": 99},
        "enc.pt": {**good, "encoding_version": ENCODING_VERSION + 1},
    }
    for name, payload in cases.items():
        torch.save(payload, tmp_path / name)
        with pytest.raises(CheckpointError, match=name):
            load_checkpoint(tmp_path / name)
    with pytest.raises(CheckpointError, match="enc.pt"):
        load_model(tmp_path / "enc.pt")


@pytest.mark.parametrize("crash_on", [1, 2])  # 1: the numbered snapshot, 2: latest.pt
def test_crash_while_writing_keeps_previous_latest(tmp_path, monkeypatch, crash_on):
    model, opt = _tiny()
    _save(tmp_path, model, opt, 1)
    real_save = torch.save
    calls = []

    def half_then_crash(obj, f, *args, **kwargs):
        calls.append(1)
        real_save(obj, f, *args, **kwargs)
        if len(calls) == crash_on:
            f.seek(0)
            f.truncate(100)  # a torn file on disk, then the process "dies"
            raise KeyboardInterrupt("killed mid-write")

    monkeypatch.setattr(checkpoints.torch, "save", half_then_crash)
    _train_a_bit(model, opt)
    with pytest.raises(KeyboardInterrupt):
        _save(tmp_path, model, opt, 2)
    monkeypatch.undo()
    assert load_checkpoint(tmp_path / "latest.pt")["step"] == 1
    assert latest_checkpoint(tmp_path) == tmp_path / "latest.pt"
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert leftovers == []
    if crash_on == 1:
        assert not (tmp_path / "ckpt_0000002.pt").exists()
    else:  # the snapshot was complete before latest.pt was touched
        assert load_checkpoint(tmp_path / "ckpt_0000002.pt")["step"] == 2


def test_keep_prunes_old_snapshots_but_never_latest(tmp_path):
    model, opt = _tiny()
    for step in range(1, 8):
        _save(tmp_path, model, opt, step, keep=3)
    names = sorted(os.listdir(tmp_path))
    assert names == ["ckpt_0000005.pt", "ckpt_0000006.pt", "ckpt_0000007.pt", "latest.pt"]
    assert load_checkpoint(tmp_path / "latest.pt")["step"] == 7


def test_latest_checkpoint_empty_or_missing_dir(tmp_path):
    assert latest_checkpoint(tmp_path) is None
    assert latest_checkpoint(tmp_path / "does_not_exist") is None
    (tmp_path / "notes.txt").write_text("x")
    assert latest_checkpoint(tmp_path) is None
