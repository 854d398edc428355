"""What a Gongzhu table (gongzhu/table.py) and a Fish table (fish/table.py) share: seats with their
tokens, the connections at them, the watchers, and a seat's leaving and coming back.

Invariants: a seat has at most one connection, and a join needs the seat's token (compared in
constant time); a join with the token takes the seat back, and the connection it replaces is
told `replaced` and closed. A connection whose send fails is gone, as if it had disconnected.
A seat whose connection goes is held for reconnect_grace_s; then it is `away` and its turns
play the table's fallback until it joins again. Every message to the table is turned into JSON
data once and goes to every seat's connection and every watcher. All methods run on the
server's event loop; `lock` orders moves, joins and the ends of the grace times.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel

from scrofazero.serve.common.messages import OPEN, Seat, ServerMessage
from scrofazero.serve.common.protocol import Refusal

ENDED = ("finished", "abandoned", "expired")  # a table's statuses once nothing more is played

Writer = Callable[..., Awaitable]  # runs a records method on the database thread


class Connection(Protocol):
    """A client at a table: a WebSocket, or one of our bots in the server process."""

    async def send(self, msg: dict) -> None: ...

    async def close(self, reason: str) -> None: ...


class TurnState(Protocol):
    """What the seats read of a table's game state."""

    @property
    def current_player(self) -> int: ...


class GraceSettings(Protocol):
    """What the seats read of a table's settings."""

    @property
    def reconnect_grace_s(self) -> float: ...


@dataclass
class SeatState:
    kind: str  # open or a player's name (the protocol's seat kinds)
    name: str
    token: str
    conn: Connection | None = None
    joined: bool = False  # has joined once: the game starts when every seat has
    away: bool = False  # disconnected past the grace time: its turns play the fallback
    grace: asyncio.TimerHandle | None = None
    claimed: bool = False  # its token was given out by a lobby claim


