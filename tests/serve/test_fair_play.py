"""Fair play at the table server: what a seat or a watcher is told before the end.

Invariants: before `game_over` no message to a seat names a card it cannot see (its own hand,
the cards played so far), and none to a watcher names a card not yet played; no message, and no
listing over HTTP, tells a deal number while the game is on (a standard deal's number shows every
hand); the bots' thinking (it names their cards) comes with `game_over`, in play order, unless
the table was created with `live_thinking`, which every `welcome` then says.
"""

from __future__ import annotations

import asyncio
import json
import re
import urllib.request

from serve_thread import Client, running_server
from toy_player import ToyPlayer, ToySettings

from scrofazero.agents import PLAYERS, PlayerSpec
from scrofazero.serve.messages import CARD_PATTERN

DEAL = 5
HIDDEN_KEYS = {"deal_number", "deal"}


def cards_and_keys(value, cards: set, keys: set) -> None:
    """Every card code and every key anywhere in a message."""
    if isinstance(value, dict):
        keys.update(value)
        for item in value.values():
            cards_and_keys(item, cards, keys)
    elif isinstance(value, list):
        for item in value:
            cards_and_keys(item, cards, keys)
    elif isinstance(value, str) and re.match(CARD_PATTERN, value):
        cards.add(value)


def leaks(messages: list[dict], own: set[str]) -> list[str]:
    """What the messages before game_over tell that a receiver holding `own` cannot see."""
    seen, found = set(own), []
    for msg in messages:
        if msg["type"] == "game_over":
            break
        if msg["type"] == "played":
            seen.add(msg["card"])
        cards, keys = set(), set()
        cards_and_keys(msg, cards, keys)
        found += [f"{msg['type']}: card {c}" for c in sorted(cards - seen)]
        found += [f"{msg['type']}: key {k}" for k in sorted(keys & HIDDEN_KEYS)]
    return found


def get(server, path: str):
    with urllib.request.urlopen(server.url + path, timeout=30) as resp:
        return json.loads(resp.read())


def register_toy(monkeypatch) -> None:
    # a fast bot that explains its moves: its thinking names its legal cards
    monkeypatch.setitem(PLAYERS, "toy", PlayerSpec("toy", ToyPlayer, ToySettings, "Toy", "toy"))


def test_no_seat_or_watcher_learns_a_hidden_card_before_the_end(tmp_path, monkeypatch):
    register_toy(monkeypatch)
    listed = []
    with running_server(tmp_path) as server:
        async def case():
            seat, watcher = [await Client.connect(server.ws) for _ in range(2)]
            made = await seat.ask({"type": "create", "deal": DEAL, "thinking": True,
                                   "seats": ["open", "toy", "toy", "random"]}, "created")
            await watcher.ask({"type": "watch", "table": made["table"]}, "welcome")
            await seat.send({"type": "join", "table": made["table"], "seat": 0,
                             "token": made["tokens"]["0"]})
            while True:
                msg = await seat.next(timeout=60)
                if msg["type"] == "your_turn":
                    if not listed:  # in play: the HTTP listings keep the deal number too
                        listed.extend([get(server, "/api/tables"), get(server, "/api/games")])
                    await seat.send({"type": "play", "card": msg["legal"][0], "ply": msg["ply"]})
                elif msg["type"] == "game_over":
                    await watcher.next("game_over", timeout=60)
                    return seat.got, watcher.got

        to_seat, to_watcher = asyncio.run(case())
    welcome = next(m for m in to_seat if m["type"] == "welcome")
    assert len(welcome["hand"]) == 13 and not welcome["live_thinking"]
    assert leaks(to_seat, set(welcome["hand"])) == []
    assert leaks(to_watcher, set()) == []
    tables, games = listed
    assert tables and all("deal_number" not in t for t in tables)
    assert games and all(g["deal_number"] is None for g in games)
    over = to_seat[-1]
    assert over["type"] == "game_over" and over["deal_number"] == DEAL
    thoughts = over["thinking"]
    assert {t["seat"] for t in thoughts} == {1, 2} and len(thoughts) == 26
    assert [t["ply"] for t in thoughts] == sorted(t["ply"] for t in thoughts)
    assert not [m for m in to_seat + to_watcher if m["type"] == "thinking"]
    # the checker does catch a leak: a card the seat does not hold, before it is played
    not_mine = next(m["card"] for m in to_seat if m["type"] == "played" and m["seat"] == 1)
    assert leaks([{"type": "thinking", "values": [{"card": not_mine}]}],
                 set(welcome["hand"])) == [f"thinking: card {not_mine}"]


def test_live_thinking_is_sent_after_each_move_and_said_in_welcome(tmp_path, monkeypatch):
    register_toy(monkeypatch)
    with running_server(tmp_path) as server:
        async def case():
            client = await Client.connect(server.ws)
            made = await client.ask({"type": "create", "live_thinking": True,
                                     "seats": ["open", "toy", "toy", "toy"]}, "created")
            welcome = await client.ask({"type": "join", "table": made["table"], "seat": 0,
                                        "token": made["tokens"]["0"]}, "welcome")
            turn = await client.next("your_turn")
            await client.send({"type": "play", "card": turn["legal"][0], "ply": turn["ply"]})
            thought = await client.next("thinking", timeout=30)
            await client.close()
            return welcome, thought

        welcome, thought = asyncio.run(case())
    assert welcome["live_thinking"] and thought["seat"] == 1 and thought["ply"] == 2
