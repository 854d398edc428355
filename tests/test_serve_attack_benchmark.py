"""benchmarks/serve.py --attack (benchmarks/serve_attack.py) end to end, in miniature.

Invariants: a run starts play.py with its production limits, plays honest tables from one
address quiet and then beside a flood from others, and writes (and prints) each phase's figures,
their ratios, the flood's answers by status and how long the server took to be idle after it.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_the_live_replays_attack_runs_and_reports(tmp_path):
    out = tmp_path / "attack.json"
    proc = subprocess.run([sys.executable, "benchmarks/serve.py", "--attack", "live-replays",
                           "--json", str(out), "--attackers", "2", "--connections", "1",
                           "--honest-tables", "1", "--think-s", "0.05", "--warmup-s", "1",
                           "--quiet-s", "4", "--attack-s", "4", "--settle-max-s", "20"],
                          check=False, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert json.loads(proc.stdout) == result
    assert result["attack"] == "live-replays" and result["attackers"] == 2
    assert result["target"]["games"] > 0 and result["target"]["status"] != "finished"
    for name in ("quiet", "attack_phase"):
        phase = result[name]
        assert phase["honest_moves"] > 0 and phase["cpu_cores"] is not None, phase
        assert phase["move_latency_ms"]["p50"] <= phase["move_latency_ms"]["p99"]
    assert set(result["attack_over_quiet"]) >= {"honest_moves_per_s", "move_latency_p99",
                                                 "ping_p99", "scrofazero_wait_mean"}
    assert result["flood_answers"].get("200", 0) > 0
    assert result["after"]["idle_after_s"] is not None
    assert "honest moves/s" in proc.stderr and "after the flood" in proc.stderr
