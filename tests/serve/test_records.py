"""Game records in a real database (serve/gongzhu/records.py) on a temporary SQLite file.

Invariants: a finished game is stored with its seats, every move (seat, card, time) and its
scores, which equal the rules engine's replay of its moves; a server restarted on the same file
keeps every finished game and marks the games and matches it left unfinished as abandoned (with
the moves they had); the replay frames end at the recorded score; the export is a game record
that reads back and replays to the same score; a database that cannot be opened is named.
With SCROFAZERO_TEST_DB_URL set (e.g. postgresql+psycopg://user@localhost/gongzhu_test) the
restart test also runs on that database (its tables are dropped first).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.error
import urllib.request

import pytest
from serve_thread import Client, running_server

from scrofazero.games.gongzhu.game_record import parse_games, replay
from scrofazero.serve.common.records import Base, RecordsError, database_url
from scrofazero.serve.gongzhu.records import Records, move_row


def get(server, path: str, raw: bool = False):
    with urllib.request.urlopen(server.url + path, timeout=30) as resp:
        body = resp.read()
    return body.decode() if raw else json.loads(body)


def post(server, body: dict) -> dict:
    req = urllib.request.Request(server.url + "/api/tables", data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


DATABASES = ["sqlite"] + (["url"] if os.environ.get("SCROFAZERO_TEST_DB_URL") else [])


@pytest.mark.parametrize("database", DATABASES)
def test_restart_keeps_finished_games_and_abandons_the_rest(tmp_path, database):
    db = str(tmp_path / "games.sqlite")
    if database == "url":
        db = os.environ["SCROFAZERO_TEST_DB_URL"]
        records = Records(db)
        Base.metadata.drop_all(records.engine)
        records.close()
    with running_server(tmp_path, db=db) as server:
        finished = post(server, {"type": "create", "seats": ["greed", "if", "random", "random"],
                                 "deal": 7})
        waiting = post(server, {"type": "create", "seats": ["open", "random", "random", "if"]})
        playing = post(server, {"type": "create", "seats": ["open", "random", "random", "if"]})

        async def two_moves_then_stay():
            client = await Client.connect(server.ws)
            await client.send({"type": "join", "table": playing["table"], "seat": 0,
                               "token": playing["tokens"]["0"]})
            for _ in range(2):
                turn = await client.next("your_turn")
                await client.send({"type": "play", "card": turn["legal"][0], "ply": turn["ply"]})
            await client.next("your_turn")
            return client

        asyncio.run(two_moves_then_stay())
        end = time.time() + 30
        while finished["game_id"] not in [g["id"] for g in get(server, "/api/games?status="
                                                               "finished")]:
            assert time.time() < end
            time.sleep(0.05)
        with pytest.raises(urllib.error.HTTPError, match="409"):  # still in play: no peeking
            get(server, f"/api/games/{playing['game_id']}")
        before = get(server, f"/api/games/{finished['game_id']}")
    with running_server(tmp_path, db=db) as server:  # a new server on the same file
        games = {g["id"]: g for g in get(server, "/api/games")}
        after = get(server, f"/api/games/{finished['game_id']}")
        frames = get(server, f"/api/games/{finished['game_id']}/replay")
        text = get(server, f"/api/games/{finished['game_id']}/export", raw=True)
        partial = get(server, f"/api/games/{playing['game_id']}")
        partial_text = get(server, f"/api/games/{playing['game_id']}/export", raw=True)
        with pytest.raises(urllib.error.HTTPError, match="404"):
            get(server, "/api/games/999")
    assert games[finished["game_id"]]["status"] == "finished"
    assert games[waiting["game_id"]]["status"] == "abandoned"
    assert games[playing["game_id"]]["status"] == "abandoned"
    assert after == before and len(after["moves"]) == 52
    assert [m["ply"] for m in after["moves"]] == list(range(1, 53))
    assert all(m["think_ms"] >= 0 and m["played_at"] for m in after["moves"])
    assert [s["kind"] for s in after["seats"]] == ["greed", "if", "random", "random"]
    (record,) = parse_games(text, "export")
    state = replay(record)  # checks the stated score against the replay
    assert state.pile_scores() == after["scores"] == frames["scores"] == frames["frames"][-1][
        "scores"] == frames["recorded_scores"]
    assert len(frames["frames"]) == 53 and sum(map(len, frames["frames"][0]["hands"])) == 52
    assert frames["frames"][-1]["hands"] == [[], [], [], []]
    assert len(partial["moves"]) >= 2 and partial["scores"] is None
    (part,) = parse_games(partial_text, "partial")
    assert len(replay(part).history) == len(partial["moves"])


def test_records_directly(tmp_path):
    assert database_url("postgresql://u@h/db") == "postgresql://u@h/db"
    assert database_url(str(tmp_path / "x" / "g.sqlite")) == f"sqlite:///{tmp_path}/x/g.sqlite"
    records = Records(str(tmp_path / "g.sqlite"))
    game_id = records.new_game("t", "S2 " * 52, None, 0, [("open", "a")] * 4, {"k": 1})
    records.add_moves([move_row(game_id, 1, 0, "S2", 12, "deadline", {"forced": True})])
    records.name_seat(game_id, 0, "Alice")
    match_id = records.new_match("t", 3, 200)
    records.new_game("t", "S2 " * 52, None, 1, [("open", "a")] * 4, {}, match_id, 2)
    records.set_match(match_id, "between", [5, -5])
    game = records.game(game_id)
    assert game["status"] == "waiting" and game["settings"] == {"k": 1}
    assert (game["match_id"], game["hand"]) == (None, None)
    assert game["seats"][0]["name"] == "Alice" and game["moves"][0]["fallback"] == "deadline"
    assert records.abandon_unfinished() == 2 and records.game(game_id)["status"] == "abandoned"
    match = records.match(match_id)
    assert (match["status"], match["totals"], match["target"]) == ("abandoned", [5, -5], 200)
    assert [(g["hand"], g["status"]) for g in match["games"]] == [(2, "abandoned")]
    assert records.game(game_id + 2) is None
    records.close()
    with pytest.raises(RecordsError, match="nosuchdriver"):
        Records("nosuchdriver://x/y")
