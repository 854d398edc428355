"""Atomic file writes: write into a temporary file beside the target, then rename it into place,
so a crash at any moment leaves either the old file or the new one, never half of either.
Used by training checkpoints, Tiny Crew policy/trainer files and evaluate.py's JSON."""

from __future__ import annotations

import os
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
