"""scrofazero/atomic.py. Invariants: a successful write replaces the file; a write that fails
midway leaves the previous file byte for byte and no temporary file behind; a failed write's
error names the target, not the temporary file; the new file gets the mode a plain open() gives
(0o666 less the umask); JSON is strict (NaN and infinities become null); check_writable rejects
a directory or an unwritable parent without creating the file; remove_stale_temps deletes the
temporary files of interrupted writes and nothing else."""

import json
import math
import os
import stat
import tempfile

import numpy as np
import pytest

from scrofazero.atomic import (
    check_writable,
    remove_stale_temps,
    write_atomic,
    write_json_atomic,
)

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def test_replace_and_failure(tmp_path):
    path = tmp_path / "f.txt"
    write_atomic(path, lambda f: f.write("old"), mode="w")
    assert path.read_text() == "old"

    def half_then_crash(f):
        f.write(b"new but not finished")
        raise RuntimeError("crash")

    with pytest.raises(RuntimeError, match="crash"):
        write_atomic(path, half_then_crash, fsync=True)
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]
    assert write_atomic(path, lambda f: f.write(b"new"), fsync=True) == path
    assert path.read_bytes() == b"new"


def test_errors_name_the_target_not_the_temp_file(tmp_path):
    missing = tmp_path / "no" / "such" / "f.json"
    with pytest.raises(FileNotFoundError) as info:
        write_atomic(missing, lambda f: f.write(b"x"))
    assert str(missing) in str(info.value) and ".tmp" not in str(info.value)
    folder = tmp_path / "a_folder"
    folder.mkdir()
    with pytest.raises(IsADirectoryError) as info:  # the rename onto a directory fails
        write_atomic(folder, lambda f: f.write(b"x"))
    assert str(folder) in str(info.value) and ".tmp" not in str(info.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_folder"]  # no temp file left

    def disk_full(f):
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left") as info:
        write_atomic(tmp_path / "g.bin", disk_full)
    assert str(tmp_path / "g.bin") in str(info.value)


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_new_file_gets_the_mode_of_a_plain_open(tmp_path, umask):
    old = os.umask(umask)
    try:
        plain = tmp_path / "plain.txt"
        with open(plain, "w") as f:
            f.write("x")
        atomic = write_atomic(tmp_path / "atomic.txt", lambda f: f.write("x"), mode="w")
        as_json = write_json_atomic(tmp_path / "r.json", {"a": 1})
    finally:
        os.umask(old)
    expected = 0o666 & ~umask
    assert stat.S_IMODE(plain.stat().st_mode) == expected
    assert stat.S_IMODE(atomic.stat().st_mode) == expected
    assert stat.S_IMODE(as_json.stat().st_mode) == expected


def test_json_is_strict(tmp_path):
    payload = {
        "nan": math.nan, "inf": math.inf, "ninf": -math.inf, "ok": 1.5, "int": 3, "none": None,
        "nested": {"list": [1.0, math.nan, [math.inf, 2]], "tuple": (math.nan, "s")},
        "np": [np.float64("nan"), np.float32(0.5), np.int64(7), np.bool_(True),
               np.float32("inf")],
        "array": np.array([1.0, np.nan]),
    }
    path = write_json_atomic(tmp_path / "r.json", payload)
    text = path.read_text()
    assert "NaN" not in text and "Infinity" not in text

    def strict(token):
        raise ValueError(f"non-strict JSON token {token}")

    loaded = json.loads(text, parse_constant=strict)  # what a strict reader accepts
    assert loaded == {
        "nan": None, "inf": None, "ninf": None, "ok": 1.5, "int": 3, "none": None,
        "nested": {"list": [1.0, None, [None, 2]], "tuple": [None, "s"]},
        "np": [None, 0.5, 7, True, None],
        "array": [1.0, None],
    }
    assert payload["nan"] is not None and math.isnan(payload["nan"])  # the input is untouched


def test_json_serialisation_error_leaves_the_old_file(tmp_path):
    path = write_json_atomic(tmp_path / "r.json", {"a": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"a": object()})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]


def test_check_writable_accepts_a_writable_path_without_creating_it(tmp_path):
    target = tmp_path / "new" / "deeper" / "out.json"
    assert check_writable(target) == target
    assert not target.exists() and target.parent.is_dir()
    assert list(target.parent.iterdir()) == []  # the probe file is gone
    existing = tmp_path / "old.json"
    existing.write_text("keep")
    assert check_writable(str(existing)) == existing
    assert existing.read_text() == "keep"


def test_check_writable_rejects_a_directory(tmp_path):
    with pytest.raises(ValueError, match=f"{tmp_path}.*is a directory"):
        check_writable(tmp_path)


def test_check_writable_rejects_a_parent_that_cannot_be_made(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    target = blocker / "sub" / "out.json"
    with pytest.raises(ValueError, match=str(target)):
        check_writable(target)
    assert blocker.read_text() == "x"


@pytest.mark.skipif(IS_ROOT or os.name != "posix", reason="root writes into read-only folders")
def test_check_writable_rejects_a_read_only_parent(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(ValueError, match=str(folder / "out.json")):
            check_writable(folder / "out.json")
    finally:
        folder.chmod(0o755)
    assert list(folder.iterdir()) == []


def test_remove_stale_temps_removes_only_interrupted_writes(tmp_path):
    # A killed write leaves its temp file behind. Catch write_atomic's own temp name mid-write
    # and put it back after the write's clean-up, as if the process had died there.
    seen = []

    def killed(f):
        seen.extend(p for p in tmp_path.iterdir())
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        write_atomic(tmp_path / "result.json", killed)
    assert len(seen) == 1
    seen[0].write_bytes(b"half")
    stale = [seen[0]]
    # and those of other targets, named the way write_atomic names them
    for name in ("latest.pt", "metrics.json", "ckpt_0000100.pt"):
        fd, tmp = tempfile.mkstemp(dir=tmp_path, prefix=f".{name}.", suffix=".tmp")
        os.close(fd)
        stale.append(tmp_path / os.path.basename(tmp))
    keep = ["latest.pt", "notes.tmp", ".hidden", ".gitignore", "x.tmp.txt", ".a.tmp",
            ".latest.pt.too-long-to-be-mkstemp.tmp"]
    for name in keep:
        (tmp_path / name).write_text("keep")
    (tmp_path / ".dir.abcdefgh.tmp").mkdir()  # a folder with the pattern is not a temp file
    keep.append(".dir.abcdefgh.tmp")
    removed = remove_stale_temps(tmp_path)
    assert sorted(removed) == sorted(stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(keep)
    assert remove_stale_temps(tmp_path) == []
    assert remove_stale_temps(tmp_path / "missing") == []
