"""subprocess.run for commands that may hang with worker processes of their own: on timeout it
kills the command's whole process group, so that spawned workers do not outlive a failed test."""

import os
import signal
import subprocess


def run_bounded(cmd: list[str], timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """Run `cmd` in a new session, capturing text output; TimeoutExpired after `timeout` seconds,
    with the command and every process it started killed."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kwargs)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
