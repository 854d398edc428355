"""evaluate.py entry point.

Invariants: `--matrix` writes the documented JSON shape (players, margin, stderr, deals) with an
antisymmetric margin matrix; `--wpg` reports a player's margin against Mr. Greed; bad input
(unknown player, bad deal count, unreadable deal file) fails with a message naming it and writes
no output file.
"""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "evaluate.py", *args, "progress=false", "workers=1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )


def test_matrix_json(tmp_path):
    out = tmp_path / "m.json"
    proc = run_cli("--matrix", "players=[random,if]", "deals=6", f"out={out}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["players"] == ["random", "if"] and result["deals"] == 6
    assert result["margin"][0][1] == -result["margin"][1][0]
    assert result["margin"][0][0] == 0 and result["stderr"][0][1] > 0
    assert "random" in proc.stdout and "if" in proc.stdout


def test_wpg_json(tmp_path):
    out = tmp_path / "w.json"
    proc = run_cli("--wpg", "player=random", "deals=2", "greed_samples=4", f"out={out}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["player"] == "random" and result["deals"] == 2
    assert isinstance(result["wpg"], float)


def test_bad_input_is_named(tmp_path):
    out = tmp_path / "never.json"
    proc = run_cli("--matrix", "players=[random,bogus]", "deals=2", f"out={out}")
    assert proc.returncode != 0 and "bogus" in proc.stderr
    proc = run_cli("--matrix", "deals=0", f"out={out}")
    assert proc.returncode != 0 and "deals must be a positive" in proc.stderr
    proc = run_cli("--matrix", f"deals_file={tmp_path / 'missing.txt'}", f"out={out}")
    assert proc.returncode != 0 and "missing.txt" in proc.stderr
    assert not out.exists()
