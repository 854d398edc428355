"""Attacks on the table server beside an honest load (`python benchmarks/serve.py --attack NAME
--json PATH`): how much an abusive client takes from the people playing, and for how long.

One run of play.py with its production limits (docs/play.md "Limits"; only seed=0 and a fresh
SQLite file are set), in phases:

1. the attack's `prepare` makes what its flood needs (from 127.0.0.1);
2. honest tables from one client address (127.0.0.2): `--honest-tables` at once, each a person-
   like outside client at seat 0 (a random legal card after `--think-s`) against three
   ScrofaZero bots, a new table as each hand ends; and a watcher socket that pings every 0.1 s;
3. quiet (`--quiet-s`): the honest load alone; attack (`--attack-s`): the same while the flood
   runs from `--attackers` other addresses (127.0.1.1, 127.0.1.2, ...: Linux routes all of
   127.0.0.0/8 to loopback), `--connections` each, one request after another on each as fast
   as the server answers, in a process of its own;
4. after: the flood stops and the honest client makes no more tables (those in play end their
   hand); how long until the server is idle (under 10 % of a core over a second), at most
   `--settle-max-s`.

The server tells clients apart by the connection's peer address alone (uvicorn trusts an
X-Forwarded-For header only from 127.0.0.1, which no client here sends from), so each source
address is a client of its own. Figures per phase: honest moves/s (every move at the honest
tables), the latency of the honest moves (sending `play` to its `played` echo) and of the pings,
ScrofaZero's waits (from the honest move's echo to the next bot's move), the server's CPU
(cores, /proc/PID/stat) and resident memory (VmRSS, its most); the ratios attack/quiet; the
flood's answers by HTTP status.

An attack is an `Attack` in ATTACKS: `prepare(base) -> target` runs once before the honest load
(base: "HOST:PORT"; target: anything picklable), and `flood(base, source, target, stop, counts)`
runs in a thread per connection of each attacking address until the multiprocessing Event
`stop` is set, sending
from `source` (an address to bind, see `Connection`) and adding each answer to `counts` (HTTP
status as text, or "failed" -> how many).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.client import HTTPConnection, HTTPException

import numpy as np
import websockets
from serve_attacks_tables import (  # beside this script: the attacks on the tables
    TABLES_PER_ADDRESS,
    flood_create,
    flood_one_open_seat,
    prepare_nothing,
)

HONEST = "127.0.0.2"  # the honest client's address
SETUP = "127.0.0.1"  # what the attacks' prepare sends from
IDLE_CORES = 0.1  # the server is idle under this much CPU over a second
SAMPLE_S = 0.25  # how often the server's CPU and memory are read
REVIEW_HANDS = 100  # hands of the finished match whose seats `reviews` asks reviews of
LIVE_HANDS = 10  # hands of the live match played before `live-replays` floods its replays


def attacker(i: int) -> str:
    """The address of the i-th attacker (0-based): 127.0.1.1, ..., 127.0.1.254, 127.0.2.1..."""
    return f"127.0.{1 + i // 254}.{1 + i % 254}"


class Connection:
    """A keep-alive HTTP connection from `source`: `get(path)` -> (status, body), reconnecting
    when the server closed it; a failure is status 0."""

    def __init__(self, base: str, source: str):
        host, port = base.rsplit(":", 1)
        self.args = (host, int(port))
        self.source = source
        self.conn: HTTPConnection | None = None

    def get(self, path: str) -> tuple[int, bytes]:
        if self.conn is None:
            self.conn = HTTPConnection(*self.args, timeout=60, source_address=(self.source, 0))
        try:
            self.conn.request("GET", path)
            resp = self.conn.getresponse()
            body = resp.read()
            if resp.getheader("connection", "").lower() == "close":
                self.close()
            return resp.status, body
        except (OSError, HTTPException):
            self.close()
            return 0, b""

    def post(self, path: str, body: dict) -> dict:
        host, port = self.args
        conn = HTTPConnection(host, port, timeout=60, source_address=(self.source, 0))
        try:
            conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            resp = conn.getresponse()
            answer = json.loads(resp.read())
            if resp.status != 200:
                raise RuntimeError(f"POST {path}: {resp.status} {answer}")
            return answer
        finally:
            conn.close()

    def json(self, path: str):
        status, body = self.get(path)
        return status, json.loads(body) if status else None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def count(counts: dict, status: int) -> None:
    key = str(status) if status else "failed"
    counts[key] = counts.get(key, 0) + 1


def flood_paths(base: str, source: str, paths: list[str], stop, counts: dict) -> None:
    """Ask every path in turn, in an order of this address's own, until `stop`."""
    paths = list(paths)
    random.Random(source).shuffle(paths)
    conn = Connection(base, source)
    i = 0
    while not stop.is_set():
        status, _ = conn.get(paths[i % len(paths)])
        count(counts, status)
        if status == 0:
            time.sleep(0.05)  # refused or reset: a moment before the next
        i += 1
    conn.close()


