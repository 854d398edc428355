"""Load test of the table server on loopback: many bot-only tables played at once to the end.

Starts `python play.py port=0` in its own process on a fresh SQLite file, then from this process
opens N tables whose four seats are all outside bots speaking the protocol (docs/protocol.md;
the reference client's Mr. Random, 4 N WebSockets at once), plays them concurrently and measures
moves/s over the whole run and each move's latency (from sending `play` to receiving its own
`played` echo, which the server sends after the move is applied and written to the database).
First, right after the server says it is ready, one table per bot kind measures that kind's
first move (its recorded think time at ply 1: compiling or loading on the first move would show
here). Optionally a second wave of tables held by our in-process bots (`--bot-tables`). Afterwards every
recorded game is replayed on the rules engine and must reach its recorded score. The anchor is
the rules engine's own random-play moves/s in this process, measured in the same run.
Usage: python benchmarks/serve.py --json PATH [--tables 50] [--bot-tables 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import websockets

from scrofazero.atomic import write_json_atomic
from scrofazero.games.gongzhu.cards import card_index
from scrofazero.games.gongzhu.rules import GongzhuState

ROOT = Path(__file__).resolve().parents[1]


def start_server(db: str, extra: list[str]) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "play.py", "port=0", f"db={db}", "seed=0",
                             "move_deadline_s=60", *extra], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        raise RuntimeError(f"play.py did not start: {line}{proc.stdout.read()}")
    return proc, line.split("http://")[1].split("/")[0]


async def seat_bot(url: str, table: str, seat: int, token: str, seed: int,
                   latencies: list[float]) -> dict:
    """Mr. Random at one seat; appends its moves' latencies (seconds)."""
    rng = random.Random(seed)
    async with websockets.connect(url, max_queue=None) as ws:
        await ws.send(json.dumps({"type": "join", "table": table, "seat": seat, "token": token}))
        sent_at = None
        async for frame in ws:
            msg = json.loads(frame)
            kind = msg["type"]
            if kind == "your_turn":
                sent_at = time.perf_counter()
                await ws.send(json.dumps({"type": "play", "card": rng.choice(msg["legal"]),
                                          "ply": msg["ply"]}))
            elif kind == "played" and msg["seat"] == seat and sent_at is not None:
                latencies.append(time.perf_counter() - sent_at)
                sent_at = None
            elif kind == "error":
                raise RuntimeError(f"table {table} seat {seat}: {msg}")
            elif kind == "game_over":
                return msg
    raise RuntimeError(f"table {table} seat {seat}: closed before the end")


async def protocol_tables(url: str, tables: int) -> tuple[list[int], list[float], float]:
    async with websockets.connect(url) as ws:
        made = []
        for _ in range(tables):
            await ws.send(json.dumps({"type": "create", "seats": ["open"] * 4}))
            made.append(json.loads(await ws.recv()))
    latencies: list[float] = []
    start = time.perf_counter()
    await asyncio.gather(*(seat_bot(url, m["table"], seat, m["tokens"][str(seat)], 4 * i + seat,
                                    latencies)
                           for i, m in enumerate(made) for seat in range(4)))
    return [m["game_id"] for m in made], latencies, time.perf_counter() - start


def http(base: str, path: str, body: dict | None = None):
    req = urllib.request.Request(f"http://{base}{path}", method="POST" if body else "GET",
                                 data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.loads(resp.read())


def bot_tables(base: str, tables: int) -> tuple[list[int], float]:
    """Tables of our in-process bots (no client): wall time until all are finished."""
    start = time.perf_counter()
    ids = [http(base, "/api/tables", {"type": "create",
                                      "seats": ["greed", "random", "if", "random"]})["game_id"]
           for _ in range(tables)]
    wait_finished(base, ids)
    return ids, time.perf_counter() - start


def wait_finished(base: str, ids: list[int]) -> None:
    while True:
        games = http(base, f"/api/games?limit={max(len(ids), 50)}&status=finished")
        if len({g["id"] for g in games} & set(ids)) == len(ids):
            return
        time.sleep(0.05)


def first_moves_ms(base: str) -> dict[str, int]:
    """Per bot kind, the think time of its first move on a fresh server (ms, as recorded)."""
    kinds = [k for k in http(base, "/api/options")["seat_kinds"] if k != "open"]
    out = {}
    for kind in kinds:  # one at a time: each first move has the server to itself
        game_id = http(base, "/api/tables", {"type": "create", "leader": 0,
                                             "seats": [kind, "random", "random", "random"]}
                       )["game_id"]
        wait_finished(base, [game_id])
        out[kind] = http(base, f"/api/games/{game_id}")["moves"][0]["think_ms"]
    return out


def replays_ok(base: str, ids: list[int]) -> int:
    """How many recorded games replay on the rules engine to their recorded score."""
    ok = 0
    for game_id in ids:
        game = http(base, f"/api/games/{game_id}")
        state = GongzhuState([card_index(c) for c in game["deal"].split()], leader=game["leader"])
        for move in game["moves"]:
            state.apply(card_index(move["card"]))
        ok += state.is_terminal() and state.pile_scores() == game["scores"]
    return ok


def engine_moves_per_s(games: int = 200) -> float:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for g in range(games):
        state = GongzhuState(seed=g)
        while not state.is_terminal():
            state.apply(int(rng.choice(state.legal_actions())))
    return 52 * games / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50, help="protocol tables played at once")
    parser.add_argument("--bot-tables", type=int, default=20,
                        help="tables of our in-process bots afterwards (0: none)")
    parser.add_argument("--json", required=True, help="where to write the figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(os.path.join(tmp, "games.sqlite"), [])
        try:
            first_ms = first_moves_ms(base)
            ids, lat, wall = asyncio.run(protocol_tables(f"ws://{base}/ws", args.tables))
            bot_ids, bot_wall = (bot_tables(base, args.bot_tables) if args.bot_tables
                                 else ([], 0.0))
            ok = replays_ok(base, ids)
            bot_ok = replays_ok(base, bot_ids)
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    lat_ms = np.array(lat) * 1000
    engine = engine_moves_per_s()
    result = {
        "tables": args.tables, "connections": 4 * args.tables, "moves": len(lat),
        "wall_s": round(wall, 2), "moves_per_s": round(len(lat) / wall, 1),
        "latency_ms": {q: round(float(np.percentile(lat_ms, p)), 2)
                       for q, p in (("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))},
        "replayed_to_recorded_score": ok,
        "first_move_ms": first_ms,
        "bot_tables": args.bot_tables, "bot_tables_wall_s": round(bot_wall, 2),
        "bot_moves_per_s": round(52 * args.bot_tables / bot_wall, 1) if bot_wall else None,
        "bot_tables_replayed_to_recorded_score": bot_ok,
        "anchor_engine_moves_per_s": round(engine, 1),
        "server_over_engine": round(len(lat) / wall / engine, 4),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform()},
        "command": "python benchmarks/serve.py " + " ".join(sys.argv[1:]),
    }
    write_json_atomic(args.json, result)
    print(json.dumps(result, indent=2))
    print("first move after start (ms): " + ", ".join(f"{k} {v}" for k, v in first_ms.items()),
          file=sys.stderr)  # stdout is the JSON alone
    if ok != args.tables or bot_ok != args.bot_tables:
        sys.exit("some recorded games do not replay to their recorded score")


if __name__ == "__main__":
    main()
