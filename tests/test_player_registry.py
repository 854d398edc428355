"""A new player is one module and one registry line: a toy player registered here plays through
evaluate.py's runner (its settings given as `toy.SETTING`, a bad one refused by that name) and
as a seat kind of the table server (listed with its description, named by its title, its
`decide` explanation recorded and sent as thinking) without any other change.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from composed import settings_of
from hydra import compose, initialize_config_dir
from serve_thread import running_server
from toy_player import ToyPlayer, ToySettings

from scrofazero import entry
from scrofazero.agents import PLAYERS, PlayerSpec
from scrofazero.eval.runner import evaluate_gongzhu
from scrofazero.games.gongzhu.cards import card_index
from scrofazero.games.gongzhu.rules import GongzhuState

ROOT = Path(__file__).resolve().parents[1]
TOY = PlayerSpec("toy", ToyPlayer, ToySettings, "Toy Bot", "plays one end of its legal cards")


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(PLAYERS, TOY.name, TOY)  # the one registry line
    return TOY


def evaluate_config(*overrides):
    """The config `python evaluate.py <overrides>` runs with."""
    entry.register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        return compose(config_name="evaluate",
                       overrides=[*overrides, "progress=false", "workers=1"])


def test_a_registered_player_plays_through_evaluate(toy, capsys):
    cfg = evaluate_config("mode=matrix", "players=[toy,random]", "deals=2", "+toy.end=highest")
    result = evaluate_gongzhu(settings_of(cfg))
    assert result["players"] == ["toy", "random"] and result["deals"] == 2
    assert result["margin"][0][1] == -result["margin"][1][0] != 0
    lowest = evaluate_gongzhu(settings_of(evaluate_config("mode=matrix", "players=[toy,random]",
                                                          "deals=2")))
    assert lowest["margin"] != result["margin"]  # the setting reached the player
    wpg = evaluate_gongzhu(settings_of(evaluate_config("mode=wpg", "player=toy", "deals=1",
                                           "greed.num_samples=2", "+toy.end=highest")))
    assert wpg["settings"] == {"end": "highest"} and wpg["checkpoint"] is None
    capsys.readouterr()


@pytest.mark.parametrize("override, message", [
    ("+toy.end=middle", "toy.end='middle': choose lowest or highest"),
    ("+toy.ends=lowest", "toy.ends is not a setting of player 'toy' \\(it has: end\\)"),
])
def test_a_registered_players_bad_setting_is_named(toy, override, message):
    with pytest.raises(ValueError, match=message):
        evaluate_gongzhu(settings_of(evaluate_config("mode=matrix", "players=[toy,random]",
                                                     "deals=1", override)))


def _get(server, path):
    with urllib.request.urlopen(server.url + path, timeout=30) as resp:
        return json.loads(resp.read())


def _post(server, path, body):
    req = urllib.request.Request(server.url + path, data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_a_registered_player_is_a_seat_kind_of_the_server(toy, tmp_path):
    with running_server(tmp_path) as server:
        options = _get(server, "/api/options")
        assert "toy" in options["seat_kinds"]
        assert {"kind": "toy", "name": "Toy Bot", "about": TOY.about} in options["bots"]
        made = _post(server, "/api/tables", {"type": "create", "deal": 3,
                                             "seats": ["toy", "random", "toy", "random"]})
        end = time.time() + 60
        while True:
            try:
                game = _get(server, f"/api/games/{made['game_id']}")
                break
            except urllib.error.HTTPError as err:  # 409 while the hand is played
                assert err.code == 409 and time.time() < end
                time.sleep(0.05)
    assert [s["name"] for s in game["seats"]] == ["Toy Bot", "Mr. Random"] * 2
    state = GongzhuState([card_index(c) for c in game["deal"].split()], leader=0)
    for move in game["moves"]:
        legal = state.legal_actions()
        if move["seat"] in (0, 2):
            assert card_index(move["card"]) == min(legal)
            thinking = move["thinking"]
            assert thinking["forced"] == (len(legal) == 1) and thinking["belief"] == []
            assert [v["value"] for v in thinking["values"]] == [-float(i)
                                                                for i in range(len(legal))]
        else:
            assert move["thinking"] is None
        state.apply(card_index(move["card"]))
    assert state.is_terminal() and game["scores"] == state.pile_scores()