def wait_until(check: Callable[[], bool], what: str, timeout_s: float = 600.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"gave up waiting for {what}")
        time.sleep(0.2)


# --- the attacks ----------------------------------------------------------------------------
def prepare_reviews(base: str) -> dict:
    """A finished match of REVIEW_HANDS hands of four Mr. Randoms: its games and its id."""
    conn = Connection(base, SETUP)
    made = conn.post("/api/tables", {"type": "create", "seats": ["random"] * 4,
                                     "hands": REVIEW_HANDS})
    wait_until(lambda: conn.get(f"/api/games/{made['game_id']}")[0] == 200, "the first hand")
    match_id = conn.json(f"/api/games/{made['game_id']}")[1]["match_id"]
    wait_until(lambda: conn.json(f"/api/matches/{match_id}")[1]["status"] == "finished",
               "the match to finish")
    games = [g["id"] for g in conn.json(f"/api/matches/{match_id}")[1]["games"]]
    conn.close()
    return {"match": match_id, "games": games}


def flood_reviews(base: str, source: str, target: dict, stop, counts: dict) -> None:
    """Reviews of every seat of every hand of the finished match, and of the whole match for
    each seat, in this address's own order."""
    paths = [f"/api/games/{g}/review?seat={s}" for g in target["games"] for s in range(4)]
    paths += [f"/api/matches/{target['match']}/review?seat={s}" for s in range(4)]
    flood_paths(base, source, paths, stop, counts)


class LiveSeat:
    """Seat 0 of a match of 100 hands against three Mr. Randoms, played (random legal cards,
    `next` at once) for `hands` hands, then held without a word: the match stays in play (the
    next hand starts after next_hand_s, and each of this seat's moves waits for its
    move_deadline_s), its first hands finished. Its socket is read in a thread of its own for
    the whole run."""

    def __init__(self, base: str, hands: int):
        conn = Connection(base, SETUP)
        self.made = conn.post("/api/tables", {"type": "create", "hands": 100,
                                              "seats": ["open", "random", "random", "random"]})
        self.base, self.hands = base, hands
        self.finished = threading.Event()
        threading.Thread(target=lambda: asyncio.run(self.play()), daemon=True).start()

    async def play(self) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):  # the server stopped
            await self.hold()

    async def hold(self) -> None:
        rng = random.Random(0)
        async with websockets.connect(f"ws://{self.base}/ws", max_queue=None,
                                      local_addr=(SETUP, 0)) as ws:
            await ws.send(json.dumps({"type": "join", "table": self.made["table"], "seat": 0,
                                      "token": self.made["tokens"]["0"]}))
            played = 0
            async for frame in ws:
                msg = json.loads(frame)
                if played >= self.hands:
                    continue  # held: read, never answered
                if msg["type"] == "your_turn":
                    await ws.send(json.dumps({"type": "play", "ply": msg["ply"],
                                              "card": rng.choice(msg["legal"])}))
                elif msg["type"] == "hand_over":
                    played += 1
                    if played < self.hands:
                        await ws.send(json.dumps({"type": "next"}))
                    else:
                        self.finished.set()


