"""Fair play at the table server: what a seat or a watcher is told before the end.

Invariants: before `game_over` no message to a seat names a card it cannot see (its own hand,
the cards played so far), and none to a watcher names a card not yet played; no message, and no
listing over HTTP, tells a deal number while the game is on (a standard deal's number shows every
hand); the bots' thinking (it names their cards) comes with `game_over`, in play order, unless
the table was created with `live_thinking`, which every `welcome` then says. A table made with
a chosen standard deal is an open deal, said before anyone joins (the listing, a watcher's
welcome) and in every seat's welcome, and its later hands are random: a seat's own cards name the
chosen hands' deals and no other's.
"""

from __future__ import annotations

import asyncio
import re

from serve_thread import Client, answer, running_server
from toy_player import ToyPlayer, ToySettings

from scrofazero.agents import PLAYERS, PlayerSpec
from scrofazero.games.gongzhu.cards import card_code
from scrofazero.games.gongzhu.deals import hands_of, load_deals
from scrofazero.serve.gongzhu.messages import CARD_PATTERN

DEAL = 5
HIDDEN_KEYS = {"deal_number", "deal_numbers", "deal"}


def cards_and_keys(value, cards: set, keys: list) -> None:
    """Every card code and every (key, value) pair anywhere in a message."""
    if isinstance(value, dict):
        keys.extend(value.items())
        for item in value.values():
            cards_and_keys(item, cards, keys)
    elif isinstance(value, list):
        for item in value:
            cards_and_keys(item, cards, keys)
    elif isinstance(value, str) and re.match(CARD_PATTERN, value):
        cards.add(value)


def leaks(messages: list[dict]) -> list[str]:
    """What the messages before the match's last game_over (the one match_over follows) tell
    that their receiver cannot see: during a hand (from its welcome to its game_over) a card
    outside the receiver's hand and the cards played so far; at any time a deal number."""
    seen, in_hand, found = set(), False, []
    for msg, after in zip(messages, messages[1:] + [{"type": None}]):
        if msg["type"] == "game_over" and after["type"] == "match_over":
            break
        if msg["type"] == "welcome":
            seen, in_hand = set(msg["hand"]), True
        elif msg["type"] == "game_over":
            in_hand = False
        elif msg["type"] == "played":
            seen.add(msg["card"])
        cards, keys = set(), []
        cards_and_keys(msg, cards, keys)
        if in_hand:
            found += [f"{msg['type']}: card {c}" for c in sorted(cards - seen)]
        found += [f"{msg['type']}: {k} {v}" for k, v in keys if k in HIDDEN_KEYS and v is not None]
    return found


def register_toy(monkeypatch) -> None:
    # a fast bot that explains its moves: its thinking names its legal cards
    monkeypatch.setitem(PLAYERS, "toy", PlayerSpec("toy", ToyPlayer, ToySettings, "Toy", "toy"))


def test_no_seat_or_watcher_learns_a_hidden_card_before_the_end(tmp_path, monkeypatch):
    """A two-hand match from standard deal DEAL: no deal number is told, over the socket or
    HTTP, until match_over, and hand 2's deal is not one hand 1 gives away (a random deal, no
    standard one)."""
    register_toy(monkeypatch)
    listed = {}
    with running_server(tmp_path) as server:
        async def case():
            seat, watcher = [await Client.connect(server.ws) for _ in range(2)]
            made = await seat.ask({"type": "create", "deal": DEAL, "thinking": True, "hands": 2,
                                   "seats": ["open", "toy", "toy", "random"]}, "created")
            await watcher.ask({"type": "watch", "table": made["table"]}, "welcome")
            await seat.send({"type": "join", "table": made["table"], "seat": 0,
                             "token": made["tokens"]["0"]})
            while True:
                msg = await seat.next(timeout=60)
                if msg["type"] == "your_turn":
                    overs = [m for m in seat.got if m["type"] == "game_over"]
                    if len(listed) == len(overs) < 2:  # in play: the HTTP listings too
                        paths = ["/api/tables", "/api/games"] + [
                            f"/api/games/{o['game_id']}" for o in overs] + [
                            f"/api/matches/{o['match_id']}" for o in overs]
                        listed[len(overs)] = [answer(server, p) for p in paths]
                    await seat.send({"type": "play", "card": msg["legal"][0], "ply": msg["ply"]})
                elif msg["type"] == "hand_over":
                    await seat.send({"type": "next"})
                elif msg["type"] == "match_over":
                    await watcher.next("match_over", timeout=60)
                    first = answer(server, f"/api/games/{made['game_id']}")
                    return seat.got, watcher.got, first

        to_seat, to_watcher, first = asyncio.run(case())
    welcomes = [m for m in to_seat if m["type"] == "welcome"]
    assert [len(w["hand"]) for w in welcomes] == [13, 13]
    assert not any(w["live_thinking"] for w in welcomes)
    assert leaks(to_seat) == []
    assert leaks(to_watcher) == []
    for tables, games, *records in listed.values():
        assert tables and all("deal_number" not in t for t in tables)
        assert games and all(g["deal_number"] is None for g in games)
        # hand 1 is over while hand 2 is played: its record opens, without its deal number
        assert all(r["deal_number"] is None for r in records if "deal_number" in r)
        assert all(g["deal_number"] is None for r in records for g in r.get("games", []))
    assert len(listed[1]) == 4  # hand 2's listings include hand 1's game and the match
    overs = [m for m in to_seat if m["type"] == "game_over"]
    assert [o["deal_number"] for o in overs] == [None, None]  # hand 2 random: it has none
    assert to_seat[-1]["type"] == "match_over"
    assert to_seat[-1]["deal_numbers"] == [DEAL, None]
    assert first["deal_number"] == DEAL  # the match is over: the records tell it too
    for over in overs:
        thoughts = over["thinking"]
        assert {t["seat"] for t in thoughts} == {1, 2} and len(thoughts) == 26
        assert [t["ply"] for t in thoughts] == sorted(t["ply"] for t in thoughts)
    assert not [m for m in to_seat + to_watcher if m["type"] == "thinking"]
    # the checker does catch a leak: a card the seat does not hold, before it is played, and a
    # deal number before the match is over
    not_mine = next(m["card"] for m in to_seat if m["type"] == "played" and m["seat"] == 1)
    assert leaks([welcomes[0], {"type": "thinking", "values": [{"card": not_mine}]}]) == [
        f"thinking: card {not_mine}"]
    assert leaks([{**overs[0], "deal_number": DEAL}]) == [f"game_over: deal_number {DEAL}"]


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


