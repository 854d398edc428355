"""benchmarks/serve.py end to end on a few tables (the figures themselves come from --tables 50).

Invariants: the script starts play.py, plays every protocol table, every 3-hand Gongzhu match,
every Fish table (6 and 8 seats) and every in-process-bot table to the end, replays every
recorded game to its recorded score, and writes the figures it prints (moves, moves/s, latency
percentiles in order per kind, the engine anchor) to its JSON file.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_serve_benchmark_small(tmp_path):
    out = tmp_path / "serve.json"
    proc = subprocess.run([sys.executable, "benchmarks/serve.py", "--tables", "3",
                           "--match-tables", "1", "--fish-tables", "2", "--bot-tables", "2",
                           "--json", str(out)], check=False, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["tables"] == 3 and result["connections"] == 12
    assert result["moves"] == 3 * 52  # every move of every seat was timed
    assert result["replayed_to_recorded_score"] == 3
    assert result["bot_tables_replayed_to_recorded_score"] == 2
    matches, fish = result["matches"], result["fish"]
    assert (matches["tables"], matches["hands"], matches["games"]) == (1, 3, 3)
    assert matches["moves"] == 3 * 52 and matches["replayed_to_recorded_score"] == 3
    assert fish["seats"] == {"6": 1, "8": 1} and fish["connections"] == 14
    assert fish["moves"] > 0 and fish["replayed_to_recorded_score"] == 2
    for lat in (result["latency_ms"], matches["latency_ms"], fish["latency_ms"]):
        assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["max"]
    assert matches["moves_per_s"] > 0 and fish["moves_per_s"] > 0
    assert result["moves_per_s"] > 0 and result["anchor_engine_moves_per_s"] > 0
    assert json.loads(proc.stdout) == result
    from scrofazero.agents import PLAYERS  # every bot kind's first move after start is timed
    assert set(result["first_move_ms"]) == set(PLAYERS)
    assert all(ms >= 0 for ms in result["first_move_ms"].values())
