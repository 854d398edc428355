"""What the Gongzhu hub (gongzhu/hub.py, /ws) and the Fish hub (fish/hub.py, /ws/fish) share: the
one path of every client frame, the records on one database thread (the writes of the tables
that exist ahead of those making new ones: RecordsThread), the threads the bots think in (shared
fairly between the clients whose tables wait on them: thinking.py), waiting tables' expiry and
the room a newcomer's table takes, and where each connection is.

Invariants: a frame is parsed by the protocol's `parse` and handled by the one handler of its
message model; a refusal (the protocol's `error`) goes back to that connection only and changes
nothing. `where` maps a connection to the one table it is at and its seat there (None: it
watches): a connection holds at most one seat, and follows at most one live table, because the
messages of a game in progress (`played`, `asked`, ...) name no table; a refused join or watch
leaves its place as it was. Our bots join their seats through `receive` with the seat's token,
as an outside bot would.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from functools import partial

import numpy as np

from scrofazero.serve.common.messages import OPEN, Ping, Pong
from scrofazero.serve.common.protocol import Refusal
from scrofazero.serve.common.records import LIVE
from scrofazero.serve.common.replies import replying, request_of
from scrofazero.serve.common.seating import SeatedTable
from scrofazero.serve.common.thinking import FairThreads

# the client whose new table is being made (ClientHub.admitted): its writes wait their turn
CREATING: contextvars.ContextVar = contextvars.ContextVar("creating")


class RecordsThread(Executor):
    """The one thread the records are written on. A job submitted with `submit` (the moves and
    every other write of the tables that exist) runs in arrival order, ahead of every job
    submitted with `submit_for(client, ...)` (the writes that make a client's new table), and
    those take turns by client: a flood of new tables, a few commits each, delays no move by
    more than the commit under way, and another client's new table by one table's writes per
    flooding client, not by the whole flood."""

    def __init__(self, name: str):
        self._first: deque = deque()
        self._turns: OrderedDict = OrderedDict()  # client -> its jobs, in turn
        self._ready = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        return self._put(self._first, fn, args, kwargs)

    def submit_for(self, client, fn: Callable, /, *args, **kwargs) -> Future:
        return self._put(self._turns.setdefault(client, deque()), fn, args, kwargs)

    def _put(self, queue: deque, fn: Callable, args, kwargs) -> Future:
        future: Future = Future()
        with self._ready:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            queue.append((future, fn, args, kwargs))
            self._ready.notify()
        return future

    def _next(self):
        """The next job (lock held): the first queue's, else the next client's in turn."""
        if self._first:
            return self._first.popleft()
        client, jobs = next(iter(self._turns.items()))
        job = jobs.popleft()
        if jobs:
            self._turns.move_to_end(client)
        else:
            del self._turns[client]
        return job

    def _run(self) -> None:
        while True:
            with self._ready:
                while not (self._first or self._turns or self._closed):
                    self._ready.wait()
                if not (self._first or self._turns):
                    return  # shut down, and every job done
                future, fn, args, kwargs = self._next()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as err:  # noqa: BLE001  (handed to whoever waits on it)
                future.set_exception(err)
            else:
                future.set_result(result)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._ready:
            self._closed = True
            if cancel_futures:
                for future, *_ in [*self._first, *(j for q in self._turns.values() for j in q)]:
                    future.cancel()
            self._ready.notify_all()
        if wait:
            self._thread.join()


class ClientHub:
    """Tables by id and the connections at them. A subclass sets `error` (its protocol's
    refusal), `parse` (a frame -> its client message model, raising `error`), `handlers` (one
    per client message model: handler(hub, conn, msg, thinking)) and `what` (how an error
    names its tables)."""

    error: type[Refusal]
    parse: Callable
    handlers: dict
    what = "table"

    def __init__(self, records, settings, threads: str, db_thread: Executor | None = None,
                 limits=None):
        """`settings` (the game's hub settings) give `bot_threads`, `bot_match_threads`, `seed`
        and `max_tables`; the names of the hub's threads begin with `threads` ("fish-": the Fish
        hub's). Without a `db_thread` the hub makes its own, and shuts it down with itself."""
        self.records = records
        self.settings = settings
        self.own_db_thread = db_thread is None
        self.db_thread = db_thread or RecordsThread(f"{threads}records")
        # shared fairly: each client (the address that made the table) gets one share of the
        # threads, each of its tables a share of that (thinking.py)
        self.bot_threads = FairThreads(settings.bot_threads, thread_name_prefix=f"{threads}bots")
        # tables of bots only think apart, so they never take the threads of tables with people
        self.bot_match_threads = FairThreads(settings.bot_match_threads,
                                             thread_name_prefix=f"{threads}bot-matches")
        self.rng = np.random.default_rng(settings.seed)
        self.tables: dict = {}  # table id -> table
        self.where: dict[object, tuple] = {}  # connection -> (table, seat or None)
        self.limits = limits  # limits.Limits shared by the server's hubs (None: no limits)
        if limits is not None:
            limits.hubs.append(self)
        self._idle: dict[str, asyncio.TimerHandle] = {}  # table id -> its expiry
        self._empty: dict[str, asyncio.TimerHandle] = {}  # table id -> its next empty check

    @contextlib.asynccontextmanager
    async def admitted(self, address: str | None, kinds: list[str]):
        """Refuse (`limit`, naming the setting) a new table from `address` with seats `kinds`
        that is over a limit (limits.Limits.admit_table); when the server's waiting tables are
        full, a waiting table of the client holding the most is closed to make room
        (limits.Limits.make_room). The check, the room and the new table's place are taken at
        once, with no wait between, and the new table counts against the waiting tables'
        limits until the block ends (it is added with `add_table` within it): creates under
        way together can neither pass the limits together nor take each other's room."""
        limits = self.limits
        if limits is None:
            yield
            return
        victim = limits.make_room(address)
        if victim is not None:
            limits.closing.add(victim)
        why = limits.admit_table(address, kinds)
        if why is not None:
            limits.closing.discard(victim)
            raise self.error("limit", why)
        limits.pending[address] += 1
        creating = CREATING.set(("client", address))  # its records writes take their turn
        try:
            if victim is not None:
                await limits.hub_of(victim).close_for_room(victim)
            yield
        finally:
            CREATING.reset(creating)
            limits.closing.discard(victim)
            limits.pending[address] -= 1
            if limits.pending[address] <= 0:
                del limits.pending[address]

    async def close_for_room(self, table) -> None:
        """Close a waiting table to make room for a newcomer's (Limits.make_room)."""
        limit = self.limits.settings.max_waiting_tables
        if await table.expire(f"the server's waiting tables were full (max_waiting_tables="
                              f"{limit}) and its creator held the most of them: it made room "
                              "for a newcomer's table"):
            self._forget(table)

    def add_table(self, table, address: str | None, idle_expire_s: float) -> None:
        """A new table, open, joins the live list; unless its first hand starts within
        `idle_expire_s` it is closed as expired, and with the limits, sooner when nobody sits
        at an open seat for empty_table_expire_s."""
        table.creator = address
        self.tables[table.id] = table
        self._idle[table.id] = asyncio.get_running_loop().call_later(
            idle_expire_s, lambda: asyncio.ensure_future(self._expire(table)))
        if self.limits is not None:
            self._check_empty(table)
        self._prune()

    def _check_empty(self, table: SeatedTable) -> None:
        """Expire `table` if it is still waiting and nobody has sat at an open seat for
        empty_table_expire_s; else look again when that could be so."""
        self._empty.pop(table.id, None)
        if table.status != "waiting" or self.tables.get(table.id) is not table:
            return
        empty_s = self.limits.settings.empty_table_expire_s
        left = empty_s - (time.monotonic() - table.empty_since)
        if not table.occupied and left <= 0:
            why = f"nobody sat at it for empty_table_expire_s={empty_s:g} s"
            asyncio.ensure_future(self._expire(table, why))
            return
        self._empty[table.id] = asyncio.get_running_loop().call_later(
            empty_s if table.occupied else left, self._check_empty, table)

    async def _expire(self, table, why: str | None = None) -> None:
        """The table's idle time is up (or see _check_empty): closed if its first hand has not
        started."""
        if why is None:
            self._idle.pop(table.id, None)
        if await (table.expire() if why is None else table.expire(why)):
            self._forget(table)

    def stop_expiries(self) -> None:
        for timer in [*self._idle.values(), *self._empty.values()]:
            timer.cancel()

    async def shutdown(self) -> None:
        """Abandon every table and stop the hub's threads (the database's last, once what it
        was given is written)."""
        self.stop_expiries()
        for table in self.tables.values():
            table.abandon()
        self.bot_threads.shutdown(wait=False, cancel_futures=True)
        self.bot_match_threads.shutdown(wait=False, cancel_futures=True)
        if self.own_db_thread:
            self.db_thread.shutdown(wait=True)

    async def write(self, method: str, *args):
        """A records method, run on the database thread; while a client's new table is made
        (`admitted`), in that client's turn (RecordsThread)."""
        job = partial(getattr(self.records, method), *args)
        client = CREATING.get(None)
        if client is not None and hasattr(self.db_thread, "submit_for"):
            return await asyncio.wrap_future(self.db_thread.submit_for(client, job))
        return await asyncio.get_running_loop().run_in_executor(self.db_thread, job)

    async def read(self, method: str, *args):
        return await self.write(method, *args)

    def table(self, table_id: str):
        table = self.tables.get(table_id)
        if table is None:
            raise self.error("unknown_table", f"no {self.what} {table_id!r} on this server")
        return table

    def fresh_seed(self) -> int:
        """A seed for one table's deals or bots. Without the server's `seed` setting it comes
        from the operating system's entropy (`secrets`), so a seed a record publishes (a Fish
        game's deal seed) tells nothing of any other table's; with it, the next number of the
        server's generator: reproducible, and so predictable by whoever knows that seed."""
        if self.settings.seed is None:
            return secrets.randbits(62)
        return int(self.rng.integers(1 << 62))

    def new_table_id(self) -> str:
        table_id = secrets.token_hex(4)
        while table_id in self.tables:
            table_id = secrets.token_hex(4)
        return table_id

    async def join_bots(self, table, join: type, bot: Callable) -> dict[int, str]:
        """Seat our bots (`bot(seat, kind)` -> a client) at every seat that is not open, each
        joining with a `join` message through `receive`; returns the open seats' tokens."""
        for seat, spec in enumerate(table.seats):
            if spec.kind != OPEN:
                await self.receive(bot(seat, spec.kind), join(table=table.id, seat=seat,
                                                              token=spec.token).model_dump_json())
        return {i: s.token for i, s in enumerate(table.seats) if s.kind == OPEN}

    def _prune(self) -> None:
        """Past settings.max_tables live tables, forget the oldest finished or abandoned ones."""
        for table in list(self.tables.values()):
            if len(self.tables) <= self.settings.max_tables:
                return
            if table.status in ("finished", "abandoned"):
                self._forget(table)

    def _forget(self, table) -> None:
        """Drop a table from the live list, with its connections' places and its expiry."""
        self.tables.pop(table.id, None)
        for conn in [c for c, (t, _) in self.where.items() if t is table]:
            del self.where[conn]
        for timers in (self._idle, self._empty):
            timer = timers.pop(table.id, None)
            if timer is not None:
                timer.cancel()

    async def receive(self, conn, text: str | bytes, thinking: dict | None = None) -> None:
        """Handle one frame from `conn`; a refused message gets an error back to `conn` only.
        The first message to `conn` while it is handled is its answer (common/replies.py)."""
        with replying(conn) as reply:
            try:
                msg = self.parse(text)
                reply.to(msg.type, msg.id)
                await self.handlers[type(msg)](self, conn, msg, thinking)
            except self.error as err:
                if reply.fields is None:  # refused before it was read as a message
                    reply.to(*request_of(text, [m.model_fields["type"].default
                                                for m in self.handlers]))
                await conn.send(err.to_message())

    async def _on_ping(self, conn, _msg: Ping, _thinking) -> None:
        await conn.send(Pong().model_dump())

    async def _on_join(self, conn, msg, _thinking) -> None:
        table = self.table(msg.table)
        previous = self.where.get(conn)
        self._refuse_a_seat(previous, "for another seat")
        self.where[conn] = (table, msg.seat)  # a move may arrive before join returns
        try:
            await table.join(conn, msg.seat, msg.token, msg.name)
        except self.error:
            if previous is None:
                del self.where[conn]
            else:
                self.where[conn] = previous
            raise
        if previous is not None:  # it was watching: it is a seat now
            await self._leave(conn, *previous)

    async def _on_watch(self, conn, msg, _thinking) -> None:
        """Follow a table. A socket follows one live table only (watching it again sends a
        fresh welcome; once it is over the socket may watch another), and a seat's socket
        watches none."""
        table = self.table(msg.table)
        previous = self.where.get(conn)
        self._refuse_a_seat(previous, "to watch a table")
        if previous is not None and previous[0] is not table and previous[0].status in LIVE:
            raise self.error("already_watching", f"this connection watches table "
                                                 f"{previous[0].id}; open another connection "
                                                 "to watch another table")
        await table.watch(conn)
        self.where[conn] = (table, None)
        if previous is not None and previous[0] is not table:
            previous[0].observers.discard(conn)

    def _refuse_a_seat(self, place: tuple | None, instead: str) -> None:
        """Refused as already_joined when `place` (a connection's) is a seat: "open another
        connection `instead`"."""
        if place is not None and place[1] is not None:
            raise self.error("already_joined", f"this connection holds seat {place[1]} of "
                                               f"table {place[0].id}; open another "
                                               f"connection {instead}")

    def _seated(self, conn, when: str) -> tuple:
        """The table and seat `conn` holds; refused as not_joined ("join a seat `when`") when
        it holds none."""
        table, seat = self.where.get(conn, (None, None))
        if seat is None:
            raise self.error("not_joined", f"join a seat {when}")
        return table, seat

    async def _leave(self, conn, table, seat: int | None) -> None:
        if seat is None:
            table.observers.discard(conn)
        else:
            await table.leave(seat, conn)

    async def disconnect(self, conn) -> None:
        where = self.where.pop(conn, None)
        if where is not None:
            await self._leave(conn, *where)