def standard_hands() -> dict[frozenset, int]:
    """Every hand of every standard deal (the public file), as its cards -> the deal's number:
    what a seat that knows the file looks its own cards up in."""
    return {frozenset(card_code(c) for c in range(52) if hand >> c & 1): number
            for number, deal in enumerate(load_deals()) for hand in hands_of(deal)}


async def play_a_match(server, table: str, seat: int, token: str) -> list[dict]:
    """Join `seat` and play its first legal card each turn, `next` after each hand, until
    match_over; every message the seat got."""
    client = await Client.connect(server.ws)
    await client.send({"type": "join", "table": table, "seat": seat, "token": token})
    while True:
        msg = await client.next(timeout=60)
        if msg["type"] == "your_turn":
            await client.send({"type": "play", "card": msg["legal"][0], "ply": msg["ply"]})
        elif msg["type"] == "hand_over":
            await client.send({"type": "next"})
        elif msg["type"] == "match_over":
            await client.close()
            return client.got


def test_an_open_deal_is_said_before_joining_and_its_later_hands_are_random(tmp_path):
    """Issue 49 item 5: a private 3-hand match from standard deal DEAL, its seat 1 joined by
    someone who did not make it. Before the join, the listing and a watcher's welcome say it
    is an open deal (1 chosen hand); at each welcome the seat's 13 cards name hand 1's deal among
    the public ones, as it was told, and no standard deal for hands 2 and 3 (once, both were
    standard deals the server drew, so the seat knew all 52 cards of every hand)."""
    with running_server(tmp_path) as server:
        made = answer(server, "/api/tables", {"type": "create", "deal": DEAL, "hands": 3,
                                              "seats": ["random", "open", "random", "random"]})
        plain = answer(server, "/api/tables", {"type": "create", "seats": ["open"] * 4})
        several = answer(server, "/api/tables", {"type": "create", "deal": [DEAL, 9],
                                                 "hands": 3, "seats": ["open"] * 4})
        listed = {t["table"]: t for t in answer(server, "/api/tables")}

        async def case():
            watcher = await Client.connect(server.ws)
            peek = await watcher.ask({"type": "watch", "table": made["table"]}, "welcome")
            await watcher.close()
            return peek, await play_a_match(server, made["table"], 1, made["tokens"]["1"])

        peek, got = asyncio.run(case())
    assert (listed[made["table"]]["open_deal"], listed[made["table"]]["open_hands"]) == (True, 1)
    assert (listed[several["table"]]["open_deal"], listed[several["table"]]["open_hands"]) == \
        (True, 2)
    assert (listed[plain["table"]]["open_deal"], listed[plain["table"]]["open_hands"]) == (False, 0)
    assert peek["open_deal"] and peek["hand"] == []  # said to a watcher, before any seat
    welcomes = [m for m in got if m["type"] == "welcome"]
    assert len(welcomes) == 3 and all(w["open_deal"] for w in welcomes)
    lookup = standard_hands()
    named = [lookup.get(frozenset(w["hand"])) for w in welcomes]
    assert named == [DEAL, None, None]
    assert got[-1]["type"] == "match_over" and got[-1]["deal_numbers"] == [DEAL, None, None]
