"""Kill a training command with SIGKILL at a random moment after its first checkpoint, and
compare what the killed-and-resumed run left with an uninterrupted one's, for the exact-resume
tests of the three trainers."""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def kill_after_checkpoint(args: list[str], checkpoint: Path, max_delay: float,
                          timeout: float = 300) -> float:
    """Start `python train.py *args` in its own process group, wait until `checkpoint` exists,
    sleep a random delay in [0, max_delay] s, then SIGKILL the group; returns the delay. The
    run must still be going then (its length is set so it cannot end that soon)."""
    delay = random.uniform(0.0, max_delay)
    proc = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *args, "progress=false"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        deadline = time.time() + timeout
        while not checkpoint.exists():
            if proc.poll() is not None:
                raise AssertionError(f"the run ended before its first checkpoint: "
                                     f"{proc.stderr.read()[-3000:]}")
            if time.time() > deadline:
                raise AssertionError(f"no {checkpoint} after {timeout} s")
            time.sleep(0.05)
        time.sleep(delay)
        assert proc.poll() is None, f"the run ended within {delay:.2f} s of its checkpoint"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL, proc.returncode
    return delay


def jsonl_records(path: Path, timing: tuple[str, ...]) -> list[dict]:
    """The records of jsonl file `path` less their `timing` keys (wall-clock measurements, the
    only thing a resumed run may not repeat exactly)."""
    import json

    return [{k: v for k, v in json.loads(line).items() if k not in timing}
            for line in path.read_text().splitlines()]


def assert_same_end(a: Path, b: Path, logs: tuple[str, ...], timing: tuple[str, ...]) -> None:
    """Run folders `a` and `b` ended alike: equal network weights in their latest.pt and equal
    jsonl `logs` (less their `timing` keys)."""
    import torch

    wa = torch.load(a / "latest.pt", weights_only=True)["model"]
    wb = torch.load(b / "latest.pt", weights_only=True)["model"]
    assert wa.keys() == wb.keys() and all(torch.equal(wa[k], wb[k]) for k in wa)
    for log in logs:
        assert jsonl_records(a / log, timing) == jsonl_records(b / log, timing), log


class GlobalRandom:
    """Context manager giving back python's, numpy's and torch's global random states (an
    in-process resume sets them to the checkpoint's)."""

    def __enter__(self):
        import numpy as np
        import torch

        self.states = (random.getstate(), np.random.get_state(), torch.get_rng_state())
        return self

    def __exit__(self, *exc):
        import numpy as np
        import torch

        random.setstate(self.states[0])
        np.random.set_state(self.states[1])
        torch.set_rng_state(self.states[2])


def eval_steps_in_tensorboard(log_dir: Path) -> list[int]:
    """The steps of every evaluation the run in `log_dir` logged to tensorboard (its eval/wpg_raw
    scalar), sorted: a resumed run must log each one exactly once, as eval.jsonl does."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    # One reader over the folder, as tensorboard reads it: a resumed run's file starts with a
    # purge at its first step, dropping what the killed run logged after its last checkpoint
    # (read file by file, an evaluation logged just before the kill would count twice).
    acc = EventAccumulator(str(log_dir))
    acc.Reload()
    if "eval/wpg_raw" not in acc.Tags()["scalars"]:
        return []
    return sorted(e.step for e in acc.Scalars("eval/wpg_raw"))
