"""The attacks on the server's tables of `benchmarks/serve.py --attack NAME` (issue 49 items 3
and 6), registered in serve_attack.py's ATTACKS and measured there beside its honest load.

- `one-open-seat`: each attacking address makes TABLES_PER_ADDRESS tables [open, scrofazero,
  scrofazero, scrofazero] of 100 hands and plays their open seats at once, so each of them always
  has a ScrofaZero decision waiting (the harness measures ScrofaZero's waits at the honest
  tables beside it). Counts: `table` made, `refused`, `move` (the attacker's moves).
- `create-flood`: each attacking address creates empty waiting tables (four open seats) over
  HTTP as fast as the server allows (after a refusal, again a second later, as `Retry-After`
  says). Counts: the answers' HTTP statuses. The thread of the first attacking address
  (127.0.1.1) also probes, every PROBE_S, whether a newcomer from a fresh address (127.0.200.x)
  can create a table and sit at it: `newcomer_seated` or `newcomer_refused`.

Each flood is `flood(base, source, target, stop, counts)` as serve_attack.py's Attack wants: one
attacking address `source` ("127.0.1.N", bound as the connections' source), until the
multiprocessing Event `stop` is set, each answer counted in `counts`; `prepare` makes nothing.
"""

from __future__ import annotations

import asyncio
import json
import time
from http.client import HTTPConnection, HTTPException

import websockets

TABLES_PER_ADDRESS = 20  # one-open-seat's tables per address (max_bot_tables_per_client's default)
VS_SCROFAZERO = ["open", "scrofazero", "scrofazero", "scrofazero"]
PROBE_S = 3.0  # create-flood: a newcomer tries this often
PROBER = "127.0.1.1"  # the attacking address whose thread also probes (serve_attack.attacker(0))


def prepare_nothing(_base: str) -> dict:
    return {}


def add(counts: dict, key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


# --- one open seat ------------------------------------------------------------------------------
async def _instant_seat(base: str, source: str, stop, counts: dict) -> None:
    """One attacking table: made, its open seat joined on the same socket and played at once
    (`next` after each hand) until `stop`."""
    async with websockets.connect(f"ws://{base}/ws", local_addr=(source, 0),
                                  max_queue=None) as ws:
        await ws.send(json.dumps({"type": "create", "seats": VS_SCROFAZERO, "hands": 100}))
        made = json.loads(await ws.recv())
        if made["type"] != "created":
            add(counts, "refused")
            return
        add(counts, "table")
        await ws.send(json.dumps({"type": "join", "table": made["table"], "seat": 0,
                                  "token": made["tokens"]["0"]}))
        while not stop.is_set():
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 0.5))
            except asyncio.TimeoutError:
                continue
            if msg["type"] == "your_turn":
                add(counts, "move")
                await ws.send(json.dumps({"type": "play", "card": msg["legal"][0],
                                          "ply": msg["ply"]}))
            elif msg["type"] == "hand_over":
                await ws.send(json.dumps({"type": "next"}))
            elif msg["type"] == "match_over":
                return


def flood_one_open_seat(base: str, source: str, _target, stop, counts: dict) -> None:
    async def tables():
        await asyncio.gather(*(_instant_seat(base, source, stop, counts)
                               for _ in range(TABLES_PER_ADDRESS)), return_exceptions=True)

    asyncio.run(tables())


# --- create flood -------------------------------------------------------------------------------
def post(conn: HTTPConnection, path: str, body: dict) -> tuple[int, dict | None]:
    """(status, answer) of a POST on `conn`; (0, None) when the connection failed."""
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    except (OSError, HTTPException, ValueError):
        conn.close()
        return 0, None


def newcomer(base: str, source: str) -> bool:
    """Whether a person from `source` can create a table [open, random x3] and sit at it."""
    host, port = base.rsplit(":", 1)
    conn = HTTPConnection(host, int(port), timeout=60, source_address=(source, 0))
    status, made = post(conn, "/api/tables", {"type": "create",
                                              "seats": ["open", "random", "random", "random"]})
    conn.close()
    if status != 200:
        return False

    async def sit() -> bool:
        async with websockets.connect(f"ws://{base}/ws", local_addr=(source, 0)) as ws:
            await ws.send(json.dumps({"type": "join", "table": made["table"], "seat": 0,
                                      "token": made["tokens"]["0"]}))
            return json.loads(await asyncio.wait_for(ws.recv(), 30))["type"] == "welcome"

    return asyncio.run(sit())


def flood_create(base: str, source: str, _target, stop, counts: dict) -> None:
    host, port = base.rsplit(":", 1)
    conn = HTTPConnection(host, int(port), timeout=60, source_address=(source, 0))
    probes, next_probe = 0, time.monotonic() + PROBE_S
    while not stop.is_set():
        status, _ = post(conn, "/api/tables", {"type": "create", "seats": ["open"] * 4})
        add(counts, str(status) if status else "failed")
        if status != 200:
            stop.wait(1.0)
        if source == PROBER and time.monotonic() >= next_probe:
            probes += 1
            seated = newcomer(base, f"127.0.200.{probes % 250 + 1}")
            add(counts, "newcomer_seated" if seated else "newcomer_refused")
            next_probe = time.monotonic() + PROBE_S
    conn.close()
