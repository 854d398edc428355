"""evaluate.py game=fish (scrofazero/fish/runner.py).

Invariants: mode=track writes accuracy, per_file and predictions for the given recordings, with
the tracker above plain counting and the looser count (known cards included) above the strict
one, the ask model's weights, log-loss and ask statistics; a weight outside [0, 1] is refused
by name; a file without predictions has a null (never NaN) accuracy, and no predictions at all is
an error naming the files; a slip in a user's transcript is reported with file and line and the
rest still scored; mode=match writes a table per table size with win counts that add up and a
95% interval around the win rate; model=PATH scores the learned predictor on the same
positions, above its input tracker; bad players, modes and game counts fail with a message
naming them.
"""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from composed import config, script

from scrofazero import entry
from scrofazero.games.fish.transcripts import recording_paths

ROOT = Path(__file__).resolve().parents[2]
SHIPPED_PREDICTOR = ROOT / "models" / "fish_predictor.pt"


def run_cli(*args):
    """`python evaluate.py game=fish *args`: the command line itself, run in this process."""
    return script("evaluate.py", "game=fish", *args, "progress=false")


@pytest.fixture
def run_here(capsys, monkeypatch):
    """The same run in this process (the config evaluate.py composes, entry.evaluate): exit
    status, stdout and stderr as the script would give them."""
    def run(*args):
        monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)
        capsys.readouterr()
        code = 0
        try:
            entry.evaluate(config("evaluate", "game=fish", *args))
        except SystemExit as exit_:
            code = exit_.code
        out = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)
    return run


def test_track_one_recording(tmp_path):
    path = next(p for p in recording_paths() if "1527" in p.name)  # the 6-player game
    out = tmp_path / "t.json"
    proc = run_cli("mode=track", f"game.track.transcripts=[{path}]", "game.track.ask_other=0.97",
                   "game.track.ask_lacks=0.9", "game.track.ask_target=0.7", f"out={out}",
                   f"model={SHIPPED_PREDICTOR}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert set(result["per_file"]) == {path.name} and result["predictions"] > 1000
    assert result["accuracy"] > result["baseline"]["accuracy"] + 0.03
    assert result["accuracy_incl_certain"] > result["accuracy"]
    assert result["issues"] == []
    assert result["ask_model"] == {"other": 0.97, "lacks": 0.9, "target": 0.7}
    assert 0 < result["log_loss"] < 2.0 and result["zero_truth"] == 0
    asks = sum(1 for line in path.read_text().splitlines()[1:-1] if "{" not in line)
    assert result["ask_statistics"]["total"]["asks"] == asks
    # the learned predictor on the same positions (model=PATH), beside its input tracker
    learned = result["predictor"]
    assert set(learned["per_file"]) == {path.name}
    assert learned["predictions"] == result["predictions"]
    assert learned["tracker_matched"]["predictions"] == result["predictions"]
    assert learned["accuracy_incl_certain"] > learned["tracker_matched"]["accuracy_incl_certain"]
    assert learned["log_loss"] < learned["tracker_matched"]["log_loss"]
    assert 0 <= learned["calibration"]["ece"] < 0.1


def test_track_refuses_a_weight_outside_0_1(tmp_path, run_here):
    path = next(p for p in recording_paths() if "1527" in p.name)
    proc = run_here("mode=track", f"game.track.transcripts=[{path}]", "game.track.ask_target=1.5")
    assert proc.returncode == 2 and "game.track.ask_target=1.5" in proc.stderr, proc.stderr[-2000:]


def test_track_reports_a_slip_and_goes_on(tmp_path, run_here):
    lines = next(p for p in recording_paths() if "1527" in p.name).read_text().splitlines()
    lines.insert(3, "PB KZ ZZ 1")  # an unknown card code
    bad = tmp_path / "slip.txt"
    bad.write_text("\n".join(lines))
    out = tmp_path / "t.json"
    proc = run_here("mode=track", f"game.track.transcripts=[{bad}]", f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert any("slip.txt:4" in issue and "ZZ" in issue for issue in result["issues"])
    assert result["predictions"] > 1000


def test_match_table(tmp_path, run_here):
    out = tmp_path / "m.json"
    proc = run_here("mode=match", "players=[random,random]", "game.match.games=3",
                    "game.match.table_sizes=[6,8]", f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert set(result["tables"]) == {"6", "8"}
    for table in result["tables"].values():
        assert table["games"] == 6 and table["wins"] + table["draws"] + table["losses"] == 6
        assert table["ci95"][0] <= table["win_rate"] <= table["ci95"][1]


def test_bad_input(run_here):
    proc = run_here("mode=match", "players=[logic,greed]", "game.match.games=1")
    assert proc.returncode != 0 and "greed" in proc.stderr
    proc = run_here("mode=wpg")
    assert proc.returncode != 0 and "track" in proc.stderr
    proc = run_here("mode=match", "players=[logic,random]", "game.match.games=0")
    assert proc.returncode != 0 and "games" in proc.stderr
    proc = run_here("mode=match", "players=[logic,random]", "predictor=models/fish_predictor.pt")
    assert proc.returncode == 2 and "mode=track only" in proc.stderr


def _recording_head(tmp_path, name, events):
    """The 6-player recording cut after its deal line and `events` events (no score line)."""
    lines = next(p for p in recording_paths() if "1527" in p.name).read_text().splitlines()
    path = tmp_path / name
    path.write_text("\n".join(lines[: 1 + events]) + "\n")
    return path


def _no_nan(text):
    def refuse(constant):
        raise AssertionError(f"{constant} in the JSON output")
    return json.loads(text, parse_constant=refuse)


def test_track_without_predictions_is_an_error_naming_the_file(tmp_path, run_here):
    empty = _recording_head(tmp_path, "header_only.txt", 0)
    out = tmp_path / "t.json"
    proc = run_here("mode=track", f"game.track.transcripts=[{empty}]", f"out={out}")
    assert proc.returncode != 0, proc.stdout[-2000:]
    assert "no predictions" in proc.stderr and str(empty) in proc.stderr, proc.stderr[-2000:]
    assert not out.exists()


def test_track_file_without_predictions_has_null_accuracy(tmp_path, run_here):
    short = _recording_head(tmp_path, "short.txt", 4)
    empty = _recording_head(tmp_path, "header_only.txt", 0)
    out = tmp_path / "t.json"
    proc = run_here("mode=track", f"game.track.transcripts=[{short},{empty}]", f"out={out}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = _no_nan(out.read_text())
    assert result["per_file"]["header_only.txt"]["predictions"] == 0
    assert result["per_file"]["header_only.txt"]["accuracy"] is None
    assert result["per_file"]["header_only.txt"]["accuracy_incl_certain"] is None
    assert result["baseline"]["per_file"]["header_only.txt"] is None
    assert result["per_file"]["short.txt"]["predictions"] > 0
    assert 0 <= result["accuracy"] <= 1 and 0 <= result["baseline"]["accuracy"] <= 1
