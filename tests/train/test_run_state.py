"""What a training run guarantees across kills, bad settings and concurrent starts.

Invariants covered (train.py end to end on the smoke preset with a tiny evaluation):
- a kill inside an evaluation loses nothing and duplicates nothing: after resume=true,
  eval.jsonl, the checkpoint's history and tensorboard each hold every evaluation step once;
- a kill inside the step-0 evaluation leaves no checkpoint, and a plain start then succeeds;
- a kill after a step's milestone copy and before latest.pt moves redoes the step and the copy
  on resume;
- resume=true refuses settings that differ from the checkpoint's, naming each difference;
  resume_overrides allows them; run length may always change;
- a fresh start that fails before its first batch is done leaves no run folder behind;
- settings that make no sense are refused before any work, one line on stderr, exit status 2,
  and debug=true shows the traceback instead;
- a second train.py on a run folder in use is refused at once with the owner's pid;
- temp files that a killed write left in the run folder are removed when a run takes it.

The killed runs, the failed start and the second run on a folder in use are real processes;
what follows them (resumes, refusals, a plain start) runs train.py in this process
(composed.script), which reads only what the files hold, as a new process would.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from composed import script
from kill_run import eval_steps_in_tensorboard

from scrofazero.nn.checkpoint import load_checkpoint

ROOT = Path(__file__).resolve().parents[2]
FAULT = ROOT / "tests" / "helpers" / "train_with_fault.py"
TINY = ("experiment=smoke", "train.games_per_batch=2", "train.eval_deals=1",
        "train.eval_raw_deals=1", "train.eval_every=1", "train.checkpoint_every=1",
        "progress=false")


def base_args(tmp_path, run="r", *extra):
    return (*TINY, f"run={run}", f"checkpoint_dir={tmp_path / 'ckpt'}",
            f"log_dir={tmp_path / 'runs'}", *extra)


def train(*args, script=None, fault=(), timeout=600):
    cmd = [sys.executable, str(script or ROOT / "train.py"), *fault, *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_kill_during_evaluation_loses_and_duplicates_nothing(tmp_path):
    args = base_args(tmp_path, "r", "train.max_batches=3")
    killed = train(*args, script=FAULT, fault=("kill_in_eval", "2"))
    assert killed.returncode == -signal.SIGKILL
    run_dir = tmp_path / "ckpt" / "r"
    assert load_checkpoint(run_dir / "latest.pt")["step"] == 1  # step 2 never checkpointed
    done = script("train.py", *args, "resume=true")  # the resume in this process: files only
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [json.loads(x)["step"] for x in (run_dir / "eval.jsonl").read_text().splitlines()]
    history = [e["step"] for e in load_checkpoint(run_dir / "latest.pt")["extra"]["evals"]]
    assert lines == history == [0, 1, 2, 3]
    assert eval_steps_in_tensorboard(tmp_path / "runs" / "r") == [0, 1, 2, 3]


def test_kill_during_the_first_evaluation_then_a_plain_start(tmp_path):
    args = base_args(tmp_path, "r", "train.max_batches=1")
    killed = train(*args, script=FAULT, fault=("kill_in_eval", "0"))
    assert killed.returncode == -signal.SIGKILL
    assert not (tmp_path / "ckpt" / "r" / "latest.pt").exists()
    again = script("train.py", *args)
    assert again.returncode == 0, again.stderr[-3000:]
    lines = (tmp_path / "ckpt" / "r" / "eval.jsonl").read_text().splitlines()
    assert [json.loads(x)["step"] for x in lines] == [0, 1]


def test_kill_between_milestone_and_latest_redoes_both(tmp_path):
    args = base_args(tmp_path, "r", "train.max_batches=3", "train.eval_every=0",
                     "train.milestone_games=[4]")  # 2 games a batch: passed at step 2
    killed = train(*args, script=FAULT, fault=("kill_before_latest", "2"))
    assert killed.returncode == -signal.SIGKILL
    run_dir = tmp_path / "ckpt" / "r"
    assert load_checkpoint(run_dir / "latest.pt")["step"] == 1
    assert load_checkpoint(run_dir / "games_4.pt")["step"] == 2
    done = script("train.py", *args, "resume=true")
    assert done.returncode == 0, done.stderr[-3000:]
    # the copy was made again from the redone step's snapshot
    assert (run_dir / "games_4.pt").read_bytes() == (run_dir / "ckpt_0000002.pt").read_bytes()
    assert load_checkpoint(run_dir / "latest.pt")["step"] == 3


def test_resume_refuses_changed_settings_unless_allowed(tmp_path):
    args = base_args(tmp_path, "r", "train.max_batches=1")
    assert script("train.py", *args).returncode == 0
    changed = script("train.py", *args, "resume=true", "train.lr=0.5", "train.seed=99")
    assert changed.returncode == 2
    err = changed.stderr.strip()
    assert len(err.splitlines()) == 1 and "train.lr" in err and "train.seed" in err
    assert "0.5" in err and "resume_overrides" in err
    assert load_checkpoint(tmp_path / "ckpt" / "r" / "latest.pt")["step"] == 1  # untouched
    longer = script("train.py", *args[:-1], "train.max_batches=2", "resume=true",
                    "train.lr=0.5", "resume_overrides=[train.lr]")
    assert longer.returncode == 0, longer.stderr[-3000:]
    payload = load_checkpoint(tmp_path / "ckpt" / "r" / "latest.pt")
    assert payload["step"] == 2 and payload["config"]["train"]["lr"] == 0.5


def test_failed_start_leaves_nothing_behind(tmp_path):
    args = base_args(tmp_path, "r", "train.max_batches=2")
    failed = train(*args, script=FAULT, fault=("raise_in_selfplay", "0"))
    assert failed.returncode != 0 and "injected" in failed.stderr
    assert not (tmp_path / "ckpt" / "r").exists() and not (tmp_path / "runs" / "r").exists()
    assert script("train.py", *args).returncode == 0  # the corrected command: no resume=true


@pytest.mark.parametrize("setting,named", [
    ("train.checkpoint_every=0", "train.checkpoint_every"),
    ("train.keep_checkpoints=0", "train.keep_checkpoints"),
    ("train.eval_deals=0", "train.eval_deals"),
    ("search.c_uct=-5", "search.c_uct"),
    ("search.budget_per_legal=0", "budget"),
    ("run=", "run="),
])
def test_senseless_settings_are_refused_in_one_line(tmp_path, setting, named):
    # train.py in this process (composed.script): the refusal comes before any work
    proc = script("train.py", *base_args(tmp_path, "r", "train.max_batches=1"), setting)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(proc.stderr.strip().splitlines()) == 1 and named in proc.stderr
    assert not (tmp_path / "ckpt" / "r").exists()
    if setting == "train.checkpoint_every=0":  # the same path for every setting: once is enough
        # a real process once, for what only the command line shows: status 2 and one line
        cli = train(*base_args(tmp_path, "r", "train.max_batches=1"), setting)
        assert (cli.returncode, cli.stderr) == (2, proc.stderr)
        debug = script("train.py", *base_args(tmp_path, "r", "train.max_batches=1"), setting,
                       "debug=true")
        assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_second_run_on_a_folder_in_use_is_refused(tmp_path):
    forever = base_args(tmp_path, "r", "train.max_batches=100000", "train.eval_every=0")
    first = subprocess.Popen([sys.executable, str(ROOT / "train.py"), *forever], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    run_dir = tmp_path / "ckpt" / "r"
    try:
        deadline = time.time() + 120
        while not (run_dir / "latest.pt").exists() and time.time() < deadline:
            time.sleep(0.2)
        second = train(*forever, "resume=true", timeout=120)
        assert second.returncode == 2
        assert f"process {first.pid}" in second.stderr and "in use" in second.stderr
    finally:
        first.kill()  # SIGKILL: the owner dies holding the folder
        first.wait()
    stale = run_dir / ".latest.pt.k1ll3d00.tmp"  # what a write cut short by a kill leaves
    stale.write_bytes(b"half a checkpoint")
    resumed = script("train.py", *base_args(tmp_path, "r", "train.max_batches=1",
                                            "train.eval_every=0"), "resume=true")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"process {first.pid}" in resumed.stdout  # the takeover is reported
    assert not stale.exists()


def test_one_line_errors_of_evaluate(tmp_path):
    proc = script("evaluate.py", "--wpg", "player=raw", f"checkpoint={tmp_path / 'missing.pt'}",
                  "deals=1", "progress=false")
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "missing.pt" in proc.stderr
    assert os.environ.get("HYDRA_FULL_ERROR") != "1"  # the suite must not run with it set
