"""benchmarks/learning.py end to end on the smoke preset (a few games, one deal).

Invariants: it trains, keeps a copy of the network at each requested game count, measures each
copy's raw WPG, writes the JSON with one entry per count (0 included) and the PNG plot; run
again it resumes the finished run and reuses the measurements instead of training anew.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_learning_benchmark_tiny(tmp_path):
    out, png = tmp_path / "learning.json", tmp_path / "learning.png"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "learning.py"), "--run", "lb",
           "--preset", "smoke", "--games", "4,8", "--games-per-batch", "4", "--deals", "1",
           "--workers", "1", "--checkpoint-dir", str(tmp_path / "ckpt"),
           "--log-dir", str(tmp_path / "runs"), "--json", str(out), "--png", str(png),
           "train.eval_every=0"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["games"] == [0, 4, 8] and result["preset"] == "smoke"
    assert len(result["wpg"]) == len(result["stderr"]) == len(result["minutes"]) == 3
    assert result["minutes"][0] == 0 and result["minutes"][2] > result["minutes"][1] > 0
    assert all(abs(w) <= 1400 for w in result["wpg"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    measured = sorted((tmp_path / "ckpt" / "lb").glob("wpg_raw_games_*.json"))
    stamps = [p.stat().st_mtime_ns for p in measured]
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(out.read_text())["wpg"] == result["wpg"]
    assert [p.stat().st_mtime_ns for p in measured] == stamps  # reused, not measured again


def test_lineage_continues_the_parents_games_and_minutes(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import learning

    parent = {"run": "p", "deals": 256, "games": [0, 100, 200], "minutes": [0.0, 1.0, 2.5],
              "wpg": [-200.0, -50.0, 5.0], "stderr": [9.0, 9.0, 9.0]}
    child = {"run": "c", "deals": 1024, "games": [0, 50], "minutes": [0.0, 4.0],
             "wpg": [4.0, 20.0], "stderr": [4.6, 4.6], "overrides": ["train.init_from=x"]}
    out = learning.with_lineage(child, [parent])
    assert out["games_total"] == [200, 250] and out["minutes_total"] == [2.5, 6.5]
    assert [p["run"] for p in out["lineage"]] == ["p", "c"]
    assert out["lineage"][0]["games"] == [0, 100, 200]
    assert (out["lineage"][1]["games_offset"], out["lineage"][1]["deals"]) == (200, 1024)
    assert out["games"] == [0, 50]  # the run's own counts stay as measured
    png = tmp_path / "lineage.png"
    learning.plot(out, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
