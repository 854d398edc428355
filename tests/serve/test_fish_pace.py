"""Fish at a human pace: at a table where a person may sit, our bots wait `fish_bot_delay`
after each move before their ask or call, so each move can be read before the next; a table of
bots only never waits. The setting is play.py's, documented with its default in docs/play.md and
the protocol's Fish section; the Fish hub of a server takes it from there.

Invariants: with a small delay, every bot move at a table with an open seat comes at least the
delay after the move before it (or the start), while a person's own move is not held back;
moves at a table of bots only of the same hub come far faster than the delay.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from scrofazero.games.fish.cards import card_code
from scrofazero.serve.common.config import PlayConfig
from scrofazero.serve.fish.hub import FishHub, FishHubSettings, make_fish_hub
from scrofazero.serve.fish.messages import FishCreate
from scrofazero.serve.fish.records import FishRecords
from scrofazero.serve.fish.table import FishTableSettings, fallback_move
from scrofazero.serve.gongzhu.records import Records

ROOT = Path(__file__).resolve().parents[2]
PACE = 0.2  # seconds: small, so the test is quick
BOT_MOVES = 6  # bot moves timed at the table with a person


class Clock:
    """A connection that notes when each message reached it."""

    def __init__(self):
        self.queue: asyncio.Queue = asyncio.Queue()

    async def send(self, msg: dict) -> None:
        self.queue.put_nowait((time.time(), msg))

    async def close(self, reason: str) -> None:
        pass

    async def next(self, timeout: float = 20.0) -> tuple[float, dict]:
        return await asyncio.wait_for(self.queue.get(), timeout)


def gaps(moves: list[tuple[float, int]], since: float) -> list[tuple[float, int]]:
    """(seconds since the move before, or `since`; seat) of each (time, seat) move."""
    times = [since] + [t for t, _ in moves]
    return [(t - before, seat) for before, (t, seat) in zip(times, moves)]


async def person_table(hub: FishHub) -> tuple[float, list[tuple[float, int]]]:
    """A person at seat 0 among five random bots, moving first and at once on each turn (its
    first legal ask, else the fallback call), until BOT_MOVES bot moves: the start's time and
    every move's (time, seat)."""
    table, tokens = await hub.create_table(FishCreate(seats=["open"] + ["random"] * 5, seed=2))
    me = Clock()
    await hub.receive(me, json.dumps({"type": "fish_join", "table": table.id, "seat": 0,
                                      "token": tokens[0], "name": "Ann"}))
    started, moves = None, []
    while sum(seat != 0 for _, seat in moves) < BOT_MOVES:
        at, msg = await me.next()
        if msg["type"] == "fish_start":
            started = at
        elif msg["type"] in ("asked", "called"):
            moves.append((at, msg["seat"]))
        elif msg["type"] == "fish_turn" and msg["move"] == table.moves + 1:
            if msg["asks"]:
                target, card = msg["asks"][0]
                answer = {"type": "ask", "target": target, "card": card}
            else:
                move = fallback_move(table.state)
                answer = {"type": "call", "set": move.set_id,
                          "holders": {card_code(c): s for c, s in move.assignment}}
            await hub.receive(me, json.dumps({**answer, "move": msg["move"]}))
    return started, moves


async def bots_table(hub: FishHub, count: int) -> list[float]:
    """`count` moves of a table of six random bots, as a watcher gets them: their times."""
    table, _ = await hub.create_table(FishCreate(seats=["random"] * 6, seed=2))
    watcher = Clock()
    await hub.receive(watcher, json.dumps({"type": "fish_watch", "table": table.id}))
    times = []
    while len(times) < count:
        at, msg = await watcher.next()
        if msg["type"] in ("asked", "called"):
            times.append(at)
        elif msg["type"] == "fish_over":
            break
    return times


def test_bots_wait_before_each_move_where_a_person_sits_and_never_among_bots_only(tmp_path):
    async def case():
        records = Records(str(tmp_path / "records.sqlite"))
        hub = FishHub(FishRecords(records.engine), FishHubSettings(
            table=FishTableSettings(bot_delay_s=PACE), seed=0))
        started, moves = await person_table(hub)
        among_bots = await bots_table(hub, 20)
        await hub.shutdown()
        return started, moves, among_bots

    started, moves, among_bots = asyncio.run(case())
    timed = gaps(moves, started)
    bots = [gap for gap, seat in timed if seat != 0]
    assert len(bots) == BOT_MOVES and min(bots) >= PACE - 0.005, timed
    people = [gap for gap, seat in timed if seat == 0]
    assert people and min(people) < PACE, timed  # the person's own moves are not held back
    spaced = [later - before for before, later in zip(among_bots, among_bots[1:])]
    assert len(spaced) >= 10 and sum(spaced) < PACE * len(spaced) / 2, spaced


def test_the_bot_delay_is_a_server_setting_documented_with_its_default(tmp_path):
    records = Records(str(tmp_path / "records.sqlite"))
    with ThreadPoolExecutor(1) as db_thread:
        hub = make_fish_hub(replace(PlayConfig(), fish_bot_delay=0.3), records, db_thread)
        assert hub.settings.table.bot_delay_s == 0.3
        asyncio.run(hub.shutdown())
    default = PlayConfig().fish_bot_delay
    assert 0.5 <= default <= 2.0  # "about a second": a move is read before the next
    row = re.search(r"^\| `fish_bot_delay` \| `([0-9.]+)` \|", (ROOT / "docs" / "play.md")
                    .read_text(), re.M)
    assert row and float(row.group(1)) == default
    fish = (ROOT / "docs" / "protocol.md").read_text().split("\n## Fish\n", 1)[1]
    assert "`fish_bot_delay`" in fish.split("\n## ", 1)[0]

