"""Load test of the table server on loopback: many bot-only tables played at once to the end.

Starts `python play.py port=0` in its own process on a fresh SQLite file, then from this process
opens N tables whose four seats are all outside bots speaking the protocol (docs/protocol.md;
the reference client's Mr. Random, 4 N WebSockets at once), plays them concurrently and measures
moves/s over the whole run and each move's latency (from sending `play` to receiving its own
`played` echo, which the server sends after the move is applied and written to the database).
First, right after the server says it is ready, one table per bot kind measures that kind's
first move (its recorded think time at ply 1: compiling or loading on the first move would show
here). Then, each kind a wave of its own, measured the same way: Gongzhu matches of 3 hands
(`--match-tables`, the bots say `next` after each hand), Fish tables of 6 and 8 seats
(`--fish-tables`, half each) of outside Fish bots (random asks; a call when a set is mostly in
hand or a call is due), and tables of our in-process bots (`--bot-tables`, no client: wall time
only). Afterwards every recorded game is replayed on its rules engine and must reach its
recorded score (Gongzhu: records.replay of the stored record; Fish: fish_records'
replayed_state). The anchor is the rules engine's own random-play moves/s in this process,
measured in the same run.

`--hammer N` adds the abuse case, to show that clients flooding the read-only routes do not
hold up play: after the waves, a finished 100-hand bot match, a finished Fish game and
`max_waiting_tables_per_client` public waiting tables are made, then the `--tables` wave is
played twice more, quiet and while N clients in a separate process request every GET route (the
lobby lists, the game, match and Fish records, their replays and exports, the options, the
pages) as fast as the server answers, one request after another each. Its figures are moves/s
and latency of both, side by side, and the hammer's requests/s by status.
All clients, the hammer's too, come from 127.0.0.1, one client address, so the server runs with
the per-client limits on rates and waiting tables raised out of the way (LOAD_SETTINGS): what
holds the tables up under the hammer is the off-loop reads, the cache and the paging alone.

`--attack NAME` runs instead one attack of benchmarks/serve_attack.py (ATTACKS: reviews,
live-replays, ...) against a server with its production limits: honest tables from one address
quiet, then beside a flood from many others, then how long the server takes to be idle again;
the figures of both phases and their ratios.
Usage: python benchmarks/serve.py --json PATH [--tables 50] [--match-tables 10]
       [--fish-tables 10] [--bot-tables 20] [--hammer 4]
       python benchmarks/serve.py --json PATH --attack reviews [--attackers 20] [--quiet-s 25]
       [--attack-s 25] [--honest-tables 2] [--settle-max-s 120]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.client import HTTPConnection, HTTPException
from pathlib import Path

import numpy as np
import websockets

from scrofazero.atomic import write_json_atomic
from scrofazero.games.fish.cards import card_code as fish_card_code
from scrofazero.games.fish.cards import set_cards, teammates
from scrofazero.games.gongzhu.game_record import GameRecordError, replay
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.serve.fish.hub import SeatView
from scrofazero.serve.fish.records import replayed_state
from scrofazero.serve.gongzhu.records import to_game_record
from serve_attack import add_arguments as add_attack_arguments  # beside this script
from serve_attack import counted_threads, main_attack

FISH_CALL_AT = 3  # an outside Fish bot calls a set once it holds this many of its 6 cards

ROOT = Path(__file__).resolve().parents[1]
MATCH_HANDS = 3  # hands of each match of --match-tables
HAMMER_HANDS = 100  # hands of the finished bot match whose replay the hammer asks for
# Every client of this benchmark is 127.0.0.1: the per-client limits (docs/play.md "Limits") are
# raised past what hundreds of tables from one address need; the rest keep their defaults.
LOAD_SETTINGS = ["table_creates_per_minute=1000000", "max_waiting_tables_per_client=1000",
                 "max_bot_matches=100", "client_requests_per_s=1000000",
                 "client_frames_per_s=1000000"]


SERVER_LOG: list[str] = []  # what play.py printed after its address line


def start_server(db: str, extra: list[str],
                 limits: list[str] = LOAD_SETTINGS) -> tuple[subprocess.Popen, str]:
    """play.py on `db` with `limits` (by default LOAD_SETTINGS) and `extra` settings; its
    process and "HOST:PORT"."""
    proc = subprocess.Popen([sys.executable, "play.py", "port=0", f"db={db}", "seed=0",
                             "move_deadline_s=60", *limits, *extra], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = proc.stdout.readline()
    if "http://" not in line:
        proc.kill()
        raise RuntimeError(f"play.py did not start: {line}{proc.stdout.read()}")
    # keep reading what it prints: a full pipe would stall the server on its next write
    threading.Thread(target=lambda: SERVER_LOG.extend(proc.stdout), daemon=True).start()
    return proc, line.split("http://")[1].split("/")[0]


async def seat_bot(url: str, table: str, seat: int, token: str, seed: int,
                   latencies: list[float]) -> dict:
    """Mr. Random at one seat of a match, `next` after every hand but the last; appends its
    moves' latencies (seconds); returns match_over."""
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
            elif kind == "hand_over":
                await ws.send(json.dumps({"type": "next"}))
            elif kind == "error":
                raise RuntimeError(f"table {table} seat {seat}: {msg}")
            elif kind == "match_over":
                return msg
    raise RuntimeError(f"table {table} seat {seat}: closed before the end")


