"""One process per run folder: an exclusive lock on `run.lock`, which holds the owner's pid.

The lock is the kernel's (fcntl.flock, exclusive, non-blocking) on a file inside the run folder,
so taking it is atomic: of two `python train.py run=r` started together exactly one gets it and
the other is refused at once with the owner's pid. The kernel drops the lock when its process
ends, however it ends, so a kill -9 never leaves the folder locked; the pid the dead process left
in the file is reported when the next run takes the folder over. A clean release empties the
file (it is never deleted: deleting a lock file another process has open would let two
processes lock two different files).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

LOCK_NAME = "run.lock"


class RunLocked(RuntimeError):
    """The run folder is owned by another live process (`owner`: its pid, when it wrote one)."""

    def __init__(self, message: str, owner: int | None = None):
        super().__init__(message)
        self.owner = owner


def _owner(text: str) -> int | None:
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return None


class RunLock:
    """`with RunLock(folder) as lock:` owns `folder` (created if missing) until the block ends.

    After acquiring, `stale` is the pid of a previous owner that died holding the folder (its
    pid was still in the file), else None."""

    def __init__(self, folder, name: str = LOCK_NAME):
        self.folder = Path(folder)
        self.path = self.folder / name
        self.stale: int | None = None
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _owner(os.pread(fd, 64, 0).decode(errors="replace"))
            os.close(fd)
            who = f"process {owner}" if owner is not None else "another process"
            raise RunLocked(f"{self.folder} is in use by {who} (lock {self.path}): wait for it "
                            "to finish, stop it, or choose another run=NAME", owner) from None
        previous = _owner(os.pread(fd, 64, 0).decode(errors="replace"))
        self.stale = previous if previous not in (None, os.getpid()) else None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)  # a clean exit leaves no pid to report as stale
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
