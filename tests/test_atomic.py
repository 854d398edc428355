"""scrofazero/atomic.py. Invariants: a successful write replaces the file; a write that fails
midway leaves the previous file byte for byte and no temporary file behind."""

import pytest

from scrofazero.atomic import write_atomic


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