async def protocol_tables(url: str, tables: int, hands: int = 1
                          ) -> tuple[list[int], list[float], float]:
    """`tables` matches of `hands` hands, four outside bots each, played at once: their match
    ids, every move's latency and the wall time."""
    async with websockets.connect(url) as ws:
        made = []
        for _ in range(tables):
            await ws.send(json.dumps({"type": "create", "seats": ["open"] * 4, "hands": hands}))
            made.append(json.loads(await ws.recv()))
    latencies: list[float] = []
    start = time.perf_counter()
    overs = await asyncio.gather(*(seat_bot(url, m["table"], seat, m["tokens"][str(seat)],
                                            4 * i + seat, latencies)
                                   for i, m in enumerate(made) for seat in range(4)))
    return sorted({o["match_id"] for o in overs}), latencies, time.perf_counter() - start


def fish_call(seen: SeatView) -> dict:
    """A call of the uncalled set the seat holds most cards of: its own cards with itself, the
    rest with its first teammate that holds cards (the server's fallback call)."""
    n, me = seen.num_players, seen.seat
    set_id = max(sorted(seen.uncalled), key=lambda s: sum(c in seen.hand for c in set_cards(s)))
    others = [s for s in teammates(me, n) if s != me and seen.hand_counts[s] > 0]
    other = others[0] if others else me
    return {"type": "call", "set": set_id, "move": seen.moves + 1,
            "holders": {fish_card_code(c): me if c in seen.hand else other
                        for c in set_cards(set_id)}}


def fish_move(seen: SeatView, turn: dict, rng: random.Random) -> dict:
    """An outside Fish bot's answer to fish_turn: a call when one is due or a set is mostly in
    hand, else a random legal ask."""
    mostly = [s for s in seen.uncalled
              if sum(c in seen.hand for c in set_cards(s)) >= FISH_CALL_AT]
    if turn["must_call"] or mostly:
        return fish_call(seen)
    target, card = rng.choice(turn["asks"])
    return {"type": "ask", "target": target, "card": card, "move": turn["move"]}


async def fish_seat_bot(url: str, table: str, seat: int, token: str, seed: int,
                        latencies: list[float]) -> dict:
    """An outside bot at one Fish seat; appends its moves' latencies (from sending a move to
    its own `asked` or `called` echo); returns fish_over."""
    rng = random.Random(seed)
    seen, sent = None, None  # sent: (move number, time)
    async with websockets.connect(url, max_queue=None) as ws:
        await ws.send(json.dumps({"type": "fish_join", "table": table, "seat": seat,
                                  "token": token}))
        async for frame in ws:
            msg = json.loads(frame)
            kind = msg["type"]
            if kind == "fish_welcome":
                seen = SeatView(msg)
            elif kind in ("asked", "called"):
                seen.event(msg)
                if sent is not None and msg["seat"] == seat and msg["move"] == sent[0]:
                    latencies.append(time.perf_counter() - sent[1])
                    sent = None
            elif kind == "fish_turn":
                move = fish_move(seen, msg, rng)
                sent = (msg["move"], time.perf_counter())
                await ws.send(json.dumps(move))
            elif kind == "error":
                raise RuntimeError(f"fish table {table} seat {seat}: {msg}")
            elif kind == "fish_over":
                return msg
    raise RuntimeError(f"fish table {table} seat {seat}: closed before the end")


