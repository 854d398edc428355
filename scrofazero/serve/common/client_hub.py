"""What the Gongzhu hub (gongzhu/hub.py, /ws) and the Fish hub (fish/hub.py, /ws/fish) share: the
one path of every client frame, the records on one database thread, the threads the bots think in,
and where each connection is.

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
import secrets
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from functools import partial

import numpy as np

from scrofazero.serve.common.messages import OPEN, Ping, Pong
from scrofazero.serve.common.records import LIVE
from scrofazero.serve.common.replies import replying, request_of


class ClientHub:
    """Tables by id and the connections at them. A subclass sets `error` (its protocol's
    refusal), `parse` (a frame -> its client message model, raising `error`), `handlers` (one
    per client message model: handler(hub, conn, msg, thinking)) and `what` (how an error
    names its tables)."""

    error: type[Exception]
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
        self.db_thread = db_thread or ThreadPoolExecutor(1, thread_name_prefix=f"{threads}records")
        self.bot_threads = ThreadPoolExecutor(settings.bot_threads,
                                              thread_name_prefix=f"{threads}bots")
        # tables of bots only think apart, so they never take the threads of tables with people
        self.bot_match_threads = ThreadPoolExecutor(settings.bot_match_threads,
                                                    thread_name_prefix=f"{threads}bot-matches")
        self.rng = np.random.default_rng(settings.seed)
        self.tables: dict = {}  # table id -> table
        self.where: dict[object, tuple] = {}  # connection -> (table, seat or None)
        self.limits = limits  # limits.Limits shared by the server's hubs (None: no limits)
        if limits is not None:
            limits.hubs.append(self)
        self._idle: dict[str, asyncio.TimerHandle] = {}  # table id -> its expiry

    def admit(self, address: str | None, kinds: list[str]) -> None:
        """Refuse (`limit`, naming the setting) a new table from `address` with seats `kinds`
        that is over a limit (limits.Limits.admit_table)."""
        if self.limits is not None:
            why = self.limits.admit_table(address, OPEN not in kinds)
            if why is not None:
                raise self.error("limit", why)

    def add_table(self, table, address: str | None, idle_expire_s: float) -> None:
        """A new table, open, joins the live list; unless its first hand starts within
        `idle_expire_s` it is closed as expired."""
        table.creator = address
        self.tables[table.id] = table
        self._idle[table.id] = asyncio.get_running_loop().call_later(
            idle_expire_s, lambda: asyncio.ensure_future(self._expire(table)))
        self._prune()

    async def _expire(self, table) -> None:
        """The table's idle time is up: closed if its first hand has not started."""
        self._idle.pop(table.id, None)
        if await table.expire():
            self._forget(table)

    def stop_expiries(self) -> None:
        for idle in self._idle.values():
            idle.cancel()

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
        """A records method, run on the database thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.db_thread, partial(getattr(self.records, method),
                                                                  *args))

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
        idle = self._idle.pop(table.id, None)
        if idle is not None:
            idle.cancel()

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
