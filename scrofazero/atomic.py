"""Atomic file writes: write into a temporary file beside the target, then rename it into place,
so a crash at any moment leaves either the old file or the new one, never half of either.
The one way the project writes files: training checkpoints and milestone copies, Tiny Crew
policy/trainer files, evaluate.py's and the benchmarks' JSON.

Also: check_writable (fail before a long job, not after it, when its output cannot be written)
and remove_stale_temps (the temporary files a killed write leaves behind).
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

# write_atomic's temporary files: tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp") names them
# "." + name + "." + 8 characters of tempfile's alphabet (a-z, 0-9, _) + ".tmp".
_TEMP_NAME = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp$")


def _temp_file(path: Path) -> tuple[int, str]:
    """mkstemp beside `path`, named so that remove_stale_temps recognises it."""
    return tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")


def _umask() -> int:
    """The process umask, read without changing it where the platform allows: setting it (the
    only portable way to read it) would briefly apply to files other threads create."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _naming_target(err: OSError, path: Path, tmp: str | None) -> OSError:
    """`err` (same class and errno) naming `path` instead of the temporary file (or nothing):
    the temp file's random name means nothing to whoever asked for `path`. A full disk says
    so in words."""
    if err.filename not in (None, tmp) or err.filename2 not in (None, tmp, str(path)):
        return err  # about some other file (a source being copied, say): keep it as it is
    if err.errno == errno.ENOSPC:
        return OSError(errno.ENOSPC, f"disk full ({err.strerror or 'no space left'}), the "
                       "previous file is kept", str(path))
    if err.errno is None:
        return type(err)(f"{path}: {err}")
    return OSError(err.errno, err.strerror, str(path))  # OSError(errno, ...) picks the subclass


def write_atomic(path: str | os.PathLike, write: Callable, mode: str = "wb",
                 fsync: bool = False) -> Path:
    """write(file) into a temporary file opened with `mode` next to `path`, optionally fsync it,
    then os.replace it onto `path`. On any error the temporary file is removed and the previous
    `path` is untouched; an OSError names `path`, not the temporary file. The new file gets the
    permissions a plain open() would give it (0o666 less the umask), not mkstemp's 0o600.
    Returns `path`."""
    path = Path(path)
    try:
        fd, tmp = _temp_file(path)
    except OSError as err:  # it names the temp file it tried to create
        raise _naming_target(err, path, err.filename) from None
    try:
        with os.fdopen(fd, mode) as f:
            write(f)
            if fsync:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(err, OSError):
            named = _naming_target(err, path, tmp)
            if named is not err:
                raise named from None
        raise
    return path


def strict_json(obj: Any) -> Any:
    """`obj` with every NaN or infinity (floats, numpy scalars and arrays, at any depth in
    dicts, lists and tuples) replaced by None, and numpy scalars and arrays by Python values:
    strict JSON has no NaN, and strict readers reject the file that holds one."""
    if isinstance(obj, dict):
        return {k: strict_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [strict_json(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return strict_json(obj.tolist())
    if isinstance(obj, np.generic):
        return strict_json(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_json_atomic(path: str | os.PathLike, payload: dict) -> Path:
    """`payload` as indented strict JSON at `path` (parent folders made), written atomically.
    NaN and infinities are written as null; numpy scalars and arrays as numbers and lists."""
    path = Path(path)
    # Serialise first, so that a payload JSON cannot hold fails before any file is touched;
    # allow_nan=False guards against a non-finite number that strict_json did not reach.
    text = json.dumps(strict_json(payload), indent=2, allow_nan=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, lambda f: f.write(text), mode="w")


def copy_atomic(source: str | os.PathLike, path: str | os.PathLike, fsync: bool = True) -> Path:
    """A copy of `source` at `path`, written atomically (fsynced by default)."""
    with open(source, "rb") as src:
        return write_atomic(path, lambda f: shutil.copyfileobj(src, f), fsync=fsync)


def check_writable(path: str | os.PathLike) -> Path:
    """`path` as a Path if write_atomic can write it; ValueError naming `path` if it is a
    directory, or its parent folder cannot be made or written. Makes the missing parent folders
    (as write_json_atomic would) and tests the parent with a probe file it removes again; never
    creates `path` itself. Meant for before a long job, so a bad output path fails at once."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"cannot write {path}: it is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        reason = err.strerror or str(err)
        raise ValueError(f"cannot write {path}: its folder {path.parent} cannot be made "
                         f"({reason})") from None
    try:
        fd, probe = _temp_file(path)  # the very call write_atomic will make
    except OSError as err:
        reason = err.strerror or str(err)
        raise ValueError(f"cannot write {path}: cannot create files in {path.parent} "
                         f"({reason})") from None
    os.close(fd)
    os.unlink(probe)
    return path


def remove_stale_temps(folder: str | os.PathLike) -> list[Path]:
    """Delete the temporary files that killed write_atomic calls left in `folder` (not in its
    subfolders) and return them, sorted; [] for a folder that does not exist. Only files named
    the way write_atomic names them (.NAME.XXXXXXXX.tmp) are touched. Call it only while no
    other process writes into `folder` (holding the folder's lock): a write in progress is
    indistinguishable from a killed one."""
    folder = Path(folder)
    if not folder.exists():
        return []
    removed = []
    for entry in sorted(folder.iterdir()):
        if not _TEMP_NAME.match(entry.name) or entry.is_symlink() or not entry.is_file():
            continue
        try:
            entry.unlink()
        except FileNotFoundError:
            continue  # removed meanwhile by someone else
        removed.append(entry)
    return removed