async def fish_tables(url: str, tables: int) -> tuple[list[int], list[float], float]:
    """`tables` Fish tables (the first half 6 seats, the rest 8) of outside bots, played at
    once: their game ids, every move's latency and the wall time."""
    sizes = [6 if i < (tables + 1) // 2 else 8 for i in range(tables)]
    async with websockets.connect(url) as ws:
        made = []
        for i, n in enumerate(sizes):
            await ws.send(json.dumps({"type": "fish_create", "seats": ["open"] * n,
                                      "seed": i, "calls": "own_turn"}))
            made.append(json.loads(await ws.recv()))
    latencies: list[float] = []
    start = time.perf_counter()
    await asyncio.gather(*(fish_seat_bot(url, m["table"], seat, m["tokens"][str(seat)],
                                         100 * i + seat, latencies)
                           for i, (m, n) in enumerate(zip(made, sizes)) for seat in range(n)))
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
        try:
            state = replay(to_game_record(game))
        except GameRecordError:
            continue
        ok += state.is_terminal() and state.pile_scores() == game["scores"]
    return ok


def match_game_ids(base: str, match_ids: list[int]) -> list[int]:
    """The recorded games (hands) of the matches, in order."""
    return [g["id"] for m in match_ids for g in http(base, f"/api/matches/{m}")["games"]]


def fish_replays_ok(base: str, ids: list[int]) -> int:
    """How many recorded Fish games replay on the rules engine to their recorded score."""
    ok = 0
    for game_id in ids:
        game = http(base, f"/api/fish/games/{game_id}")
        try:
            state = replayed_state(game)
        except ValueError:
            continue
        ok += state.is_terminal and list(state.score) == game["score"]
    return ok


def load_figures(latencies: list[float], wall: float) -> dict:
    """Moves, moves/s and latency percentiles (ms) of one wave."""
    lat_ms = np.array(latencies) * 1000
    return {"moves": len(latencies), "wall_s": round(wall, 2),
            "moves_per_s": round(len(latencies) / wall, 1) if wall else None,
            "latency_ms": {q: round(float(np.percentile(lat_ms, p)), 2) if len(lat_ms) else None
                           for q, p in (("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))}}


def hammer_targets(base: str) -> list[str]:
    """Make what the hammer reads: a finished 100-hand match of our bots, a finished Fish game
    of our bots and 20 public waiting tables; returns every GET route's path."""
    match = http(base, "/api/tables", {"type": "create", "seats": ["random"] * 4,
                                       "hands": HAMMER_HANDS})
    fish = http(base, "/api/fish/tables", {"type": "fish_create", "seats": ["random"] * 6})
    for _ in range(20):
        http(base, "/api/tables", {"type": "create", "seats": ["open"] * 4, "public": True})
    while http_status(base, f"/api/games/{match['game_id']}") != 200:  # hand 1 over
        time.sleep(0.2)
    match_id = http(base, f"/api/games/{match['game_id']}")["match_id"]
    while http(base, f"/api/matches/{match_id}")["status"] != "finished":
        time.sleep(0.2)
    game_id = http(base, f"/api/matches/{match_id}")["games"][-1]["id"]
    fish_id = fish["game_id"]
    while http_status(base, f"/api/fish/games/{fish_id}") != 200:
        time.sleep(0.1)
    return ["/", "/fish", "/static/app.js", "/api/options", "/api/fish/options",
            "/api/tables", "/api/tables?public=true", "/api/fish/tables",
            "/api/games?limit=100", f"/api/games/{game_id}", f"/api/games/{game_id}/replay",
            f"/api/games/{game_id}/export", f"/api/matches/{match_id}",
            f"/api/matches/{match_id}/replay", f"/api/fish/games/{fish_id}",
            f"/api/fish/games/{fish_id}/replay", f"/api/fish/games/{fish_id}/export"]


def http_status(base: str, path: str) -> int:
    try:
        with urllib.request.urlopen(f"http://{base}{path}", timeout=60) as resp:
            return resp.status
    except urllib.error.HTTPError as err:
        return err.code


def hammer_client(base: str, paths: list[str], stop, counts) -> None:
    """One hammering client: every path in turn, each answer read whole, until `stop`."""
    host, port = base.rsplit(":", 1)
    conn = HTTPConnection(host, int(port), timeout=60)
    i = 0
    while not stop.is_set():
        try:
            conn.request("GET", paths[i % len(paths)])
            resp = conn.getresponse()
            resp.read()
            counts[str(resp.status)] = counts.get(str(resp.status), 0) + 1
            if resp.getheader("connection", "").lower() == "close":
                conn.close()
        except (OSError, HTTPException):
            conn.close()
            counts["failed"] = counts.get("failed", 0) + 1
        i += 1


def hammer_process(base: str, paths: list[str], clients: int, stop, out) -> None:
    """`clients` hammering threads in this (separate) process; their counts go to `out`."""
    counted_threads([(hammer_client, (base, paths, stop))] * clients, out)


def hammered_wave(base: str, tables: int, clients: int, paths: list[str]) -> dict:
    """The --tables wave quiet, then again under `clients` hammering clients."""
    quiet = load_figures(*_wave(base, tables))
    ctx = multiprocessing.get_context("fork")
    stop, out = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=hammer_process, args=(base, paths, clients, stop, out))
    proc.start()
    time.sleep(1.0)  # the hammer under way before the tables start
    start = time.perf_counter()
    try:
        hammered = load_figures(*_wave(base, tables))
    finally:
        stop.set()
        counts = out.get(timeout=120)
        proc.join(timeout=60)
    seconds = time.perf_counter() - start + 1.0
    return {"tables": tables, "hammer_clients": clients, "routes": paths, "quiet": quiet,
            "hammered": hammered, "hammer_requests": counts,
            "hammer_requests_per_s": round(sum(counts.values()) / seconds, 1),
            "p99_hammered_over_quiet": round(hammered["latency_ms"]["p99"] /
                                             quiet["latency_ms"]["p99"], 2)}


def _wave(base: str, tables: int) -> tuple[list[float], float]:
    _, lat, wall = asyncio.run(protocol_tables(f"ws://{base}/ws", tables))
    return lat, wall


def engine_moves_per_s(games: int = 200) -> float:
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    for g in range(games):
        state = GongzhuState(seed=g)
        while not state.is_terminal():
            state.apply(int(rng.choice(state.legal_actions())))
    return 52 * games / (time.perf_counter() - start)


def stop_server(proc: subprocess.Popen) -> None:
    """Stop play.py (its threads' stacks printed if it hangs) and show its last lines."""
    stopping = time.perf_counter()
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.send_signal(6)  # with PYTHONFAULTHANDLER=1 its threads' stacks are printed
        time.sleep(2)
        print("".join(SERVER_LOG[-200:]), file=sys.stderr)
        proc.kill()
        raise
    print(f"server stopped in {time.perf_counter() - stopping:.1f} s; it printed "
          f"{len(SERVER_LOG)} lines", file=sys.stderr)
    if SERVER_LOG:
        print("".join(SERVER_LOG[-20:]), file=sys.stderr)


def machine() -> dict:
    return {"cpus": os.cpu_count(), "cores_used": sorted(os.sched_getaffinity(0)),
            "python": platform.python_version(), "platform": platform.platform()}


def attack_main(args) -> None:
    """--attack NAME: the attack's run (serve_attack.py), its figures written and printed."""
    result = {**main_attack(args, start_server, stop_server), "machine": machine(),
              "command": "python benchmarks/serve.py " + " ".join(sys.argv[1:])}
    write_json_atomic(args.json, result)
    print(json.dumps(result, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=50, help="protocol tables played at once")
    parser.add_argument("--match-tables", type=int, default=10,
                        help="Gongzhu matches of 3 hands played at once afterwards (0: none)")
    parser.add_argument("--fish-tables", type=int, default=10,
                        help="Fish tables (half 6 seats, half 8) played at once afterwards "
                             "(0: none)")
    parser.add_argument("--bot-tables", type=int, default=20,
                        help="tables of our in-process bots afterwards (0: none)")
    parser.add_argument("--hammer", type=int, default=0,
                        help="clients hammering every GET route during a second --tables wave, "
                             "measured beside a quiet one (0: no such case)")
    parser.add_argument("--json", required=True, help="where to write the figures")
    add_attack_arguments(parser)
    args = parser.parse_args()
    if args.attack:
        attack_main(args)
        return
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(os.path.join(tmp, "games.sqlite"), [])
        try:
            first_ms = first_moves_ms(base)
            matches, lat, wall = asyncio.run(protocol_tables(f"ws://{base}/ws", args.tables))
            ids = match_game_ids(base, matches)
            match_ids, match_lat, match_wall = (
                asyncio.run(protocol_tables(f"ws://{base}/ws", args.match_tables, MATCH_HANDS))
                if args.match_tables else ([], [], 0.0))
            match_games = match_game_ids(base, match_ids)
            fish_ids, fish_lat, fish_wall = (
                asyncio.run(fish_tables(f"ws://{base}/ws/fish", args.fish_tables))
                if args.fish_tables else ([], [], 0.0))
            bot_ids, bot_wall = (bot_tables(base, args.bot_tables) if args.bot_tables
                                 else ([], 0.0))
            hammer = (hammered_wave(base, args.tables, args.hammer, hammer_targets(base))
                      if args.hammer else None)
            ok = replays_ok(base, ids)
            match_ok = replays_ok(base, match_games)
            fish_ok = fish_replays_ok(base, fish_ids)
            bot_ok = replays_ok(base, bot_ids)
        finally:
            stop_server(proc)
    engine = engine_moves_per_s()
    figures = load_figures(lat, wall)
    six, eight = (args.fish_tables + 1) // 2, args.fish_tables // 2  # as fish_tables seats them
    result = {
        "tables": args.tables, "connections": 4 * args.tables, **figures,
        "replayed_to_recorded_score": ok,
        "matches": {"tables": args.match_tables, "hands": MATCH_HANDS,
                    "connections": 4 * args.match_tables, "games": len(match_games),
                    **load_figures(match_lat, match_wall),
                    "replayed_to_recorded_score": match_ok},
        "fish": {"tables": args.fish_tables, "seats": {"6": six, "8": eight},
                 "connections": 6 * six + 8 * eight,
                 **load_figures(fish_lat, fish_wall),
                 "replayed_to_recorded_score": fish_ok},
        "hammer": hammer,
        "server_settings": LOAD_SETTINGS,
        "database": "SQLite, WAL, synchronous=FULL (every move synced before it is told)",
        "first_move_ms": first_ms,
        "bot_tables": args.bot_tables, "bot_tables_wall_s": round(bot_wall, 2),
        "bot_moves_per_s": round(52 * args.bot_tables / bot_wall, 1) if bot_wall else None,
        "bot_tables_replayed_to_recorded_score": bot_ok,
        "anchor_engine_moves_per_s": round(engine, 1),
        "server_over_engine": round(len(lat) / wall / engine, 4),
        "machine": machine(),
        "command": "python benchmarks/serve.py " + " ".join(sys.argv[1:]),
    }
    write_json_atomic(args.json, result)
    print(json.dumps(result, indent=2))
    print("first move after start (ms): " + ", ".join(f"{k} {v}" for k, v in first_ms.items()),
          file=sys.stderr)  # stdout is the JSON alone
    if (ok, match_ok, fish_ok, bot_ok) != (args.tables, len(match_games), args.fish_tables,
                                           args.bot_tables):
        sys.exit("some recorded games do not replay to their recorded score")


if __name__ == "__main__":
    main()
