"""A bot that takes a seat at a ScrofaZero Fish table and plays at random (docs/protocol.md, Fish).

    python examples/fish_bot_client.py ws://127.0.0.1:8000/ws/fish TABLE SEAT TOKEN
    python examples/fish_bot_client.py ws://127.0.0.1:8000/ws/fish --create   # vs 5 of ours

Needs only the `websockets` package. It asks a random legal ask of each `fish_turn`; when no ask
is legal (`must_call`) it calls the set it holds most of, naming itself for its own cards and its
first teammate for the rest (a guess). Prints the result and exits.
"""

import asyncio
import json
import random
import sys

import websockets

FATAL = ("bad_token", "unknown_table", "unknown_seat", "replaced")


def guessed_call(hand, sets, seat, num_players):
    """A call of the uncalled set with most of `hand`'s cards: own cards to `seat`, the others to
    the first teammate (seat + 2)."""
    mine = set(hand)
    open_sets = [s for s in sets if s["team"] is None]
    chosen = max(open_sets, key=lambda s: len(mine & set(s["cards"])))
    mate = (seat + 2) % num_players
    return {"set": chosen["set"],
            "holders": {c: (seat if c in mine else mate) for c in chosen["cards"]}}


async def play(url, table=None, seat=0, token=None, name="random-fish-bot", seed=None):
    """Play the game to the end; return fish_over."""
    rng = random.Random(seed)
    async with websockets.connect(url) as ws:
        if table is None:  # us at seat 0 against logic, learned, logic, learned and random
            await ws.send(json.dumps({"v": 1, "type": "fish_create", "seats": [
                "open", "logic", "learned", "logic", "learned", "random"]}))
            created = json.loads(await ws.recv())
            if created["type"] != "fish_created":
                raise RuntimeError(created)
            table, seat, token = created["table"], 0, created["tokens"]["0"]
        await ws.send(json.dumps({"v": 1, "type": "fish_join", "table": table, "seat": seat,
                                  "token": token, "name": name}))
        hand, sets, players = [], [], 0
        async for frame in ws:
            msg = json.loads(frame)
            kind = msg["type"]
            if kind == "fish_welcome":
                hand, sets, players = list(msg["hand"]), msg["sets"], msg["num_players"]
            elif kind == "asked" and msg["hit"]:  # the card moves from target to asker
                if msg["target"] == seat:
                    hand.remove(msg["card"])
                elif msg["seat"] == seat:
                    hand.append(msg["card"])
            elif kind == "called":  # the set leaves every hand
                cards = next(s["cards"] for s in sets if s["set"] == msg["set"])
                hand = [c for c in hand if c not in cards]
                for s in sets:
                    if s["set"] == msg["set"]:
                        s["team"] = msg["team"]
            elif kind == "fish_turn":
                if msg["must_call"]:
                    move = {"type": "call", **guessed_call(hand, sets, seat, players)}
                else:
                    target, card = rng.choice(msg["asks"])
                    move = {"type": "ask", "target": target, "card": card}
                await ws.send(json.dumps({"v": 1, **move, "move": msg["move"]}))
            elif kind == "error":
                print("server:", msg["code"], msg["message"], file=sys.stderr)
                if msg["code"] in FATAL:
                    raise RuntimeError(msg["message"])
            elif kind == "fish_over":
                return msg
    raise RuntimeError("the server closed the connection before the end of the game")


def main(argv):
    if len(argv) == 2 and argv[1] == "--create":
        over = asyncio.run(play(argv[0]))
    elif len(argv) == 4:
        over = asyncio.run(play(argv[0], argv[1], int(argv[2]), argv[3]))
    else:
        sys.exit(__doc__)
    print(f"game {over['game_id']}: sets {over['score'][0]}-{over['score'][1]}, "
          f"winner {'draw' if over['winner'] is None else 'team ' + str(over['winner'])}")


if __name__ == "__main__":
    main(sys.argv[1:])
