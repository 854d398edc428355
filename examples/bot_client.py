"""A bot that joins a ScrofaZero table and plays Mr. Random (docs/protocol.md).

    python examples/bot_client.py ws://127.0.0.1:8000/ws TABLE SEAT TOKEN
    python examples/bot_client.py ws://127.0.0.1:8000/ws --create [HANDS]   # own match vs 3 of ours

Needs only the `websockets` package. Plays the table's whole match (one hand unless it was made
with more), says `next` after each hand, prints each hand's scores and the match's totals, and
exits. A table made with `--create` has ScrofaZero, Mr. Greed and ScrofaZero at seats 1-3.
"""

import asyncio
import json
import random
import sys

import websockets

FATAL = ("bad_token", "unknown_table", "unknown_seat", "replaced", "expired")


async def play_match(url, table=None, seat=0, token=None, name="random-bot", seed=None,
                     hands=1):
    """Play every hand of the table's match; return (each hand's game_over, match_over)."""
    rng = random.Random(seed)
    hands_over = []
    async with websockets.connect(url) as ws:
        if table is None:  # make a table: us at seat 0 against ScrofaZero, Mr. Greed, ScrofaZero
            await ws.send(json.dumps({"v": 1, "type": "create", "hands": hands,
                                      "seats": ["open", "scrofazero", "greed", "scrofazero"]}))
            created = json.loads(await ws.recv())
            if created["type"] != "created":
                raise RuntimeError(created)
            table, seat, token = created["table"], 0, created["tokens"]["0"]
        # the creating socket holds no seat: it joins one like any other client
        await ws.send(json.dumps({"v": 1, "type": "join", "table": table, "seat": seat,
                                  "token": token, "name": name}))
        async for frame in ws:
            msg = json.loads(frame)
            if msg["type"] == "your_turn":  # sent for forced moves too; legal is never empty
                card = rng.choice(msg["legal"])
                await ws.send(json.dumps({"v": 1, "type": "play", "card": card,
                                          "ply": msg["ply"]}))
            elif msg["type"] == "error":
                print("server:", msg["code"], msg["message"], file=sys.stderr)
                if msg["code"] in FATAL:
                    raise RuntimeError(msg["message"])
            elif msg["type"] == "game_over":
                hands_over.append(msg)
            elif msg["type"] == "hand_over":  # ready for the next hand
                await ws.send(json.dumps({"v": 1, "type": "next"}))
            elif msg["type"] == "match_over":
                return hands_over, msg
    raise RuntimeError("the server closed the connection before the end of the match")


async def play(url, table=None, seat=0, token=None, name="random-bot", seed=None):
    """Play the table's match; return the last hand's game_over message."""
    hands_over, _ = await play_match(url, table, seat, token, name, seed)
    return hands_over[-1]


def main(argv):
    if len(argv) in (2, 3) and argv[1] == "--create":
        hands = int(argv[2]) if len(argv) == 3 else 1
        games, over = asyncio.run(play_match(argv[0], hands=hands))
    elif len(argv) == 4:
        games, over = asyncio.run(play_match(argv[0], argv[1], int(argv[2]), argv[3]))
    else:
        sys.exit(__doc__)
    for game in games:
        print(f"hand {game['hand']} (game {game['game_id']}): scores {game['scores']}, "
              f"team {game['team']}")
    print(f"match {over['match_id']}: totals {over['totals']} after {over['hands_played']} hands")


if __name__ == "__main__":
    main(sys.argv[1:])
