"""benchmarks/learning.py: the commands it runs, its lineage and reuse rules, and (marked slow:
some 40 s of train.py and evaluate.py processes) the script end to end on the smoke preset (a
few games, one deal).

Invariants: the train.py and evaluate.py command lines it builds are settings the scripts take
and say what the benchmark records (the game counts as milestones, the recorded evaluate
settings). End to end it trains, keeps a copy of the network at each requested game count,
measures each copy's raw WPG, writes the JSON with one entry per count (0 included) and the PNG
plot; run again it resumes the finished run and reuses the measurements instead of training
anew. A kept measurement is reused only while the copy's bytes, the deals, the seed and the
evaluate settings match what it records; the run's full resolved settings (its stored config)
are reported.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from composed import config, settings_of

ROOT = Path(__file__).resolve().parents[1]


def test_the_commands_it_runs_are_settings_the_scripts_take(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import argparse

    import learning

    args = argparse.Namespace(preset="smoke", run="lb", checkpoint_dir=str(tmp_path / "ck"),
                              log_dir=str(tmp_path / "runs"), games=[4, 10],
                              games_per_batch=4)
    train = settings_of(config("train", *learning.train_arguments(args, ["train.lr=0.001"])))
    assert (train.train.games_per_batch, train.train.max_batches) == (4, 3)  # 12 >= 10 games
    assert list(train.train.milestone_games) == [0, 4, 10] and train.train.lr == 0.001
    assert "resume=true" not in learning.train_arguments(args, [])
    (tmp_path / "ck" / "lb").mkdir(parents=True)
    (tmp_path / "ck" / "lb" / "latest.pt").write_bytes(b"")
    assert learning.train_arguments(args, [])[-1] == "resume=true"  # a run there is continued
    inputs = learning.measurement_inputs(ROOT / "models" / "scrofazero_small.pt", 3)
    arguments = learning.evaluate_arguments(Path("n.pt"), inputs, tmp_path / "o.json", 1)
    assert arguments[0] == "--wpg"
    cfg = settings_of(config("evaluate", "mode=wpg", *arguments[1:]))
    assert (cfg.player, cfg.raw.mode, cfg.raw.sampling.num_deals) == ("raw", "value", 5)
    assert (cfg.greed.num_samples, cfg.deals, cfg.seed) == (20, 3, learning.SEED)
    assert cfg.raw.sampling.method == "uniform"


@pytest.mark.slow
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


def _copy(run_dir, games, bias):
    """A milestone copy games_<games>.pt of a tiny network whose bytes depend on `bias`."""
    import torch

    from scrofazero.nn.checkpoint import save_checkpoint
    from scrofazero.nn.network import PolicyValueNet

    torch.manual_seed(0)
    model = PolicyValueNet(hidden=(4,), num_blocks=0)
    with torch.no_grad():
        model.value_head.bias.fill_(bias)
    snapshot = save_checkpoint(run_dir, model=model, optimizer=None, step=games,
                               config={"train": {"lr": 5e-5}, "run": "r"},
                               extra={"games": games, "train_seconds": 6.0 * games})
    snapshot.replace(run_dir / f"games_{games}.pt")


def test_a_measurement_is_reused_only_for_the_same_inputs(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import argparse

    import learning

    calls = []

    def fake_evaluate(cmd):
        # Stands in for evaluate.py: a WPG that tells which file was measured with which seed.
        opts = dict(arg.split("=", 1) for arg in cmd if "=" in arg)
        calls.append(opts)
        wpg = float(len(calls))
        Path(opts["out"]).write_text(json.dumps({"wpg": wpg, "stderr": 1.0, "values": [wpg]}))

    monkeypatch.setattr(learning, "run_evaluate", fake_evaluate)
    run = tmp_path / "run"
    _copy(run, 0, 0.0)
    _copy(run, 4, 0.0)
    args = argparse.Namespace(games=[4], deals=3, workers=1)
    first = learning.measure(args, run)
    assert [c["checkpoint"] for c in calls] == [str(run / "games_0.pt"), str(run / "games_4.pt")]
    assert {(c["deals"], c["seed"], c["player"], c["raw.sampling.num_deals"]) for c in calls} == {
        ("3", "0", "raw", "5")}
    assert first["wpg"] == [1.0, 2.0] and first["games"] == [0, 4]
    assert first["settings"] == {"train": {"lr": 5e-5}, "run": "r"}
    kept = json.loads((run / "wpg_raw_games_4_deals_3.json").read_text())
    assert first["measurements"][1] == {"games": 4, **kept["inputs"]}
    assert kept["inputs"]["checkpoint_sha256"] == learning.file_sha256(run / "games_4.pt")
    assert kept["inputs"]["deals"] == 3 and kept["inputs"]["seed"] == learning.SEED

    again = learning.measure(args, run)  # nothing changed: both reused
    assert len(calls) == 2 and again["wpg"] == first["wpg"]

    _copy(run, 4, 0.5)  # the same name, other bytes: measured anew, the other copy reused
    changed = learning.measure(args, run)
    assert [c["checkpoint"] for c in calls[2:]] == [str(run / "games_4.pt")]
    assert changed["wpg"] == [1.0, 3.0]
    assert changed["measurements"][1]["checkpoint_sha256"] != \
        first["measurements"][1]["checkpoint_sha256"]

    monkeypatch.setitem(learning.EVALUATE, "raw_deals", 9)  # other settings: both anew
    learning.measure(args, run)
    assert len(calls) == 5 and {c["raw.sampling.num_deals"] for c in calls[3:]} == {"9"}
    (run / "wpg_raw_games_0_deals_3.json").write_text('{"wpg": 0.0')  # torn: anew
    monkeypatch.setitem(learning.EVALUATE, "raw_deals", 5)
    learning.measure(args, run)
    assert len(calls) == 7


def test_earlier_points_stand_in_for_copies_this_machine_lacks(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import argparse

    import learning
    import pytest

    calls = []

    def fake_evaluate(cmd):
        opts = dict(arg.split("=", 1) for arg in cmd if "=" in arg)
        calls.append(opts["checkpoint"])
        Path(opts["out"]).write_text(json.dumps({"wpg": 7.0, "stderr": 2.0, "values": [7.0]}))

    monkeypatch.setattr(learning, "run_evaluate", fake_evaluate)
    run = tmp_path / "run"
    _copy(run, 0, 0.0)
    _copy(run, 12, 0.0)  # this sitting's copy; games 4 and 8 were measured in an earlier one
    earlier = {"games": [0, 4, 8], "minutes": [0.0, 1.5, 3.0], "wpg": [1.0, 2.0, 3.0],
               "stderr": [4.0, 4.0, 4.0], "settings": {"run": "r"},
               "measurements": [{"games": g, "checkpoint_sha256": f"sha{g}", "deals": d}
                                for g, d in ((0, 3), (4, 3), (8, 5))]}
    args = argparse.Namespace(games=[4, 12], deals=3, workers=1)
    rows = learning.measure(args, run, earlier)
    assert calls == [str(run / "games_0.pt"), str(run / "games_12.pt")]  # 4: taken from earlier
    assert rows["games"] == [0, 4, 12] and rows["wpg"] == [7.0, 2.0, 7.0]
    assert rows["minutes"][1] == 1.5 and rows["measurements"][1]["checkpoint_sha256"] == "sha4"
    # games 8 was measured on other deals: not a stand-in, so its absence is an error.
    with pytest.raises(FileNotFoundError, match="games_8.pt is missing.*--earlier has no"):
        learning.measure(argparse.Namespace(games=[8], deals=3, workers=1), run, earlier)
