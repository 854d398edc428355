"""benchmarks/gpu.sh runs end to end on a CPU in its tiny setting (TINY=1).

Invariants: it exits 0 and writes the learner figures (one row, positive rates, a learner share
in [0, 1]), the learning JSON and PNG for its game counts, and the inference
work's rates. A long run (a minute of two cores' time): behind the `slow` marker, run before
every device session (docs/gpu.md).
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_gpu_script_tiny(tmp_path):
    env = {**os.environ, "TINY": "1", "PYTHON": sys.executable}
    proc = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu.sh"), str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    learner = json.loads((tmp_path / "learner.json").read_text())
    (row,) = learner["rows"]
    assert row["shape"] == "tiny" and row["selfplay_games_per_s"] > 0
    assert row["learner_samples_per_s"] > 0 and 0 <= row["learner_share"] <= 1
    learning = json.loads((tmp_path / "learning.json").read_text())
    assert learning["games"] == [0, 8] and learning["preset"] == "smoke"
    assert (tmp_path / "learning.png").stat().st_size > 1000
    inference = json.loads((tmp_path / "gpu_inference.json").read_text())
    assert inference["generation"]["games"] == 4 and inference["generation"]["games_per_s"] > 0
    assert inference["behaviour_fit"]["steps"] >= 1
    assert inference["behaviour_fit"]["samples_per_s"] > 0
