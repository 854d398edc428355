"""benchmarks/serve.py end to end on a few tables (the figures themselves come from --tables 50).

Invariants: the script starts play.py, plays every protocol table and every in-process-bot table
to the end, replays every recorded game to its recorded score, and writes the figures it prints
(moves, moves/s, latency percentiles in order, the engine anchor) to its JSON file.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_serve_benchmark_small(tmp_path):
    out = tmp_path / "serve.json"
    proc = subprocess.run([sys.executable, "benchmarks/serve.py", "--tables", "3",
                           "--bot-tables", "2", "--json", str(out)], check=False, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["tables"] == 3 and result["connections"] == 12
    assert result["moves"] == 3 * 52  # every move of every seat was timed
    assert result["replayed_to_recorded_score"] == 3
    assert result["bot_tables_replayed_to_recorded_score"] == 2
    lat = result["latency_ms"]
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    assert result["moves_per_s"] > 0 and result["anchor_engine_moves_per_s"] > 0
    assert json.loads(proc.stdout) == result
    from scrofazero.agents import PLAYERS  # every bot kind's first move after start is timed
    assert set(result["first_move_ms"]) == set(PLAYERS)
    assert all(ms >= 0 for ms in result["first_move_ms"].values())
