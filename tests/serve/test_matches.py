"""Matches at the table server (docs/protocol.md, "Matches"), through the Hub with in-process
connections, and over HTTP for the lobby and the match records.

Invariants: a match plays hands with the same seats and tokens until `hands` are played or a
team leads by `target`, hand k led by seat (leader + k - 1) % 4 on the k-th chosen standard
deal, else a random deal; its totals are the sums of the rules engine's replay of every recorded
hand; after each game_over comes exactly one hand_over or match_over; the next hand starts when
every seat is ready (our bots at once, people by `next`) or after next_hand_s, with a fresh
welcome to each seat; `next` outside the pause is refused (`not_between`); a reloaded seat's
welcome carries the match history and totals; a public table's open seat is claimed once (403
private, 409 taken, 404 unknown); a table idle past its limit is closed and recorded as expired;
a database made before matches is migrated; a move the records refuse is not played, the mover
is told (`storage`) and the table stays playable.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time

import pytest
from gongzhu_replay import replayed_team
from serve_thread import CHECKPOINT, http, running_server

from scrofazero.games.gongzhu.cards import card_code, card_index
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.gongzhu import hub as hub_module
from scrofazero.serve.gongzhu.hub import Hub, HubSettings
from scrofazero.serve.gongzhu.messages import Create
from scrofazero.serve.gongzhu.records import Records
from scrofazero.serve.gongzhu.table import TableSettings


class Conn:
    """An in-process connection that keeps what it is sent; `autoplay` answers every your_turn
    with the first legal card (from a task of its own: the table sends under its lock)."""

    def __init__(self, hub: Hub, autoplay: bool = False):
        self.hub = hub
        self.autoplay = autoplay
        self.got: list[dict] = []
        self.closed: str | None = None

    async def send(self, msg: dict) -> None:
        self.got.append(msg)
        if self.autoplay and msg["type"] == "your_turn":
            asyncio.ensure_future(self.say({"type": "play", "card": msg["legal"][0],
                                            "ply": msg["ply"]}))

    async def close(self, reason: str) -> None:
        self.closed = reason

    async def say(self, msg: dict) -> None:
        await self.hub.receive(self, json.dumps(msg))

    def of(self, kind: str) -> list[dict]:
        return [m for m in self.got if m["type"] == kind]

    async def wait(self, kind: str, count: int = 1, timeout: float = 10.0) -> dict:
        """The `count`-th message of `kind`, once it has come."""
        end = time.monotonic() + timeout
        while len(self.of(kind)) < count:
            assert time.monotonic() < end, f"no {count} {kind} in {[m['type'] for m in self.got]}"
            await asyncio.sleep(0.005)
        return self.of(kind)[count - 1]


def make_hub(tmp_path, **table) -> Hub:
    settings = TableSettings(**{"move_deadline_s": 10.0, "next_hand_s": 10.0, **table})
    return Hub(Records(str(tmp_path / "games.sqlite")),
               HubSettings(checkpoint=CHECKPOINT, table=settings, seed=0))


def run(hub: Hub, case) -> object:
    async def main():
        try:
            return await case()
        finally:
            await hub.shutdown()
    return asyncio.run(main())


def after_game_over(got: list[dict]) -> list[str]:
    """The type of the message right after each game_over."""
    return [got[i + 1]["type"] for i, m in enumerate(got) if m["type"] == "game_over"]


def test_an_all_bot_match_totals_are_the_replayed_hands(tmp_path, monkeypatch):
    hub = make_hub(tmp_path)
    real_decide, checked = hub_module.decide, []

    def checking_decide(agent, view, rng):
        # each hand's fresh welcome resets the bot's tracker: its view is the engine's
        (table,) = hub.tables.values()
        assert view == table.state.view(view.seat)
        checked.append(table.hand)
        return real_decide(agent, view, rng)

    monkeypatch.setattr(hub_module, "decide", checking_decide)

    async def case():
        table, _ = await hub.create_table(Create(seats=["random"] * 4, hands=3, leader=1,
                                                 deal=[1022, 7]))
        watcher = Conn(hub)
        await watcher.say({"type": "watch", "table": table.id})
        await asyncio.wait_for(table.done.wait(), 20)
        return table, watcher

    table, watcher = run(hub, case)
    over = watcher.of("match_over")[-1]
    match = hub.records.match(table.match_id)
    games = [hub.records.game(g["id"]) for g in match["games"]]
    deals = load_deals()
    assert [g["hand"] for g in games] == [1, 2, 3] and {g["match_id"] for g in games} == \
        {table.match_id}
    assert [g["leader"] for g in games] == [1, 2, 3]  # hand k led by (leader + k - 1) % 4
    numbers = [g["deal_number"] for g in games]  # hands 1 and 2 chosen, then a random one
    assert numbers == [1022, 7, None] and over["deal_numbers"] == numbers
    assert [g["deal"] for g in games[:2]] == [" ".join(card_code(int(c)) for c in deals[n])
                                              for n in numbers[:2]]
    teams = [replayed_team(g) for g in games]
    totals = [sum(t[0] for t in teams), sum(t[1] for t in teams)]
    assert over["totals"] == match["totals"] == totals and over["hands_played"] == 3
    assert [h["team"] for h in over["history"]] == teams
    assert [h["game_id"] for h in over["history"]] == [g["id"] for g in games]
    assert over["winner"] == (None if totals[0] == totals[1] else int(totals[1] > totals[0]))
    assert match["status"] == "finished" and table.status == "finished"
    assert all(g["status"] == "finished" for g in games)
    assert all(m["fallback"] is None for g in games for m in g["moves"])
    assert [checked.count(hand) for hand in (1, 2, 3)] == [52, 52, 52]
    # the watcher saw each later hand open with a watcher's welcome, then start
    welcomes = watcher.of("welcome")
    assert [w["hand_number"] for w in welcomes[-2:]] == [2, 3]
    assert all(w["seat"] is None and w["hand"] == [] for w in welcomes)
    assert [s["hand"] for s in watcher.of("start")][-2:] == [2, 3]
    assert after_game_over(watcher.got)[-1] == "match_over"
    assert set(after_game_over(watcher.got)[:-1]) <= {"hand_over"}


def test_the_match_ends_at_the_first_hand_reaching_the_target(tmp_path):
    hub = make_hub(tmp_path)
    target = 300

    async def case():
        table, _ = await hub.create_table(Create(seats=["random"] * 4, hands=100,
                                                 target=target))
        await asyncio.wait_for(table.done.wait(), 30)
        return table

    table = run(hub, case)
    history = table.results
    leads, a, b = [], 0, 0
    for result in history:
        a, b = a + result.team[0], b + result.team[1]
        leads.append(abs(a - b))
    assert len(history) >= 2  # the match went on past a hand that did not reach the target
    assert all(lead < target for lead in leads[:-1]) and leads[-1] >= target
    assert hub.records.match(table.match_id)["totals"] == table.totals == [a, b]


def test_a_one_hand_table_ends_with_match_over(tmp_path):
    hub = make_hub(tmp_path)

    async def case():
        table, tokens = await hub.create_table(Create(seats=["open", "random", "random",
                                                             "random"]))
        person = Conn(hub, autoplay=True)
        await person.say({"type": "join", "table": table.id, "seat": 0, "token": tokens[0]})
        await person.wait("match_over")
        await person.say({"type": "next"})
        return table, person

    table, person = run(hub, case)
    assert [m["type"] for m in person.got[-3:]] == ["game_over", "match_over", "error"]
    assert person.got[-1]["code"] == "not_between"
    over = person.of("match_over")[0]
    assert over["hands_played"] == 1 and over["totals"] == person.of("game_over")[0]["team"]
    assert person.of("welcome")[0]["hands"] == 1 and table.status == "finished"
    assert not person.of("hand_over")


def test_people_say_next_or_the_timeout_starts_the_next_hand(tmp_path):
    hub = make_hub(tmp_path, next_hand_s=0.4)

    async def case():
        table, tokens = await hub.create_table(Create(seats=["open", "random", "open",
                                                             "random"], hands=3))
        a, b = Conn(hub, autoplay=True), Conn(hub, autoplay=True)
        await a.say({"type": "join", "table": table.id, "seat": 0, "token": tokens[0]})
        await a.say({"type": "next"})  # before the first hand: refused
        assert a.got[-1]["code"] == "not_between"
        await b.say({"type": "join", "table": table.id, "seat": 2, "token": tokens[2]})
        await a.say({"type": "next"})  # while playing: refused
        assert a.got[-1]["code"] == "not_between"
        hand_over = await a.wait("hand_over")
        assert hand_over["ready"] == [1, 3] and table.status == "between"  # our bots
        await a.say({"type": "next"})
        ready = await b.wait("ready")
        assert ready == {**ready, "seat": 0} and table.status == "between"
        await b.say({"type": "next"})
        second = await a.wait("welcome", 2)
        # hand 2 over: nobody says next; the timeout starts hand 3
        await a.wait("hand_over", 2)
        ended = time.time()
        third = await a.wait("welcome", 3, timeout=5)
        waited = time.time() - ended
        await a.wait("match_over")
        return table, a, b, hand_over, second, third, ended, waited

    table, a, b, hand_over, second, third, ended, waited = run(hub, case)
    assert 0.3 <= waited < 3.0
    later = a.of("hand_over")[1]
    assert ended - 0.5 < later["next_hand_at"] - 0.4 <= ended  # a Unix time, next_hand_s on
    assert hand_over["next_leader"] == 1 and later["next_leader"] == 2
    assert second["hand_number"] == 2 and second["status"] == "playing"
    assert len(second["hand"]) == 13 and second["game_id"] != hand_over["history"][0]["game_id"]
    assert second["match_history"] == hand_over["history"] and second["totals"] == \
        hand_over["totals"]
    assert third["hand_number"] == 3 and len(third["match_history"]) == 2
    assert [w["seat"] for w in b.of("welcome")] == [2, 2, 2]
    for conn in (a, b):  # each game_over is followed by exactly one hand_over or match_over
        assert after_game_over(conn.got) == ["hand_over", "hand_over", "match_over"]
    assert a.of("match_over")[0]["totals"] == table.totals
    assert [s["first_leader"] for s in a.of("start")] == [0, 1, 2]


def test_a_reloaded_seat_gets_the_match_history_and_totals(tmp_path):
    hub = make_hub(tmp_path, reconnect_grace_s=30.0)

    async def case():
        table, tokens = await hub.create_table(Create(seats=["open", "random", "random",
                                                             "random"], hands=2, deal=9))
        first = Conn(hub, autoplay=True)
        await first.say({"type": "join", "table": table.id, "seat": 0, "token": tokens[0]})
        await first.wait("hand_over")
        await hub.disconnect(first)  # gone between hands: ready at once, hand 2 starts
        await asyncio.sleep(0.05)
        assert table.status == "playing" and table.hand == 2
        again = Conn(hub)
        await again.say({"type": "join", "table": table.id, "seat": 0, "token": tokens[0]})
        return table, first, again

    table, first, again = run(hub, case)
    welcome = again.of("welcome")[0]
    history = first.of("hand_over")[0]["history"]
    assert welcome["hand_number"] == 2 and welcome["match_history"] == history
    assert welcome["totals"] == history[0]["team"] and welcome["seat"] == 0
    assert "deal_number" not in welcome
    assert [card_index(c) for c in welcome["hand"]] == \
        [c for c in range(52) if table.state.view(0).hand >> c & 1]


def test_a_claim_gives_an_open_seat_of_a_public_table_once(tmp_path):
    hub = make_hub(tmp_path)

    async def case():
        public, tokens = await hub.create_table(Create(seats=["open", "open", "random",
                                                              "random"], public=True))
        private, _ = await hub.create_table(Create(seats=["open", "random", "random",
                                                          "random"]))
        assert public.open_seats() == [0, 1]
        token = await hub.claim(public.id, 1, "Bob")
        codes = []
        for table_id, seat in ((public.id, 1), (public.id, 2), (private.id, 0), ("nope", 0),
                               (public.id, 4)):
            with pytest.raises(ProtocolError) as caught:
                await hub.claim(table_id, seat, None)
            codes.append(caught.value.code)
        assert public.open_seats() == [0] and public.info()["open_seats"] == [0]
        stale = Conn(hub)
        await stale.say({"type": "join", "table": public.id, "seat": 1, "token": tokens[1]})
        assert stale.got[-1]["code"] == "bad_token"  # the creator's copy no longer fits
        bob = Conn(hub)
        await bob.say({"type": "join", "table": public.id, "seat": 1, "token": token})
        me = Conn(hub)
        await me.say({"type": "join", "table": public.id, "seat": 0, "token": tokens[0]})
        with pytest.raises(ProtocolError) as caught:
            await hub.claim(public.id, 0, None)
        codes.append(caught.value.code)
        return codes, bob, public

    codes, bob, public = run(hub, case)
    assert codes == ["seat_taken", "seat_taken", "not_public", "unknown_table", "unknown_seat",
                     "seat_taken"]
    assert bob.of("welcome")[0]["players"][1]["name"] == "Bob" and public.status == "playing"
    assert public.open_seats() == []


def test_an_idle_table_expires_and_a_started_one_does_not(tmp_path):
    hub = make_hub(tmp_path, idle_expire_s=0.2)

    async def case():
        idle, tokens = await hub.create_table(Create(seats=["open", "open", "random",
                                                         "random"]))
        busy, busy_tokens = await hub.create_table(Create(seats=["open", "random", "random",
                                                             "random"]))
        seated, watcher, player = Conn(hub), Conn(hub), Conn(hub, autoplay=True)
        await seated.say({"type": "join", "table": idle.id, "seat": 0, "token": tokens[0]})
        await watcher.say({"type": "watch", "table": idle.id})
        await player.say({"type": "join", "table": busy.id, "seat": 0,
                          "token": busy_tokens[0]})
        await asyncio.sleep(0.4)
        late = Conn(hub)
        await late.say({"type": "join", "table": idle.id, "seat": 1, "token": tokens[1]})
        return idle, busy, seated, watcher, late

    idle, busy, seated, watcher, late = run(hub, case)
    for conn in (seated, watcher):
        assert conn.got[-1]["code"] == "expired" and conn.closed == "expired"
    assert late.got[-1]["code"] == "unknown_table"
    assert idle.id not in hub.tables and busy.id in hub.tables and seated not in hub.where
    assert hub.records.game(idle.game_id)["status"] == "expired"
    assert hub.records.match(idle.match_id)["status"] == "expired"
    assert hub.records.match(busy.match_id)["status"] in ("playing", "finished")


def test_a_move_the_records_refuse_is_not_played(tmp_path, monkeypatch):
    hub = make_hub(tmp_path)
    real = Records.add_moves
    refused = []

    def add_moves_once_failing(self, rows):
        if not refused and rows[0]["seat"] == 0:
            refused.append(rows)
            raise OSError("disk full")
        real(self, rows)

    monkeypatch.setattr(Records, "add_moves", add_moves_once_failing)

    async def case():
        table, tokens = await hub.create_table(Create(seats=["open", "random", "random",
                                                             "random"], deal=3))
        person = Conn(hub)
        await person.say({"type": "join", "table": table.id, "seat": 0, "token": tokens[0]})
        turn = await person.wait("your_turn")
        move = {"type": "play", "card": turn["legal"][0], "ply": turn["ply"]}
        await person.say(move)
        error = person.got[-1]
        stored = await hub.read("game", table.game_id)
        memory = len(table.state.history)
        await person.say(move)  # the same move again: played now
        person.autoplay = True
        await person.say({"type": "ping"})
        turn = await person.wait("your_turn", 2)
        await person.say({"type": "play", "card": turn["legal"][0], "ply": turn["ply"]})
        await asyncio.wait_for(table.done.wait(), 20)
        return table, person, error, stored, memory, turn

    table, person, error, stored, memory, turn = run(hub, case)
    assert error["code"] == "storage" and "disk full" in error["message"]
    assert memory == len(stored["moves"]) == 0  # neither the table nor the records moved
    assert len(refused) == 1
    game = hub.records.game(table.game_id)
    assert len(game["moves"]) == 52 and game["status"] == "finished"
    assert [m["ply"] for m in game["moves"]] == list(range(1, 53))
    assert replayed_team(game) == person.of("game_over")[0]["team"]
    assert [m["fallback"] for m in game["moves"]] == [None] * 52


def failing_once(monkeypatch, when) -> list:
    """Records.add_moves raises once, for the first batch `when(rows)` picks; returns the
    batches it refused."""
    real = Records.add_moves
    refused = []

    def add_moves(self, rows):
        if not refused and when(rows):
            refused.append(rows)
            raise OSError("database is locked")
        real(self, rows)

    monkeypatch.setattr(Records, "add_moves", add_moves)
    return refused


def test_a_refused_fallback_is_tried_again(tmp_path, monkeypatch):
    hub = make_hub(tmp_path, move_deadline_s=0.05)
    refused = failing_once(monkeypatch, lambda rows: rows[0]["fallback"] == "deadline")

    async def case():
        table, tokens = await hub.create_table(Create(seats=["open", "random", "random",
                                                             "random"], deal=0))
        quiet = Conn(hub)  # joins and never answers: every move of seat 0 is the fallback
        await quiet.say({"type": "join", "table": table.id, "seat": 0, "token": tokens[0]})
        await asyncio.wait_for(table.done.wait(), 20)
        return table

    table = run(hub, case)
    assert len(refused) == 1 and refused[0][0]["seat"] == 0
    game = hub.records.game(table.game_id)
    assert len(game["moves"]) == 52 and game["status"] == "finished"
    assert {m["fallback"] for m in game["moves"] if m["seat"] == 0} == {"deadline"}
    assert replayed_team(game) == table.results[0].team


def test_a_refused_bot_move_is_sent_again(tmp_path, monkeypatch):
    hub = make_hub(tmp_path)  # a deadline of 10 s: the bot's own retry plays the move
    monkeypatch.setattr(hub_module, "STORAGE_RETRY_S", 0.02)
    refused = failing_once(monkeypatch, lambda rows: rows[0]["ply"] == 2)

    async def case():
        table, _ = await hub.create_table(Create(seats=["random"] * 4))
        await asyncio.wait_for(table.done.wait(), 20)
        return table

    table = run(hub, case)
    game = hub.records.game(table.game_id)
    assert len(refused) == 1 and len(game["moves"]) == 52
    assert [m["fallback"] for m in game["moves"]] == [None] * 52
    assert game["moves"][1]["card"] == refused[0][0]["card"]
    assert replayed_team(game) == table.results[0].team


OLD_SCHEMA = """
CREATE TABLE games (id INTEGER NOT NULL, table_id VARCHAR(32) NOT NULL,
    status VARCHAR(16) NOT NULL, created_at DATETIME NOT NULL, finished_at DATETIME,
    deal TEXT NOT NULL, deal_number INTEGER, leader INTEGER NOT NULL, scores VARCHAR(64),
    settings TEXT NOT NULL, PRIMARY KEY (id));