class SeatedTable:
    """The seats of one table. A subclass sets `error` (its protocol's refusal, raised with a
    code and a message) and gives `state.current_player`, `settings.reconnect_grace_s`,
    `table_info()`, `welcome(seat)`, `_turn_message()`, `_start()` (every seat has joined)
    and `_fallback(reason)` (lock held)."""

    error: type[Refusal]
    state: TurnState
    settings: GraceSettings
    done: asyncio.Event  # set when the table is over

    def __init__(self, table_id: str, kinds: list[str], names: list[str], write: Writer):
        self.id = table_id
        self.seats = [SeatState(k, n, secrets.token_urlsafe(16)) for k, n in zip(kinds, names)]
        self.observers: set[Connection] = set()
        self.status = "waiting"
        self.game_id = -1
        self.write = write  # write(method, *args): a records method on the database thread
        self.lock = asyncio.Lock()
        self.creator: str | None = None  # the client address that made it (limits.py)
        self.empty_since = time.monotonic()  # when its last open seat's connection went

    @property
    def bots_only(self) -> bool:
        """No open seat: our bots play it alone (limits.py's max_bot_matches)."""
        return all(s.kind != OPEN for s in self.seats)

    @property
    def occupied(self) -> bool:
        """A person or an outside bot is connected at an open seat."""
        return any(s.conn is not None for s in self.seats if s.kind == OPEN)

    @property
    def live(self) -> bool:
        return self.status not in ENDED

    def info(self) -> dict:
        """The table as its lobby lists it (the fields of its start message)."""
        return self.table_info().model_dump()

    # --- what a subclass gives ---------------------------------------------------------------
    def table_info(self) -> BaseModel:
        raise NotImplementedError

    def welcome(self, seat: int | None) -> ServerMessage:
        raise NotImplementedError

    def _turn_message(self) -> ServerMessage:
        raise NotImplementedError

    async def _start(self) -> None:
        """Every seat has joined (lock held)."""
        raise NotImplementedError

    async def _fallback(self, reason: str) -> None:
        """The seat to move plays the table's fallback, for `reason` (lock held)."""
        raise NotImplementedError

    async def _send(self, conn: Connection, msg: ServerMessage) -> None:
        await self._deliver(conn, msg.model_dump())

    async def _deliver(self, conn: Connection, data: dict) -> None:
        try:
            await conn.send(data)
        except Exception:  # noqa: BLE001  (a failing connection is a disconnect, not a crash)
            await self._lost(conn)

    async def broadcast(self, msg: ServerMessage) -> None:
        """`msg` to every seat's connection and every watcher (turned into JSON data once)."""
        data = msg.model_dump()
        conns = [s.conn for s in self.seats if s.conn is not None] + list(self.observers)
        await asyncio.gather(*(self._deliver(c, data) for c in conns))

    def _check_seat(self, seat: int, token: str) -> SeatState:
        if not 0 <= seat < len(self.seats):
            raise self.error("unknown_seat", f"table {self.id} has seats "
                                             f"0..{len(self.seats) - 1}, not {seat}")
        spec = self.seats[seat]
        if not secrets.compare_digest(spec.token.encode(), token.encode()):
            raise self.error("bad_token", f"wrong token for seat {seat} of table {self.id}")
        return spec

    async def join(self, conn: Connection, seat: int, token: str, name: str | None) -> None:
        """Take (or take back) a seat: its welcome, then its turn message if it is to move.
        Raises `error`, changing nothing."""
        # One lock section: no move can slip between the welcome and the turn check, so a
        # joining seat gets exactly one turn message for the move it must make.
        async with self.lock:
            spec = self._check_seat(seat, token)
            old = spec.conn
            spec.conn, spec.away, spec.joined = conn, False, True
            if spec.grace is not None:
                spec.grace.cancel()
                spec.grace = None
            if name and spec.kind == OPEN and name != spec.name:
                spec.name = name
                await self.write("name_seat", self.game_id, seat, name)
            await self._send(conn, self.welcome(seat))
            await self.broadcast(Seat(seat=seat, name=spec.name,
                                      connected=spec.conn is not None))
            if self.status == "waiting" and all(s.joined for s in self.seats):
                await self._start()
            elif self.status == "playing" and self.state.current_player == seat and \
                    spec.conn is conn:
                await self._send(conn, self._turn_message())
        if old is not None and old is not conn:
            await self._deliver(old, self.error("replaced", "another connection joined this "
                                                            "seat with its token").to_message())
            await old.close("replaced")

    async def watch(self, conn: Connection) -> None:
        self.observers.add(conn)
        await self._send(conn, self.welcome(None))

    async def _lost(self, conn: Connection) -> None:
        self.observers.discard(conn)
        for seat, spec in enumerate(self.seats):
            if spec.conn is conn:
                await self.leave(seat, conn)

    async def leave(self, seat: int, conn: Connection) -> None:
        """`conn` at `seat` is gone: hold the seat for the grace time, then play its fallbacks."""
        spec = self.seats[seat]
        if spec.conn is not conn:
            return
        spec.conn = None
        if not self.occupied:
            self.empty_since = time.monotonic()
        if self.status in ENDED:
            return
        loop = asyncio.get_running_loop()
        spec.grace = loop.call_later(self.settings.reconnect_grace_s,
                                     lambda: asyncio.ensure_future(self._grace_over(seat)))
        await self.broadcast(Seat(seat=seat, name=spec.name, connected=False))
        await self._seat_gone(seat)

    async def _seat_gone(self, seat: int) -> None:
        """After a seat's connection went and the others were told (a subclass's hook)."""

    async def _grace_over(self, seat: int) -> None:
        async with self.lock:
            spec = self.seats[seat]
            spec.grace = None
            if spec.conn is not None:
                return
            spec.away = True
            if self.status == "playing" and self.state.current_player == seat:
                await self._fallback("away")

    async def expire(self, why: str = "its first hand did not start in time") -> bool:
        """Close a table whose first hand has not started (its idle_expire_s is up, or see
        client_hub.py): recorded as expired, every connection told (`expired`, saying `why`)
        and closed. Returns whether it was closed."""
        async with self.lock:
            if self.status != "waiting":
                return False
            self.status = "expired"
            await self._record_expired()
            conns = [s.conn for s in self.seats if s.conn is not None] + list(self.observers)
            for spec in self.seats:
                spec.conn = None
            self._cancel_graces()
            self.observers.clear()
            notice = self.error("expired", f"table {self.id} expired: {why}").to_message()
            for conn in conns:
                try:
                    await conn.send(notice)
                    await conn.close("expired")
                except Exception:  # noqa: BLE001  (already gone: nothing more to tell it)
                    pass
            self.done.set()
            return True

    async def _record_expired(self) -> None:
        """Write the expiry to the records (a subclass's)."""
        await self.write("set_status", self.game_id, "expired")

    def _cancel_graces(self) -> None:
        for spec in self.seats:
            if spec.grace is not None:
                spec.grace.cancel()
