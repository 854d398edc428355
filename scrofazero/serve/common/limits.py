"""What one client may take of the server, and reads of the records off the event loop.

Every limit is a setting of the play config (config.py, docs/play.md "Limits"). Rates are counted
per connection first (an HTTP connection, a WebSocket) and per client address only as a wide
backstop, shared fairly (`SharedRate`): many people behind one address (a NAT, a campus) each
keep their own pace, and a flood from that address slows the flooding connections, not the
quiet ones beside them. Behind a reverse proxy every client is the proxy's address, so raise
the address limits there:

- rates (`Rate`, a generic cell rate algorithm: `per_s` on average, `burst` at once): tables and
  matches created (`table_creates_per_minute`, per address, refused past it), HTTP requests
  (`connection_requests_per_s` per connection, `client_requests_per_s` per address: a request
  past them waits its turn, up to REQUEST_WAIT_S, else is refused with 429) and WebSocket
  frames (`socket_frames_per_s` per socket, `client_frames_per_s` per address: a socket past
  them is read no faster; it is told once, with a `limit` notice);
- tables: waiting tables per client and in all (`max_waiting_tables_per_client`,
  `max_waiting_tables`; when the server is full, a newcomer's table takes the place of the
  oldest waiting table of the address that holds the most, `Limits.make_room`, and a waiting
  table nobody sits at expires after `empty_table_expire_s`, client_hub.py), tables with our
  bots one client has in play (`max_bot_tables_per_client`) and tables of bots only playing at
  once (`max_bot_matches`), whose bots think in threads of their own (`bot_match_threads`) so
  they never take the threads of tables with people.

A refusal is the protocol's `limit` error, its message naming the setting. `Reader` runs the
records' reads, replays and exports in at most `read_threads` worker threads, the answer turned
into JSON there, and keeps the answers that can no longer change (finished games and matches)
in a cache of `read_cache_mb`; the event loop only hands the bytes over.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterable

import anyio

from scrofazero.serve.common.messages import OPEN

REQUEST_WAIT_S = 1.0  # an HTTP request past the client's rate waits at most this long
MAX_TRACKED = 10_000  # client addresses whose rates are kept before the idle ones are dropped
RECENT_S = 1.0  # a connection's recent events (SharedRate) decay with this time constant


class Rate:
    """`per_s` events per second on average and `burst` at once, per key (a client address):
    `wait(key)` books the next event and says how long it must wait (0: now), or returns None,
    booking nothing, when that would be over `max_wait_s`."""

    def __init__(self, per_s: float, burst: float, max_wait_s: float = 0.0):
        self.interval = 1.0 / per_s
        self.tolerance = max(burst - 1, 0) * self.interval
        self.max_wait_s = max_wait_s
        self._due: dict[Hashable, float] = {}  # key -> when its next event would be on schedule

    def wait(self, key: Hashable, now: float | None = None) -> float | None:
        now = time.monotonic() if now is None else now
        due = max(self._due.get(key, now), now)
        wait = due - now - self.tolerance
        if wait > self.max_wait_s:
            return None
        if len(self._due) >= MAX_TRACKED and key not in self._due:
            self._forget_idle(now)
        self._due[key] = due + self.interval
        return max(wait, 0.0)

    def book(self, key: Hashable, now: float | None = None) -> None:
        """Count an event that does not wait (SharedRate: a connection within its share)."""
        now = time.monotonic() if now is None else now
        if len(self._due) >= MAX_TRACKED and key not in self._due:
            self._forget_idle(now)
        self._due[key] = max(self._due.get(key, now), now) + self.interval

    def forget(self, key: Hashable) -> None:
        self._due.pop(key, None)

    def _forget_idle(self, now: float) -> None:
        for key in [k for k, due in self._due.items() if due <= now]:
            del self._due[key]


class SharedRate:
    """Events of connections behind client addresses: each connection at most `each_per_s`
    (as many at once), and each address at most `all_per_s` in all (as many at once), a wide
    backstop shared fairly. An event of a connection the address already knows (a socket from
    its opening, `open`; an HTTP connection from its first request) whose events of about the
    last RECENT_S are fewer than its fair share, all_per_s over the address's connections, is
    counted against the address but never waits on it; the others wait their turn there. A
    wait past `max_wait_s` refuses the event (None). So a flood from one address slows the
    flooding connections, while a quiet connection beside them (a person behind the same NAT)
    keeps its pace; a client that opens a fresh connection for every request is always on the
    address's budget."""

    def __init__(self, each_per_s: float, all_per_s: float, max_wait_s: float):
        self.each = Rate(each_per_s, each_per_s, max_wait_s)
        self.all = Rate(all_per_s, all_per_s, max_wait_s)
        self.all_per_s = all_per_s
        # address -> connection -> [recent events, when counted, pinned (an open socket)]
        self._recent: dict[str, dict[Hashable, list]] = {}
        self._swept: dict[str, float] = {}  # address -> when its idle connections were dropped

    def open(self, address: str, conn: Hashable) -> None:
        """A socket of `address` opened: known, and counted among its connections until it
        closes (`close`)."""
        self._recent.setdefault(address, {})[conn] = [0.0, time.monotonic(), True]

    def close(self, address: str, conn: Hashable) -> None:
        conns = self._recent.get(address, {})
        conns.pop(conn, None)
        if not conns:
            self._recent.pop(address, None)
            self._swept.pop(address, None)
        self.each.forget(conn)

    def wait(self, address: str, conn: Hashable, now: float | None = None) -> float | None:
        """Seconds the event of `conn` (from `address`) must wait (0: now), or None: refused."""
        now = time.monotonic() if now is None else now
        known, before = self._count(address, conn, now)
        own = self.each.wait(conn, now)
        if own is None:
            return None
        if known and before < self.all_per_s / len(self._recent[address]):
            self.all.book(address, now)
            return own
        shared = self.all.wait(address, now)
        return None if shared is None else max(own, shared)

    def _count(self, address: str, conn: Hashable, now: float) -> tuple[bool, float]:
        """Whether `conn` was known, and its recent events before this one (a count decaying
        with RECENT_S); this one is added."""
        if address not in self._recent and len(self._recent) >= MAX_TRACKED:
            for other in list(self._recent):
                self._sweep(other, now)
        if now - self._swept.get(address, -math.inf) > RECENT_S:
            self._sweep(address, now)  # before it is looked up: it may drop the address
        conns = self._recent.setdefault(address, {})
        entry = conns.get(conn)
        if entry is None:
            conns[conn] = [1.0, now, False]
            return False, 0.0
        before = entry[0] * math.exp(-(now - entry[1]) / RECENT_S)
        entry[0], entry[1] = before + 1, now
        return True, before

    def _sweep(self, address: str, now: float) -> None:
        """Drop the address's HTTP connections idle long enough to count for nothing."""
        self._swept[address] = now
        conns = self._recent.get(address, {})
        for conn, (level, when, pinned) in list(conns.items()):
            if not pinned and level * math.exp(-(now - when) / RECENT_S) < 0.05:
                del conns[conn]
        if not conns:
            self._recent.pop(address, None)
            self._swept.pop(address, None)