CREATE INDEX ix_games_table_id ON games (table_id);
CREATE INDEX ix_games_status ON games (status);
CREATE TABLE moves (id INTEGER NOT NULL, game_id INTEGER NOT NULL, ply INTEGER NOT NULL,
    seat INTEGER NOT NULL, card VARCHAR(3) NOT NULL, played_at DATETIME NOT NULL,
    think_ms INTEGER NOT NULL, fallback VARCHAR(16), thinking TEXT, PRIMARY KEY (id),
    UNIQUE (game_id, ply), FOREIGN KEY(game_id) REFERENCES games (id));
CREATE INDEX ix_moves_game_id ON moves (game_id);
CREATE TABLE seats (id INTEGER NOT NULL, game_id INTEGER NOT NULL, seat INTEGER NOT NULL,
    kind VARCHAR(16) NOT NULL, name VARCHAR(64) NOT NULL, PRIMARY KEY (id),
    UNIQUE (game_id, seat), FOREIGN KEY(game_id) REFERENCES games (id));
CREATE INDEX ix_seats_game_id ON seats (game_id);
INSERT INTO games VALUES (1, 'old', 'finished', '2026-01-01 10:00:00', '2026-01-01 10:05:00',
    'DEAL', NULL, 2, '[0, 0, 0, 0]', '{}');
