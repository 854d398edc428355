"""benchmarks/player_settings.py: its rows and paired statistics, and (marked slow: some 30 s
of evaluate.py processes) the script end to end on two deals.

Invariants: every row is a setting evaluate.py takes, checked as the script's command line
would be, on the paper's search and sampling; the paired statistics are the per-deal
differences'; end to end, every setting plays the same deals with the same seed, the baseline's
gain over itself is exactly 0, each other row's gain is the difference of the two WPGs with a
standard error computed from the per-deal differences, and a rerun reuses the measurements.
"""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from composed import config, settings_of

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from player_settings import PAPER, SETTINGS, measurement_key, paired  # noqa: E402


def test_paired_statistics_by_hand():
    mean, se = paired([3.0, 5.0, 10.0], [1.0, 1.0, 1.0])  # differences 2, 4, 9
    assert mean == pytest.approx(5.0)
    assert se == pytest.approx(math.sqrt(((9 + 1 + 16) / 2) / 3))


def test_every_row_is_a_setting_evaluate_takes():
    paper = settings_of(config("evaluate", "mode=wpg", *SETTINGS["paper"])).scrofazero
    assert (paper.search.budget_base, paper.search.budget_per_legal) == (10, 2)
    assert paper.sampling.per_stratum == 1 and paper.weighting.enabled
    for name, overrides in SETTINGS.items():
        player = settings_of(config("evaluate", "mode=wpg", *overrides)).scrofazero
        for override in overrides:  # each lands where it says
            key, value = override.split("=", 1)
            node = player
            for part in key.split(".")[1:]:
                node = getattr(node, part)
            assert str(node).lower() == value.lower() or node == pytest.approx(float(value)), \
                (name, override, node)
    assert SETTINGS["paper"] == PAPER


@pytest.mark.slow
def test_player_settings_tiny(tmp_path):
    out = tmp_path / "settings.json"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "player_settings.py"),
           "--checkpoint", str(ROOT / "models" / "scrofazero.pt"), "--deals", "2",
           "--only", "no_iec", "--out-dir", str(tmp_path / "runs"), "--json", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(out.read_text())["rows"]
    assert [r["name"] for r in rows] == ["paper", "no_iec"]
    assert rows[0]["gain"] == 0.0
    assert rows[1]["gain"] == pytest.approx(rows[1]["wpg"] - rows[0]["wpg"])
    per_run = {p.stem.rsplit("_", 1)[0]: json.loads(p.read_text())
               for p in (tmp_path / "runs").glob("*.json")}
    assert per_run["no_iec"]["settings"]["weighting"]["enabled"] is False
    assert per_run["paper"]["settings"]["weighting"]["enabled"] is True
    assert per_run["no_iec"]["seed"] == per_run["paper"]["seed"]
    for name in ("paper", "no_iec"):  # every row runs on the paper's settings, not the defaults
        assert per_run[name]["settings"]["search"]["budget_base"] == 10
        assert per_run[name]["settings"]["search"]["budget_per_legal"] == 2
        assert per_run[name]["settings"]["sampling"]["per_stratum"] == 1
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / "runs").glob("*.json")}
    again = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600,
                           check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    # Another network (or deal count) is measured anew, never reported under the old label.
    other = tmp_path / "other.pt"
    other.write_bytes((ROOT / "models" / "scrofazero.pt").read_bytes() + b"")
    assert measurement_key([], _Args(other, 2)) == measurement_key([], _Args(
        ROOT / "models" / "scrofazero.pt", 2))
    assert measurement_key([], _Args(other, 3)) != measurement_key([], _Args(other, 2))
    other.write_bytes(other.read_bytes() + b"x")
    assert measurement_key([], _Args(other, 2)) != measurement_key([], _Args(
        ROOT / "models" / "scrofazero.pt", 2))
    assert measurement_key(["a=1"], _Args(other, 2)) != measurement_key([], _Args(other, 2))
    with pytest.raises(ValueError, match="paired comparison of 2 and 3"):
        paired([1.0, 2.0], [1.0, 2.0, 3.0])


class _Args:
    def __init__(self, checkpoint, deals, seed=0):
        self.checkpoint, self.deals, self.seed = checkpoint, deals, seed


def test_settings_change_the_paper_key_by_key():
    assert SETTINGS["shipped"] == []
    assert SETTINGS["paper"] == PAPER
    half = SETTINGS["deals_18_half_search"]
    # the paper's stratified deals and IEC weights, spelled out since the defaults changed
    assert sorted(half) == sorted(["scrofazero.sampling.method=stratified",
                                   "scrofazero.sampling.num_deals=9",
                                   "scrofazero.weighting.enabled=true",
                                   "scrofazero.sampling.per_stratum=2",
                                   "scrofazero.search.budget_base=5",
                                   "scrofazero.search.budget_per_legal=1"])
    assert "scrofazero.search.budget_base=10" in SETTINGS["deals_18"]
    for overrides in SETTINGS.values():  # one value per key: hydra sees no key twice
        keys = [o.split("=", 1)[0] for o in overrides]
        assert len(keys) == len(set(keys))


def test_paired_comparison_of_two_evaluations():
    from paired import compare

    a = {"wpg": 2.0, "stderr": 1.0, "deals": 3, "seed": 0, "values": [1.0, 2.0, 3.0]}
    b = {"wpg": 5.0, "stderr": 1.0, "deals": 3, "seed": 0, "values": [3.0, 4.0, 8.0]}
    out = compare(a, b)
    assert out["diff"] == pytest.approx(3.0) and out["deals"] == 3
    assert out["diff_stderr"] == pytest.approx(paired(b["values"], a["values"])[1])
    with pytest.raises(ValueError, match="differ in seed"):
        compare(a, {**b, "seed": 1})
    with pytest.raises(ValueError, match="differ in deals"):
        compare(a, {**b, "deals": 4})


def test_paired_comparison_on_the_first_deals():
    from paired import compare, first

    a = {"wpg": 2.0, "stderr": 1.0, "deals": 3, "seed": 0, "values": [1.0, 2.0, 3.0]}
    long = {"wpg": 0.0, "stderr": 0.0, "deals": 4, "seed": 0, "values": [3.0, 6.0, 8.0, -17.0]}
    cut = first(long, 2)
    assert cut["values"] == [3.0, 6.0] and cut["deals"] == 2
    assert cut["wpg"] == pytest.approx(4.5) and cut["stderr"] == pytest.approx(1.5)
    assert compare(first(a, 2), cut)["diff"] == pytest.approx(3.0)
    with pytest.raises(ValueError, match="has 4 deals"):
        first(long, 5)


def test_paired_reads_a_row_of_a_rows_file(tmp_path):
    from paired import load

    one = {"wpg": 2.0, "values": [2.0]}
    (tmp_path / "rows.json").write_text(json.dumps({"note": "x", "rows": {"r": one}}))
    (tmp_path / "one.json").write_text(json.dumps(one))
    assert load(f"{tmp_path / 'rows.json'}:r") == one == load(str(tmp_path / "one.json"))
    with pytest.raises(ValueError, match="has no row 's'; it has r"):
        load(f"{tmp_path / 'rows.json'}:s")
    with pytest.raises(ValueError, match="no such file"):
        load(str(tmp_path / "missing.json"))
