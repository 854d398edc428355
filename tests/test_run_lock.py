"""The run folder lock (scrofazero/run_lock.py).

Invariants: while one process holds a folder, another's acquire raises RunLocked naming the
holder's pid and changes nothing; a clean release leaves no pid behind (no stale report next
time); a holder killed with SIGKILL frees the folder at once and its pid is reported as stale by
the next owner.
"""

import signal
import subprocess
import sys
import time

import pytest

from scrofazero.run_lock import RunLock, RunLocked

HOLD = """
import sys, time
from scrofazero.run_lock import RunLock
lock = RunLock(sys.argv[1]).acquire()
print("held", flush=True)
time.sleep(600)
"""


def hold(folder):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_owner_is_refused_with_the_pid(tmp_path):
    proc = hold(tmp_path / "run")
    try:
        with pytest.raises(RunLocked, match=f"process {proc.pid}"):
            RunLock(tmp_path / "run").acquire()
        assert (tmp_path / "run" / "run.lock").read_text().split() == [str(proc.pid)]
    finally:
        proc.kill()
        proc.wait()


def test_killed_owner_frees_the_folder_and_is_reported(tmp_path):
    proc = hold(tmp_path / "run")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with RunLock(tmp_path / "run") as lock:
        assert lock.stale == proc.pid and lock.held
    with RunLock(tmp_path / "run") as again:  # released cleanly: nothing stale any more
        assert again.stale is None


def test_released_lock_can_be_taken_in_the_same_process(tmp_path):
    first = RunLock(tmp_path / "run").acquire()
    first.release()
    started = time.perf_counter()
    with RunLock(tmp_path / "run") as second:
        assert second.held
    assert time.perf_counter() - started < 1.0