class Limits:
    """The limits of one server (both games' hubs share it); `settings` is the PlayConfig."""

    def __init__(self, settings):
        self.settings = settings
        self.creates = Rate(settings.table_creates_per_minute / 60,
                            settings.table_creates_per_minute)
        self.requests = SharedRate(settings.connection_requests_per_s,
                                   settings.client_requests_per_s, REQUEST_WAIT_S)
        self.frames = SharedRate(settings.socket_frames_per_s, settings.client_frames_per_s,
                                 float("inf"))
        self.hubs: list = []  # every hub whose tables count against the table limits
        self.pending: Counter = Counter()  # address -> tables admitted, not yet added
        self.closing: set = set()  # waiting tables being closed to make room (make_room)

    def tables(self) -> Iterable:
        return (t for hub in self.hubs for t in hub.tables.values())

    def waiting(self) -> list:
        """The tables waiting for players, less those being closed to make room."""
        return [t for t in self.tables() if t.status == "waiting" and t not in self.closing]

    def hub_of(self, table):
        return next(h for h in self.hubs if h.tables.get(table.id) is table)

    def admit_table(self, address: str | None, kinds: list[str]) -> str | None:
        """Why a new table from `address` with seats `kinds` is refused (the `limit`
        message), else None; a table admitted counts against the creation rate."""
        cfg = self.settings
        if OPEN not in kinds:
            playing = sum(1 for t in self.tables() if t.bots_only and t.live)
            if playing >= cfg.max_bot_matches:
                return (f"{playing} tables of bots only are being played, the most at once "
                        f"(max_bot_matches={cfg.max_bot_matches}): try again when one ends")
        elif address is not None and any(k != OPEN for k in kinds):
            mine = sum(1 for t in self.tables() if t.creator == address and t.live and
                       not t.bots_only and any(s.kind != OPEN for s in t.seats))
            if mine >= cfg.max_bot_tables_per_client:
                return (f"{address} has {mine} tables with our bots in play, the most a client "
                        f"may have (max_bot_tables_per_client="
                        f"{cfg.max_bot_tables_per_client}): finish one first")
        waiting = self.waiting()
        if len(waiting) + self.pending.total() >= cfg.max_waiting_tables:
            return (f"the server has {len(waiting) + self.pending.total()} tables waiting for "
                    f"players, its most (max_waiting_tables={cfg.max_waiting_tables}), and no "
                    f"client holds more of them than you: join one or try later")
        if address is not None:
            mine = sum(1 for t in waiting if t.creator == address) + self.pending[address]
            if mine >= cfg.max_waiting_tables_per_client:
                return (f"{address} has {mine} tables waiting for players, the most a client "
                        f"may have (max_waiting_tables_per_client="
                        f"{cfg.max_waiting_tables_per_client}): start or let expire one first")
            if self.creates.wait(address) is None:
                return (f"{address} creates tables too fast: table_creates_per_minute is "
                        f"{cfg.table_creates_per_minute:g}; try again in a few seconds")
        return None

    def make_room(self, address: str | None):
        """When the server's waiting tables are at max_waiting_tables: the table a new one from
        `address` takes the place of, else None. It is the oldest waiting table (one nobody
        sits at first) of the client that holds the most, when that client holds more than
        `address` would with its new table; so a newcomer always finds room, while a client
        with one waiting table never loses it to another."""
        waiting = self.waiting()
        if len(waiting) + self.pending.total() < self.settings.max_waiting_tables or \
                not waiting:
            return None
        held = Counter(t.creator for t in waiting)
        most, count = held.most_common(1)[0]
        if count <= held.get(address, 0) + 1:
            return None
        theirs = [t for t in waiting if t.creator == most]
        return min(theirs, key=lambda t: (t.occupied, theirs.index(t)))


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