def prepare_live_replays(base: str) -> dict:
    """A match in play with LIVE_HANDS finished hands: its id and those hands' games."""
    seat = LiveSeat(base, LIVE_HANDS)
    wait_until(seat.finished.is_set, "the live match's first hands")
    conn = Connection(base, SETUP)
    match_id = conn.json(f"/api/games/{seat.made['game_id']}")[1]["match_id"]
    match = conn.json(f"/api/matches/{match_id}")[1]
    conn.close()
    games = [g["id"] for g in match["games"] if g["status"] == "finished"]
    return {"match": match_id, "games": games, "status": match["status"]}


def flood_live_replays(base: str, source: str, target: dict, stop, counts: dict) -> None:
    """The live match's replay, and each of its finished hands' replays, in turn."""
    paths = [f"/api/matches/{target['match']}/replay"]
    paths += [f"/api/games/{g}/replay" for g in target["games"]]
    flood_paths(base, source, paths, stop, counts)


def prepare_none(_base: str) -> dict:
    return {}


def flood_options(base: str, source: str, _target: dict, stop, counts: dict) -> None:
    """GET /api/options, the cheapest JSON answer: the cost of the requests alone."""
    flood_paths(base, source, ["/api/options"], stop, counts)


@dataclass(frozen=True)
class Attack:
    prepare: Callable[[str], object]  # base -> target (picklable), before the honest load
    flood: Callable  # (base, source, target, stop, counts): one address, until stop
    addresses: int  # attacking addresses unless --attackers says otherwise
    about: str


ATTACKS: dict[str, Attack] = {
    "reviews": Attack(prepare_reviews, flood_reviews, 20,
                      f"reviews of every seat of a finished {REVIEW_HANDS}-hand match, and of "
                      "the match, asked as fast as the server answers"),
    "live-replays": Attack(prepare_live_replays, flood_live_replays, 1,
                           f"the replays of a match in play and of its {LIVE_HANDS} finished "
                           "hands, asked as fast as the server answers"),
    "options": Attack(prepare_none, flood_options, 20,
                      "GET /api/options as fast as the server answers: the baseline, what "
                      "requests cost whatever they ask"),
    "one-open-seat": Attack(prepare_nothing, flood_one_open_seat, 1,
                            f"{TABLES_PER_ADDRESS} tables [open, scrofazero x3] of 100 hands per "
                            "address, the open seat played at once"),
    "create-flood": Attack(prepare_nothing, flood_create, 26,
                           "empty waiting tables created as fast as allowed; a newcomer from a "
                           "fresh address tries to make and sit at a table every few seconds"),
}


