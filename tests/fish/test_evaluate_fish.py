"""evaluate.py game=fish (scrofazero/fish/report.py).

Invariants: mode=track writes accuracy, per_file and predictions for the given recordings, with
the tracker above plain counting and the looser count (known cards included) above the strict
one; a slip in a user's transcript is reported with file and line and the rest still scored;
mode=match writes a table per table size with win counts that add up and a 95% interval around
the win rate; bad players, modes and game counts fail with a message naming them.
"""

import json
import subprocess
import sys
from pathlib import Path

from scrofazero.games.fish.transcripts import recording_paths

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args):
    return subprocess.run([sys.executable, "evaluate.py", "game=fish", *args, "progress=false"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_track_one_recording(tmp_path):
    path = next(p for p in recording_paths() if "1527" in p.name)  # the 6-player game
    out = tmp_path / "t.json"
    proc = run_cli("mode=track", f"game.transcripts=[{path}]", f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert set(result["per_file"]) == {path.name} and result["predictions"] > 1000
    assert result["accuracy"] > result["baseline"]["accuracy"] + 0.03
    assert result["accuracy_incl_certain"] > result["accuracy"]
    assert result["issues"] == []


def test_track_reports_a_slip_and_goes_on(tmp_path):
    lines = next(p for p in recording_paths() if "1527" in p.name).read_text().splitlines()
    lines.insert(3, "PB KZ ZZ 1")  # an unknown card code
    bad = tmp_path / "slip.txt"
    bad.write_text("\n".join(lines))
    out = tmp_path / "t.json"
    proc = run_cli("mode=track", f"game.transcripts=[{bad}]", f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert any("slip.txt:4" in issue and "ZZ" in issue for issue in result["issues"])
    assert result["predictions"] > 1000


def test_match_table(tmp_path):
    out = tmp_path / "m.json"
    proc = run_cli("mode=match", "players=[random,random]", "game.games=3", "game.table_sizes=[6,8]",
                   f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert set(result["tables"]) == {"6", "8"}
    for table in result["tables"].values():
        assert table["games"] == 6 and table["wins"] + table["draws"] + table["losses"] == 6
        assert table["ci95"][0] <= table["win_rate"] <= table["ci95"][1]


def test_bad_input():
    proc = run_cli("mode=match", "players=[logic,greed]", "game.games=1")
    assert proc.returncode != 0 and "greed" in proc.stderr
    proc = run_cli("mode=wpg")
    assert proc.returncode != 0 and "track" in proc.stderr
    proc = run_cli("mode=match", "players=[logic,random]", "game.games=0")
    assert proc.returncode != 0 and "games" in proc.stderr
