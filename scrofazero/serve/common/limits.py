"""What one client may take of the server, and reads of the records off the event loop.

Every limit is a setting of the play config (config.py, docs/play.md "Limits") and is counted
per client address (the peer address of the connection: behind a reverse proxy every client
is the proxy, so set the limits for all of them together there):

- rates (`Rate`, a generic cell rate algorithm: `per_s` on average, `burst` at once): tables and
  matches created (`table_creates_per_minute`, refused past it), HTTP requests
  (`client_requests_per_s`: a request past it waits its turn, up to REQUEST_WAIT_S, else is
  refused with 429) and WebSocket frames (`client_frames_per_s`: a socket past it is read no
  faster; it is told once, with a `limit` notice);
- tables: waiting tables per client and in all (`max_waiting_tables_per_client`,
  `max_waiting_tables`) and tables of bots only playing at once (`max_bot_matches`), whose
  bots think in threads of their own (`bot_match_threads`) so they never take the threads of
  tables with people.

A refusal is the protocol's `limit` error, its message naming the setting. `Reader` runs the
records' reads, replays and exports in at most `read_threads` worker threads, the answer turned
into JSON there, and keeps the answers that can no longer change (finished games and matches)
in a cache of `read_cache_mb`; the event loop only hands the bytes over.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

import anyio

REQUEST_WAIT_S = 1.0  # an HTTP request past the client's rate waits at most this long
MAX_TRACKED = 10_000  # client addresses whose rates are kept before the idle ones are dropped


class Rate:
    """`per_s` events per second on average and `burst` at once, per key (a client address):
    `wait(key)` books the next event and says how long it must wait (0: now), or returns None,
    booking nothing, when that would be over `max_wait_s`."""

    def __init__(self, per_s: float, burst: float, max_wait_s: float = 0.0):
        self.interval = 1.0 / per_s
        self.tolerance = max(burst - 1, 0) * self.interval
        self.max_wait_s = max_wait_s
        self._due: dict[str, float] = {}  # key -> when its next event would be on schedule

    def wait(self, key: str, now: float | None = None) -> float | None:
        now = time.monotonic() if now is None else now
        due = max(self._due.get(key, now), now)
        wait = due - now - self.tolerance
        if wait > self.max_wait_s:
            return None
        if len(self._due) >= MAX_TRACKED and key not in self._due:
            self._forget_idle(now)
        self._due[key] = due + self.interval
        return max(wait, 0.0)

    def _forget_idle(self, now: float) -> None:
        for key in [k for k, due in self._due.items() if due <= now]:
            del self._due[key]


class Limits:
    """The limits of one server (both games' hubs share it); `settings` is the PlayConfig."""

    def __init__(self, settings):
        self.settings = settings
        self.creates = Rate(settings.table_creates_per_minute / 60,
                            settings.table_creates_per_minute)
        self.requests = Rate(settings.client_requests_per_s, settings.client_requests_per_s,
                             REQUEST_WAIT_S)
        self.frames = Rate(settings.client_frames_per_s, settings.client_frames_per_s,
                           float("inf"))
        self.hubs: list = []  # every hub whose tables count against the table limits

    def tables(self) -> Iterable:
        return (t for hub in self.hubs for t in hub.tables.values())

    def admit_table(self, address: str | None, bots_only: bool) -> str | None:
        """Why a new table from `address` is refused (the `limit` message), else None; a
        table admitted counts against the creation rate."""
        cfg = self.settings
        if bots_only:
            playing = sum(1 for t in self.tables() if t.bots_only and t.live)
            if playing >= cfg.max_bot_matches:
                return (f"{playing} tables of bots only are being played, the most at once "
                        f"(max_bot_matches={cfg.max_bot_matches}): try again when one ends")
        waiting = [t for t in self.tables() if t.status == "waiting"]
        if len(waiting) >= cfg.max_waiting_tables:
            return (f"the server has {len(waiting)} tables waiting for players, its most "
                    f"(max_waiting_tables={cfg.max_waiting_tables}): join one or try later")
        if address is not None:
            mine = sum(1 for t in waiting if t.creator == address)
            if mine >= cfg.max_waiting_tables_per_client:
                return (f"{address} has {mine} tables waiting for players, the most a client "
                        f"may have (max_waiting_tables_per_client="
                        f"{cfg.max_waiting_tables_per_client}): start or let expire one first")
            if self.creates.wait(address) is None:
                return (f"{address} creates tables too fast: table_creates_per_minute is "
                        f"{cfg.table_creates_per_minute:g}; try again in a few seconds")
        return None


def json_bytes(data) -> bytes:
    """`data` as the JSON FastAPI would send (compact, no NaN)."""
    return json.dumps(data, ensure_ascii=False, allow_nan=False,
                      separators=(",", ":")).encode()


class Reader:
    """Reads of the records off the event loop (see the module docstring). `answer(key,
    compute)` runs `compute()` -> (bytes, final) in a worker thread, at most `threads` at once;
    a final answer is cached under `key`, and asks for a key already being computed share that
    computation (five asks for one long replay cost one)."""

    def __init__(self, threads: int, cache_bytes: int):
        self.limiter = anyio.CapacityLimiter(threads)
        self.cache_bytes = cache_bytes
        self._cache: OrderedDict[object, bytes] = OrderedDict()
        self._cached = 0
        self._running: dict[object, asyncio.Future] = {}

    async def run(self, compute: Callable, *args):
        """`compute(*args)` in a worker thread under the limit (nothing cached)."""
        return await anyio.to_thread.run_sync(compute, *args, limiter=self.limiter)

    async def answer(self, key, compute: Callable[[], tuple[bytes, bool]]) -> bytes:
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        running = self._running.get(key)
        if running is not None:
            return await asyncio.shield(running)
        future = asyncio.get_running_loop().create_future()
        self._running[key] = future
        try:
            body, final = await self.run(compute)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as err:
            future.set_exception(err)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            del self._running[key]
        if final:
            self._keep(key, body)
        future.set_result(body)
        return body

    def _keep(self, key, body: bytes) -> None:
        if len(body) > self.cache_bytes // 4:
            return  # one answer never crowds out the rest
        self._cache[key] = body
        self._cached += len(body)
        while self._cached > self.cache_bytes:
            _, dropped = self._cache.popitem(last=False)
            self._cached -= len(dropped)
