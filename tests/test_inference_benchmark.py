"""benchmarks/inference.py end to end on one deal.

Invariants: every row plays the same deal with the same seed; the share of the headroom is
(row - uniform) / (oracle - uniform), 0 for uniform and 1 for the oracle; gains are the
differences of the WPGs; the JSON and the plot are written.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from scrofazero.nn.behaviour import BehaviourNet, save_behaviour
from scrofazero.nn.belief import BeliefNet, save_belief

ROOT = Path(__file__).resolve().parents[1]


def test_inference_benchmark_raw_rows(tmp_path):
    torch.manual_seed(0)
    beliefs = save_belief(tmp_path / "belief.pt", BeliefNet(16, 0))
    out = tmp_path / "inference.json"
    behaviour = save_behaviour(tmp_path / "behaviour.pt", BehaviourNet(16, 0))
    cmd = [sys.executable, str(ROOT / "benchmarks" / "inference.py"), "--deals", "1",
           "--only", "raw", "--rows", "belief,policy,oracle", "--beliefs", str(beliefs),
           "--behaviour", str(behaviour),
           "--out-dir", str(tmp_path / "runs"), "--json", str(out), "--png",
           str(tmp_path / "inference.png")]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {r["name"]: r for r in json.loads(out.read_text())["rows"]}
    assert list(rows) == ["uniform", "belief", "policy", "oracle"]
    assert rows["policy"]["vs_belief"] == pytest.approx(rows["policy"]["wpg"] -
                                                        rows["belief"]["wpg"])
    assert rows["uniform"]["gain_over_uniform"] == 0.0
    assert rows["oracle"]["gain_over_uniform"] == pytest.approx(
        rows["oracle"]["wpg"] - rows["uniform"]["wpg"])
    if rows["oracle"]["wpg"] != rows["uniform"]["wpg"]:
        assert rows["oracle"]["headroom_share"] == pytest.approx(1.0)
        assert rows["uniform"]["headroom_share"] == 0.0
    assert (tmp_path / "inference.png").stat().st_size > 1000
