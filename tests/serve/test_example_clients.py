"""The example clients of examples/ (what docs/protocol.md points outside bot authors at) play a
whole Gongzhu match and a whole Fish game against a real server, and what they report is what the
records hold.
"""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.request
from pathlib import Path

from serve_thread import running_server

from scrofazero.serve.fish.records import replayed_state

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import bot_client  # noqa: E402  (examples/ is not a package: imported by path)
import fish_bot_client  # noqa: E402


def post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.loads(resp.read())


def test_the_example_bot_plays_a_whole_match(tmp_path):
    with running_server(tmp_path) as server:
        made = post(f"{server.url}/api/tables", {"type": "create", "hands": 2,
                                                 "seats": ["open", "random", "random", "random"]})
        hands, over = asyncio.run(bot_client.play_match(server.ws, made["table"], 0,
                                                        made["tokens"]["0"], seed=3))
        match = get(f"{server.url}/api/matches/{over['match_id']}")
    assert [h["hand"] for h in hands] == [1, 2] and over["hands_played"] == 2
    recorded = [g["scores"] for g in match["games"]]
    assert [h["scores"] for h in hands] == recorded
    assert over["totals"] == match["totals"] == [sum(s[t] + s[t + 2] for s in recorded)
                                                 for t in (0, 1)]


def test_the_example_fish_bot_plays_a_whole_game(tmp_path):
    with running_server(tmp_path) as server:
        made = post(f"{server.url}/api/fish/tables", {"type": "fish_create", "seed": 4,
                                                      "seats": ["open"] + ["random"] * 5})
        over = asyncio.run(fish_bot_client.play(server.ws + "/fish", made["table"], 0,
                                                made["tokens"]["0"], seed=2))
        game = get(f"{server.url}/api/fish/games/{over['game_id']}")
    assert sum(over["score"]) == 9  # 6 players: every one of the 9 sets called
    assert game["score"] == over["score"]
    assert list(replayed_state(game).score) == over["score"]  # the rules engine's replay
    assert [m["seat"] for m in game["moves"]].count(0) > 0  # the example bot moved
