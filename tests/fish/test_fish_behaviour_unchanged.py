"""Fish across the split into belief/, prediction/, players/, learning/ and FishConfig's parts:
evaluate.py game=fish gives the figures it gave before.

tests/data/fish_behaviour_b0b7147.json holds what evaluate.py game=fish wrote at commit b0b7147
(the flat package and the flat FishConfig) for track runs (tracker, soft evidence, ask model,
the shipped predictor) and match runs of every player (random, logic, logic_open, search,
learned, under both call rules), each with the command line it had then (`args_before`) and
the one that means the same today (`args`). Invariant: today's run gives every recorded number
exactly (timing and file paths are not recorded); the learned player's runs read the scorer
shipped then (tests/data/fish_learned_b0b7147.pt), since retrained. The quicker runs are
checked by default, the rest with -m slow.
"""

import json
from pathlib import Path

import pytest
from composed import config

from scrofazero import entry

ROOT = Path(__file__).resolve().parents[2]
BEFORE = json.loads((ROOT / "tests" / "data" / "fish_behaviour_b0b7147.json").read_text())
LEARNED_THEN = "tests/data/fish_learned_b0b7147.pt"  # models/fish_learned.pt at b0b7147
QUICK = ("track_ask_model", "match_own_turn", "match_learned_search")


def _without_timing(x):
    if isinstance(x, dict):
        return {k: _without_timing(v) for k, v in x.items() if k not in ("seconds", "model")}
    return x


def _now(name: str, monkeypatch) -> dict:
    monkeypatch.chdir(ROOT)  # the runs name the shipped files relative to the repository
    run = BEFORE["runs"][name]
    args = list(run["args"])
    if any("learned" in a for a in args) and not any(a.startswith("checkpoint=") for a in args):
        args.append(f"checkpoint={LEARNED_THEN}")  # the shipped scorer has been retrained since
    result = entry.evaluate(config("evaluate", "game=fish", *args))
    if "tables" in result:
        return {"tables": _without_timing(result["tables"])}
    return _without_timing({k: result[k] for k in run["result"]})


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=() if name in QUICK else pytest.mark.slow)
    for name in sorted(BEFORE["runs"])])
def test_fish_figures_are_unchanged(name, monkeypatch):
    assert _now(name, monkeypatch) == BEFORE["runs"][name]["result"]


def test_the_record_covers_every_player_and_both_modes():
    runs = BEFORE["runs"].values()
    played = {p for run in runs for table in run["result"].get("tables", {}).values()
              for p in table["players"]}
    assert played == {"random", "logic", "logic_open", "search", "learned"}
    assert any("mode=track" in run["args"] for run in runs)
    assert any("game.match.calls=own_turn" in run["args"] for run in runs)
