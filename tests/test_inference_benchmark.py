"""benchmarks/inference.py: its rows and its table, and (marked slow: some 25 s of evaluate.py
processes) the script end to end on one deal.

Invariants: every row is a setting evaluate.py takes, with the networks the script passes; the
share of the headroom is (row - uniform) / (oracle - uniform), 0 for uniform and 1 for the
oracle; gains are the differences of the WPGs, paired per deal; end to end, every row plays the
same deal with the same seed and the JSON and the plot are written.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from composed import config, settings_of

from scrofazero.nn.behaviour import BehaviourNet, save_behaviour
from scrofazero.nn.belief import BeliefNet, save_belief

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from inference import ROWS, table  # noqa: E402


def test_every_row_is_a_setting_evaluate_takes():
    networks = [f"{p}.sampling.{k}=x.pt" for p in ("scrofazero", "raw")
                for k in ("beliefs", "behaviour")]  # as run_row passes them
    for family, rows in ROWS.items():
        for name, overrides in rows.items():
            cfg = settings_of(config("evaluate", "mode=wpg", *networks, *overrides))
            player = cfg.raw if family == "raw" else cfg.scrofazero
            assert (cfg.player == "raw") == (family == "raw"), (family, name)
            method = next(o for o in overrides if ".sampling.method=" in o).split("=")[1]
            assert player.sampling.method == method, (family, name)


def test_the_table_pairs_each_row_with_uniform_and_the_ceilings():
    def result(values):
        return {"values": values, "wpg": sum(values) / len(values), "stderr": 1.0,
                "seconds_per_game": 2.0}

    results = {"uniform": result([0.0, 10.0]), "belief": result([5.0, 11.0]),
               "stratified_iec": result([2.0, 10.0]), "oracle": result([20.0, 30.0])}
    rows = {r["name"]: r for r in table("full", results)}
    assert rows["uniform"]["gain_over_uniform"] == 0.0 and rows["uniform"]["headroom_share"] == 0
    assert rows["oracle"]["headroom_share"] == pytest.approx(1.0)
    assert rows["belief"]["gain_over_uniform"] == pytest.approx(3.0)
    assert rows["belief"]["headroom_share"] == pytest.approx(3.0 / 20.0)
    assert rows["belief"]["vs_default"] == pytest.approx(2.0)  # stratified_iec: the old default
    assert rows["oracle"]["vs_belief"] == pytest.approx(17.0)
    assert rows["belief"]["posterior_headroom_share"] is None  # no posterior row


@pytest.mark.slow
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