def counted_threads(jobs: list[tuple[Callable, tuple]], out) -> None:
    """Each job (function, arguments) in a thread of its own, called with its arguments and a
    dict it counts its answers in; the counts summed over the jobs go to `out` (a queue)."""
    counts: list[dict] = [{} for _ in jobs]
    threads = [threading.Thread(target=f, args=(*args, counts[i]))
               for i, (f, args) in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + v
    out.put(total)


def flood_process(name: str, base: str, target, sources: list[str], stop, out) -> None:
    """The flood of every attacking connection (`sources`: an address per connection), a
    thread each, in this (separate) process; the answers' counts go to `out`."""
    counted_threads([(ATTACKS[name].flood, (base, source, target, stop)) for source in sources],
                    out)


# --- the honest load ------------------------------------------------------------------------
class Honest:
    """The honest client (module docstring, step 2). Every event is stamped with
    time.monotonic(): `moves` (every move at its tables), `latency` (its own moves: (t, s)),
    `waits` (ScrofaZero's: (t, s)), `pings` ((t, s)); `stop()` makes no more tables."""

    def __init__(self, base: str, tables: int, think_s: float):
        self.base, self.tables, self.think_s = base, tables, think_s
        self.moves: list[float] = []
        self.latency: list[tuple[float, float]] = []
        self.waits: list[tuple[float, float]] = []
        self.pings: list[tuple[float, float]] = []
        self.hands = 0
        self.errors: list[str] = []
        self.stopping = threading.Event()
        self.done = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self.run()), daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()

    async def run(self) -> None:
        try:
            pinger = asyncio.ensure_future(self.ping())
            await asyncio.gather(*(self.table_loop(i) for i in range(self.tables)))
            pinger.cancel()
        except Exception as err:  # noqa: BLE001  (said in the figures)
            self.errors.append(f"{type(err).__name__}: {err}")
        finally:
            self.done.set()

    def connect(self):
        return websockets.connect(f"ws://{self.base}/ws", max_queue=None,
                                  local_addr=(HONEST, 0))

    async def ping(self) -> None:
        async with self.connect() as ws:
            while True:
                sent = time.monotonic()
                await ws.send(json.dumps({"type": "ping"}))
                while json.loads(await ws.recv())["type"] != "pong":
                    pass
                now = time.monotonic()
                self.pings.append((now, now - sent))
                await asyncio.sleep(0.1)

    async def table_loop(self, i: int) -> None:
        rng = random.Random(i)
        while not self.stopping.is_set():
            async with self.connect() as ws:
                await ws.send(json.dumps({"type": "create",
                                          "seats": ["open"] + ["scrofazero"] * 3}))
                made = json.loads(await ws.recv())
                if made["type"] != "created":
                    raise RuntimeError(f"an honest table was refused: {made}")
                await ws.send(json.dumps({"type": "join", "table": made["table"], "seat": 0,
                                          "token": made["tokens"]["0"]}))
                await self.play_hand(ws, rng)
            self.hands += 1

    async def play_hand(self, ws, rng: random.Random) -> None:
        sent = mine = None  # when our play was sent; when its echo came
        async for frame in ws:
            msg = json.loads(frame)
            kind, now = msg["type"], time.monotonic()
            if kind == "your_turn":
                await asyncio.sleep(self.think_s)
                sent = time.monotonic()
                await ws.send(json.dumps({"type": "play", "ply": msg["ply"],
                                          "card": rng.choice(msg["legal"])}))
            elif kind == "played":
                self.moves.append(now)
                if msg["seat"] == 0 and sent is not None:
                    self.latency.append((now, now - sent))
                    sent, mine = None, now
                elif mine is not None:
                    self.waits.append((now, now - mine))
                    mine = None
                else:
                    mine = None
            elif kind == "error":
                raise RuntimeError(f"an honest table: {msg}")
            elif kind in ("game_over", "match_over"):
                return