INSERT INTO games VALUES (2, 'old2', 'playing', '2026-01-01 11:00:00', NULL, 'DEAL', 5, 0, NULL,
    '{}');
INSERT INTO moves VALUES (1, 1, 1, 2, 'S2', '2026-01-01 10:00:01', 15, NULL, NULL);
INSERT INTO seats VALUES (1, 1, 0, 'open', 'Alice');
"""


def test_a_database_made_before_matches_is_migrated(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as old:
        old.executescript(OLD_SCHEMA)
    records = Records(str(path))
    records.close()
    records = Records(str(path))  # a second open finds nothing to do
    columns = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(games)")]
    assert columns[-2:] == ["match_id", "hand"] and columns.count("hand") == 1
    game = records.game(1)
    assert (game["match_id"], game["hand"], game["seats"][0]["name"]) == (None, None, "Alice")
    assert game["moves"][0]["card"] == "S2" and game["scores"] == [0, 0, 0, 0]
    assert records.abandon_unfinished() == 1 and records.game(2)["status"] == "abandoned"
    match_id = records.new_match("new", 2, None)
    game_id = records.new_game("new", "S2 " * 52, None, 0, [("open", "a")] * 4, {}, match_id, 1)
    records.set_match(match_id, "finished", [10, -10])
    match = records.match(match_id)
    assert [g["id"] for g in match["games"]] == [game_id] and match["totals"] == [10, -10]
    assert match["finished_at"] is not None and records.match(match_id + 1) is None
    records.close()


def test_the_lobby_and_the_match_records_over_http(tmp_path, monkeypatch):
    monkeypatch.setattr(Hub, "warm", lambda self: {})  # random bots only: nothing to warm
    with running_server(tmp_path) as server:
        _, public = http(server, "/api/tables", {"type": "create", "public": True,
                                                 "seats": ["open", "open", "random", "random"]})
        _, private = http(server, "/api/tables", {"type": "create",
                                                  "seats": ["open", "random", "random",
                                                            "random"]})
        _, bots = http(server, "/api/tables", {"type": "create", "hands": 2,
                                               "seats": ["random"] * 4})
        claims = [http(server, f"/api/tables/{public['table']}/claim", {"seat": 1, "name": n})
                  for n in ("Bob", "Eve")]
        refused = [http(server, f"/api/tables/{t}/claim", body) for t, body in (
            (private["table"], {"seat": 0}), ("nope", {"seat": 0}),
            (public["table"], {"seat": "1"}))]
        _, listed = http(server, "/api/tables")
        end = time.time() + 30
        while (status := http(server, f"/api/games/{bots['game_id']}"))[0] == 409:
            assert time.time() < end
            time.sleep(0.05)
        match_id = status[1]["match_id"]
        while http(server, f"/api/matches/{match_id}")[1]["status"] != "finished":
            assert time.time() < end
            time.sleep(0.05)
        _, match = http(server, f"/api/matches/{match_id}")
        _, replay = http(server, f"/api/matches/{match_id}/replay")
        _, second = http(server, f"/api/games/{match['games'][1]['id']}")
        missing = http(server, "/api/matches/999")[0]
    assert claims[0][0] == 200 and claims[0][1]["seat"] == 1 and claims[0][1]["token"]
    assert claims[1][0] == 409 and claims[1][1]["code"] == "seat_taken"
    assert [(c, b["code"]) for c, b in refused] == [(403, "not_public"), (404, "unknown_table"),
                                                    (400, "bad_message")]
    assert "'seat' must be a seat 0..3" in refused[2][1]["message"]
    by_id = {t["table"]: t for t in listed}
    assert by_id[public["table"]]["public"] and by_id[public["table"]]["open_seats"] == [0]
    assert not by_id[private["table"]]["public"] and by_id[private["table"]]["open_seats"] == [0]
    assert match["hands"] == 2 and [g["hand"] for g in match["games"]] == [1, 2]
    assert (second["match_id"], second["hand"]) == (match_id, 2)
    assert replay["match"] == match and len(replay["hands"]) == 2
    for hand, game in zip(replay["hands"], match["games"]):
        assert (hand["id"], hand["match_id"], hand["hand"]) == (game["id"], match_id,
                                                                game["hand"])
        assert len(hand["frames"]) == 53 and hand["scores"] == game["scores"]
    teams = [[s[0] + s[2], s[1] + s[3]] for s in (g["scores"] for g in match["games"])]
    assert match["totals"] == [teams[0][0] + teams[1][0], teams[0][1] + teams[1][1]]
    assert missing == 404
