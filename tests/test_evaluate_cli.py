"""evaluate.py entry point.

Invariants: `--matrix` writes the documented JSON shape (players, margin, stderr, deals) with an
antisymmetric margin matrix; `--wpg` reports a player's margin against Mr. Greed (or
`opponent=NAME`, the same margin as the matrix's); bad input (unknown player, bad deal count,
unreadable deal file) fails with a message naming it and writes no output file; `--wpg` measures the
ScrofaZero player by default and writes wpg, stderr, deals, games and seconds_per_game; `--matrix`
takes the network players and prints the intransitivity epsilon; mode=belief writes the belief
diagnostic; without checkpoint=PATH the newest checkpoints/*/latest.pt is used, and a missing one is
named. With several workers a player that cannot be built (an empty checkpoint, greed.num_samples=0)
ends the run within seconds with a non-zero exit and a message naming the file or the setting.
game=tiny_crew writes its exact report (computed in-process through entry.evaluate, what evaluate.py
calls: a fresh process would spend most of its time compiling the numba core) and evaluate.py
refuses an unknown leader rule.
"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bounded_run import run_bounded
from composed import script
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from scrofazero import entry
from scrofazero.config import EvaluateConfig
from scrofazero.eval.runner import _agent_kwargs

ROOT = Path(__file__).resolve().parents[1]


def run_cli(*args):
    """`python evaluate.py *args` with one worker, run in this process (composed.script: the
    script itself, argument parsing and exit status included, without a new interpreter's
    imports); the runs with worker processes and from another folder are real processes."""
    return script("evaluate.py", *args, "progress=false", "workers=1")


def run_cli_workers(*args, workers=2, timeout=60):
    """evaluate.py with several worker processes; a hang fails the test by TimeoutExpired."""
    return run_bounded(
        [sys.executable, "evaluate.py", *args, "progress=false", f"workers={workers}"],
        timeout, cwd=ROOT,
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
    proc = run_cli("--wpg", "player=random", "deals=2", "greed.num_samples=4", f"out={out}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["player"] == "random" and result["deals"] == 2
    assert isinstance(result["wpg"], float)


def test_wpg_against_another_opponent_matches_the_matrix(tmp_path):
    out = tmp_path / "w.json"
    proc = run_cli("--wpg", "player=random", "opponent=if", "deals=3", f"out={out}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["opponent"] == "if" and "against two if" in proc.stdout
    matrix = tmp_path / "m.json"
    assert run_cli("--matrix", "players=[if,random]", "deals=3", f"out={matrix}").returncode == 0
    assert result["wpg"] == pytest.approx(json.loads(matrix.read_text())["margin"][0][1])
    assert run_cli("--wpg", "player=random", "opponent=nobody", "deals=1").returncode != 0


def test_bad_input_is_named(tmp_path):
    out = tmp_path / "never.json"
    proc = run_cli("--matrix", "players=[random,bogus]", "deals=2", f"out={out}")
    assert proc.returncode != 0 and "bogus" in proc.stderr
    proc = run_cli("--matrix", "deals=0", f"out={out}")
    assert proc.returncode != 0 and "deals=0: must be greater than or equal to 1" in proc.stderr
    proc = run_cli("--matrix", f"deals_file={tmp_path / 'missing.txt'}", f"out={out}")
    assert proc.returncode != 0 and "missing.txt" in proc.stderr
    assert not out.exists()


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    import torch

    from scrofazero.nn.checkpoint import save_checkpoint
    from scrofazero.nn.network import PolicyValueNet

    torch.manual_seed(0)
    model = PolicyValueNet(hidden=(32,), num_blocks=1)
    base = tmp_path_factory.mktemp("ckpt")
    save_checkpoint(base / "run", model=model, optimizer=None, step=1, config={})
    return base


def test_wpg_scrofazero_default_player(tiny_checkpoint, tmp_path):
    out = tmp_path / "w.json"
    ckpt = tiny_checkpoint / "run" / "latest.pt"
    proc = run_cli("--wpg", f"checkpoint={ckpt}", "deals=1", "greed.num_samples=4",
                   "scrofazero.sampling.method=uniform", "scrofazero.sampling.num_deals=3",
                   "scrofazero.search.selection=puct", "scrofazero.search.c_puct=7.5",
                   f"out={out}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["player"] == "scrofazero" and result["games"] == 2 and result["deals"] == 1
    assert set(result) >= {"wpg", "stderr", "deals", "games", "seconds_per_game"}
    assert result["seconds_per_game"] > 0 and result["settings"]["sampling"]["num_deals"] == 3
    # every search setting reaches the player, the PUCT constant included; the budget is the
    # player's default (agents/scrofazero_agent.py play_search: 5 + 1 x legal cards)
    assert result["settings"]["search"] == {"c_uct": 30.0, "budget_base": 5,
                                            "budget_per_legal": 1, "selection": "puct",
                                            "c_puct": 7.5, "search_forced": False}
    assert "WPG of scrofazero" in proc.stdout


def test_matrix_with_network_players_prints_epsilon(tiny_checkpoint, tmp_path):
    out = tmp_path / "m.json"
    ckpt = tiny_checkpoint / "run" / "latest.pt"
    proc = run_cli("--matrix", "players=[random,raw,scrofazero]", f"checkpoint={ckpt}",
                   "deals=1", "scrofazero.sampling.num_important=1",
                   "scrofazero.weighting.enabled=false",
                   f"out={out}")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["players"] == ["random", "raw", "scrofazero"]
    assert 0 <= result["intransitivity"]["epsilon"] <= 1
    assert "intransitivity epsilon" in proc.stdout


@pytest.mark.parametrize("against", [[], ["belief_opponent=greed", "greed.num_samples=2",
                                            "scrofazero.weighting.plays=all"]])
def test_belief_mode(tiny_checkpoint, tmp_path, against):
    out = tmp_path / "b.json"
    ckpt = tiny_checkpoint / "run" / "latest.pt"
    proc = run_cli("mode=belief", "player=raw", "raw.mode=policy", "belief_games=1",
                   f"checkpoint={ckpt}", f"out={out}", *against)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["card_predictions"] > 0 and "mean_log_likelihood_gain" in result
    assert 1 <= result["mean_ess"] <= result["mean_deals"]
    assert result["seats"] == ([0, 2] if against else [0, 1, 2, 3])
    assert result["opponent"] == ("greed" if against else None)
    assert result["plays"] == ("all" if against else "relevant")
    if against:
        assert "against greed" in proc.stdout


def test_find_checkpoint(tmp_path):
    import os

    from scrofazero.eval.runner import find_checkpoint

    with pytest.raises(FileNotFoundError, match="no checkpoint"):
        find_checkpoint(None, root=tmp_path, shipped=None)
    for i, name in enumerate(["b", "a"]):
        (tmp_path / name).mkdir()
        (tmp_path / name / "latest.pt").write_bytes(b"x")
        os.utime(tmp_path / name / "latest.pt", (1000 + i, 1000 + i))
    assert find_checkpoint(None, root=tmp_path, shipped=None) == str(tmp_path / "a" / "latest.pt")
    with pytest.raises(FileNotFoundError, match="nope.pt"):
        find_checkpoint(str(tmp_path / "nope.pt"))
    # No run at all: the shipped model, when there is one.
    shipped = tmp_path / "models" / "scrofazero.pt"
    shipped.parent.mkdir()
    shipped.write_bytes(b"x")
    empty = tmp_path / "no_runs"
    assert find_checkpoint(None, root=empty, shipped=shipped) == str(shipped)
    with pytest.raises(FileNotFoundError, match="no shipped model"):
        find_checkpoint(None, root=empty, shipped=tmp_path / "none.pt")


def test_tiny_crew_report(tmp_path):
    out = tmp_path / "t.json"
    # the config `python evaluate.py <these overrides> progress=false workers=1` runs with
    entry.register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        cfg = compose(config_name="evaluate", overrides=[
            "game=tiny_crew", "game.deal_stride=350", "game.improve_rounds=1",
            "game.crossplay=true", f"out={out}", "progress=false", "workers=1"])
    entry.evaluate(cfg)
    result = json.loads(out.read_text())
    assert result["deals"] == 99 and result["cfr"] is None and result["mccfr"] is None
    assert 0 <= result["random"] < result["search"] <= result["open_hand_bound"] <= 1
    assert result["search_improved"] >= result["search"]
    cross = result["crossplay"]
    assert cross["AAA"] == pytest.approx(result["search_improved"])
    assert set(cross) == {"search_seed1", "AAA", "BBB", "ABB", "BAB", "BBA", "BAA", "ABA", "AAB"}
    proc = run_cli("game=tiny_crew", "game.leader=dealer", f"out={tmp_path / 'never.json'}")
    assert proc.returncode != 0 and "leader" in proc.stderr


def test_empty_checkpoint_with_two_workers_fails_fast(tmp_path):
    # A worker that dies building its player must end the run, not be restarted by the pool
    # forever: the run would hang.
    empty = tmp_path / "zero.pt"
    empty.write_bytes(b"")
    out = tmp_path / "never.json"
    started = time.perf_counter()
    proc = run_cli_workers("--wpg", "player=raw", f"checkpoint={empty}", "deals=2", f"out={out}")
    assert proc.returncode != 0
    assert f"{empty}: not a checkpoint" in proc.stderr
    assert time.perf_counter() - started < 60
    assert not out.exists()


def test_bad_setting_with_two_workers_is_named(tmp_path):
    out = tmp_path / "never.json"
    # the deprecated flat name sets greed.num_samples and the error names that
    proc = run_cli_workers("--wpg", "player=random", "deals=2", "greed_samples=0", f"out={out}")
    assert proc.returncode != 0
    assert "greed.num_samples=0: must be greater than or equal to 1" in proc.stderr
    assert not out.exists()


@pytest.mark.parametrize("setting, value, players, message", [
    ("greed.num_samples", 0, ["random", "greed"],
     "greed.num_samples=0: must be greater than or equal to 1"),
    ("raw.sampling.num_deals", 0, ["random", "raw"],
     "raw.sampling.num_deals=0: must be greater than or equal to 1"),
    ("raw.mode", "best", ["random", "raw"], "raw.mode='best': choose value or policy"),
])
def test_player_settings_are_named(setting, value, players, message):
    composed = OmegaConf.structured(EvaluateConfig)
    OmegaConf.update(composed, setting, value)
    cfg = OmegaConf.to_object(composed)  # built, not yet checked: the player's spec checks it
    with pytest.raises(ValueError, match=message):
        _agent_kwargs(cfg, players, 2)
    # the settings of a player who does not play are not checked
    assert _agent_kwargs(cfg, ["random", "if"], 2) == ({}, None)


def test_shipped_model_is_measured_when_no_run_exists(tmp_path):
    """A fresh clone has no checkpoints/: evaluate.py --wpg measures models/scrofazero.pt."""
    shipped = ROOT / "models" / "scrofazero.pt"
    assert shipped.is_file() and (ROOT / "models" / "scrofazero.md").is_file()
    out = tmp_path / "w.json"
    proc = subprocess.run([sys.executable, str(ROOT / "evaluate.py"), "--wpg", "player=raw",
                           "deals=1", "workers=1", "progress=false", f"out={out}"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(out.read_text())["checkpoint"] == str(shipped)
