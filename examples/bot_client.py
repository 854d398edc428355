"""A bot that joins a ScrofaZero table and plays Mr. Random (docs/protocol.md).

    python examples/bot_client.py ws://127.0.0.1:8000/ws TABLE SEAT TOKEN
    python examples/bot_client.py ws://127.0.0.1:8000/ws --create   # own table vs 3 of ours

Needs only the `websockets` package. Prints the final scores and exits.
"""

import asyncio
import json
import random
import sys

import websockets


async def play(url, table=None, seat=0, token=None, name="random-bot", seed=None):
    """Play one hand; return the game_over message."""
    rng = random.Random(seed)
    async with websockets.connect(url) as ws:
        if table is None:  # make a table: us at seat 0 against ScrofaZero, Mr. Greed, ScrofaZero
            await ws.send(json.dumps({"v": 1, "type": "create",
                                      "seats": ["open", "scrofazero", "greed", "scrofazero"]}))
            created = json.loads(await ws.recv())
            if created["type"] != "created":
                raise RuntimeError(created)
            table, seat, token = created["table"], 0, created["tokens"]["0"]
        await ws.send(json.dumps({"v": 1, "type": "join", "table": table, "seat": seat,
                                  "token": token, "name": name}))
        async for frame in ws:
            msg = json.loads(frame)
            if msg["type"] == "your_turn":
                card = rng.choice(msg["legal"])
                await ws.send(json.dumps({"v": 1, "type": "play", "card": card,
                                          "ply": msg["ply"]}))
            elif msg["type"] == "error":
                print("server:", msg["code"], msg["message"], file=sys.stderr)
                if msg["code"] in ("bad_token", "unknown_table", "unknown_seat", "replaced"):
                    raise RuntimeError(msg["message"])
            elif msg["type"] == "game_over":
                return msg
    raise RuntimeError("the server closed the connection before the end of the hand")


def main(argv):
    if len(argv) == 2 and argv[1] == "--create":
        result = asyncio.run(play(argv[0]))
    elif len(argv) == 4:
        result = asyncio.run(play(argv[0], argv[1], int(argv[2]), argv[3]))
    else:
        sys.exit(__doc__)
    print(f"game {result['game_id']}: scores {result['scores']}, team {result['team']}")


if __name__ == "__main__":
    main(sys.argv[1:])