# --- the server's process -------------------------------------------------------------------
class ProcessWatch:
    """The server's CPU seconds and resident memory, read every SAMPLE_S: `samples` of (t,
    cpu_s, rss_mb)."""

    def __init__(self, pid: int):
        self.pid = pid
        self.tick = os.sysconf("SC_CLK_TCK")
        self.samples: list[tuple[float, float, float]] = []
        self.stopping = threading.Event()
        threading.Thread(target=self.run, daemon=True).start()

    def read(self) -> tuple[float, float, float] | None:
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{self.pid}/status") as f:
                rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            return None
        cpu = (int(fields[11]) + int(fields[12])) / self.tick  # utime, stime (fields 14, 15)
        return time.monotonic(), cpu, rss / 1024

    def run(self) -> None:
        while not self.stopping.is_set():
            sample = self.read()
            if sample is not None:
                self.samples.append(sample)
            time.sleep(SAMPLE_S)

    def window(self, start: float, end: float) -> dict:
        """The server's mean CPU (cores) and most memory (MB) between two times."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2:
            return {"cpu_cores": None, "rss_mb_max": None}
        (t0, c0, _), (t1, c1, _) = inside[0], inside[-1]
        return {"cpu_cores": round((c1 - c0) / (t1 - t0), 3),
                "rss_mb_max": round(max(s[2] for s in inside), 1)}

    def idle_since(self, start: float) -> float | None:
        """The first time from `start` on after which the server used under IDLE_CORES over a
        second, or None so far."""
        inside = [s for s in self.samples if s[0] >= start]
        for i, (t0, c0, _) in enumerate(inside):
            later = [s for s in inside[i:] if s[0] >= t0 + 1.0]
            if later and (later[0][1] - c0) / (later[0][0] - t0) < IDLE_CORES:
                return t0
        return None


def percentile(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)) * 1000, 1) if values else None


def phase(honest: Honest, watch: ProcessWatch, start: float, end: float) -> dict:
    """The figures of one phase, [start, end] (monotonic seconds)."""
    def inside(pairs):
        return [v for t, v in pairs if start <= t <= end]

    latency, waits, pings = inside(honest.latency), inside(honest.waits), inside(honest.pings)
    moves = sum(1 for t in honest.moves if start <= t <= end)
    return {"seconds": round(end - start, 1), "honest_moves": moves,
            "honest_moves_per_s": round(moves / (end - start), 2),
            "move_latency_ms": {"p50": percentile(latency, 50), "p99": percentile(latency, 99)},
            "ping_ms": {"p50": percentile(pings, 50), "p99": percentile(pings, 99)},
            "scrofazero_wait_ms": {
                "mean": round(float(np.mean(waits)) * 1000, 1) if waits else None,
                "p99": percentile(waits, 99)},
            **watch.window(start, end)}


def ratio(attack, quiet) -> float | None:
    return round(attack / quiet, 2) if attack is not None and quiet else None


def ratios(quiet: dict, attack: dict) -> dict:
    return {"honest_moves_per_s": ratio(attack["honest_moves_per_s"],
                                        quiet["honest_moves_per_s"]),
            "move_latency_p99": ratio(attack["move_latency_ms"]["p99"],
                                      quiet["move_latency_ms"]["p99"]),
            "ping_p99": ratio(attack["ping_ms"]["p99"], quiet["ping_ms"]["p99"]),
            "scrofazero_wait_mean": ratio(attack["scrofazero_wait_ms"]["mean"],
                                          quiet["scrofazero_wait_ms"]["mean"]),
            "cpu_cores": ratio(attack["cpu_cores"], quiet["cpu_cores"]),
            "rss_mb_max": ratio(attack["rss_mb_max"], quiet["rss_mb_max"])}


def run_attack(name: str, base: str, pid: int, args) -> dict:
    """The phases of the module docstring against the server at `base` (process `pid`)."""
    attack = ATTACKS[name]
    watch = ProcessWatch(pid)
    started = time.monotonic()
    target = attack.prepare(base)
    prepared_s = time.monotonic() - started
    honest = Honest(base, args.honest_tables, args.think_s)
    honest.start()
    time.sleep(args.warmup_s)  # the first tables under way
    quiet_start = time.monotonic()
    time.sleep(args.quiet_s)
    quiet_end = time.monotonic()
    addresses = args.attackers or attack.addresses
    ctx = multiprocessing.get_context("fork")
    stop, out = ctx.Event(), ctx.Queue()
    sources = [attacker(i) for i in range(addresses) for _ in range(args.connections)]
    flood = ctx.Process(target=flood_process, args=(name, base, target, sources, stop, out))
    flood.start()
    time.sleep(args.attack_s)
    attack_end = time.monotonic()
    stop.set()
    honest.stop()
    counts = out.get(timeout=120)
    flood.join(timeout=60)
    stopped = time.monotonic()
    honest.done.wait(timeout=args.settle_max_s)
    honest_done = time.monotonic()
    while (idle := watch.idle_since(honest_done)) is None and \
            time.monotonic() - stopped < args.settle_max_s:
        time.sleep(0.5)
    after_end = time.monotonic()
    watch.stopping.set()
    quiet = phase(honest, watch, quiet_start, quiet_end)
    attacked = phase(honest, watch, quiet_end, attack_end)
    if honest.errors:
        raise RuntimeError(f"the honest client failed: {honest.errors[0]}")
    return {
        "attack": name, "about": attack.about, "attackers": addresses,
        "connections_per_attacker": args.connections, "play_settings": args.play,
        "attacker_addresses": f"{attacker(0)}..{attacker(addresses - 1)}",
        "honest_address": HONEST, "honest_tables": args.honest_tables,
        "think_s": args.think_s, "prepared_s": round(prepared_s, 1),
        "target": {k: (v if not isinstance(v, list) else len(v)) for k, v in target.items()},
        "quiet": quiet, "attack_phase": attacked, "attack_over_quiet": ratios(quiet, attacked),
        "flood_answers": counts,
        "flood_requests_per_s": round(sum(counts.values()) / (attack_end - quiet_end), 1),
        "after": {"honest_wind_down_s": round(honest_done - stopped, 1),
                  "idle_after_s": round(idle - stopped, 1) if idle is not None else None,
                  "gave_up_after_s": None if idle is not None else args.settle_max_s,
                  **watch.window(stopped, after_end)},
        "honest_hands": honest.hands,
    }


def add_arguments(parser) -> None:
    parser.add_argument("--attack", choices=sorted(ATTACKS),
                        help="run this attack beside an honest load instead of the waves "
                             "(benchmarks/serve_attack.py)")
    parser.add_argument("--attackers", type=int, default=0,
                        help="attacking addresses (0: the attack's own default)")
    parser.add_argument("--connections", type=int, default=3,
                        help="connections of each attacking address (the server rates each "
                             "connection, then each address)")
    parser.add_argument("--honest-tables", type=int, default=2,
                        help="honest tables played at once during --attack")
    parser.add_argument("--think-s", type=float, default=0.3,
                        help="the honest person's time for each move")
    parser.add_argument("--warmup-s", type=float, default=3.0,
                        help="honest play before the quiet phase is measured")
    parser.add_argument("--quiet-s", type=float, default=25.0, help="the quiet phase")
    parser.add_argument("--attack-s", type=float, default=25.0, help="the attack phase")
    parser.add_argument("--settle-max-s", type=float, default=120.0,
                        help="the longest wait for the server to be idle after the flood")
    parser.add_argument("--play", action="append", default=[], metavar="KEY=VALUE",
                        help="a play.py setting of the attacked server (repeatable; default: "
                             "its production settings)")


def summary(result: dict) -> str:
    """The run's figures in a few lines."""
    q, a, r = result["quiet"], result["attack_phase"], result["attack_over_quiet"]
    after = result["after"]
    idle = (f"{after['idle_after_s']} s" if after["idle_after_s"] is not None
            else f"not within {after['gave_up_after_s']:g} s")
    rows = [("honest moves/s", q["honest_moves_per_s"], a["honest_moves_per_s"],
             r["honest_moves_per_s"]),
            ("move latency p99 (ms)", q["move_latency_ms"]["p99"], a["move_latency_ms"]["p99"],
             r["move_latency_p99"]),
            ("ping p99 (ms)", q["ping_ms"]["p99"], a["ping_ms"]["p99"], r["ping_p99"]),
            ("ScrofaZero's wait, mean (ms)", q["scrofazero_wait_ms"]["mean"],
             a["scrofazero_wait_ms"]["mean"], r["scrofazero_wait_mean"]),
            ("server CPU (cores)", q["cpu_cores"], a["cpu_cores"], r["cpu_cores"]),
            ("server memory, most (MB)", q["rss_mb_max"], a["rss_mb_max"], r["rss_mb_max"])]
    lines = [f"attack {result['attack']} from {result['attackers']} addresses, "
             f"{result['connections_per_attacker']} connections each: "
             f"{result['flood_requests_per_s']} requests/s, answers {result['flood_answers']}",
             f"{'':30} {'quiet':>10} {'attack':>10} {'ratio':>7}"]
    lines += [f"{name:30} {str(qv):>10} {str(av):>10} {str(rv):>7}" for name, qv, av, rv in rows]
    lines.append(f"after the flood: idle (CPU < {IDLE_CORES:g} core) after {idle}; honest "
                 f"tables ended their hand in {after['honest_wind_down_s']} s; memory then "
                 f"{after['rss_mb_max']} MB at most")
    return "\n".join(lines)


def main_attack(args, start_server, stop_server) -> dict:
    """benchmarks/serve.py --attack: the run, its figures printed (stderr) and returned."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(os.path.join(tmp, "games.sqlite"), args.play, limits=[])
        try:
            result = run_attack(args.attack, base, proc.pid, args)
        finally:
            stop_server(proc)
    print(summary(result), file=sys.stderr)
    return result
