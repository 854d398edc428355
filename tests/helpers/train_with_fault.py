"""Run train.py with a fault injected, for the crash-safety tests (tests/train/test_run_state.py).

    python tests/helpers/train_with_fault.py FAULT STEP train.py-overrides...

FAULT is `kill_in_eval` (SIGKILL the process inside the evaluation of step STEP, before that
step's checkpoint: what a kill -9 or a power cut at that moment does), `kill_before_latest`
(SIGKILL once step STEP's snapshot and milestone copies are written, before latest.pt moves) or
`raise_in_selfplay` (a RuntimeError inside self-play of the batch that follows step STEP).
"""

import os
import runpy
import signal
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import scrofazero.train.loop as loop  # noqa: E402
import scrofazero.train.state as state  # noqa: E402

fault, at = sys.argv[1], int(sys.argv[2])
sys.argv = [str(ROOT / "train.py"), *sys.argv[3:]]

if fault == "kill_in_eval":
    evaluate = loop.evaluate

    def evaluate_killed(run, train, deals):
        if run.step == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return evaluate(run, train, deals)

    loop.evaluate = evaluate_killed
elif fault == "kill_before_latest":
    keep = state.keep_milestones

    def keep_milestones(run, path, names):
        keep(run, path, names)
        if run.step == at:
            os.kill(os.getpid(), signal.SIGKILL)

    state.keep_milestones = keep_milestones
elif fault == "raise_in_selfplay":
    play = loop.play_batch
    calls = [0]

    def play_batch(*args, **kwargs):
        if calls[0] == at:
            raise RuntimeError("injected self-play failure")
        calls[0] += 1
        return play(*args, **kwargs)

    loop.play_batch = play_batch
else:
    raise SystemExit(f"unknown fault {fault!r}")

runpy.run_path(sys.argv[0], run_name="__main__")
