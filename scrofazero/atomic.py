"""Atomic file writes: write into a temporary file beside the target, then rename it into place,
so a crash at any moment leaves either the old file or the new one, never half of either.
The one way the project writes files: training checkpoints and milestone copies, Tiny Crew
policy/trainer files, evaluate.py's and the benchmarks' JSON."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable


def write_atomic(path: str | os.PathLike, write: Callable, mode: str = "wb",
                 fsync: bool = False) -> Path:
    """write(file) into a temporary file opened with `mode` next to `path`, optionally fsync it,
    then os.replace it onto `path`. On any error the temporary file is removed and the previous
    `path` is untouched. Returns `path`."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def write_json_atomic(path: str | os.PathLike, payload: dict) -> Path:
    """`payload` as indented JSON at `path` (parent folders made), written atomically."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def dump(f) -> None:
        json.dump(payload, f, indent=2)
        f.write("\n")

    return write_atomic(path, dump, mode="w")


def copy_atomic(source: str | os.PathLike, path: str | os.PathLike, fsync: bool = True) -> Path:
    """A copy of `source` at `path`, written atomically (fsynced by default)."""
    with open(source, "rb") as src:
        return write_atomic(path, lambda f: shutil.copyfileobj(src, f), fsync=fsync)
