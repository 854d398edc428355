"""A table: one hand of Gongzhu, four seats, the connections at them, deadlines and records.

Every move, from a person's page, an outside bot or one of our bots, arrives as a protocol
message through `Table.play`; the rules engine decides legality and scores, the table only
orders turns, tells every connection what happened, records it, and plays the documented
fallback (the lowest legal card) when a deadline passes, a seat stays away or a bot crashes.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from dataclasses import dataclass
from typing import Awaitable, Callable, Protocol

from scrofazero.games.gongzhu.cards import card_code, mask_to_cards
from scrofazero.games.gongzhu.deals import format_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.serve.messages import (
    FALLBACKS,
    Error,
    GameOver,
    Played,
    PlayerInfo,
    Seat,
    SeatThought,
    ServerMessage,
    Start,
    TableInfo,
    Thinking,
    Trick,
    Welcome,
    YourTurn,
)
from scrofazero.serve.protocol import ProtocolError, card_codes, public_state


class Connection(Protocol):
    """A client at a table: a WebSocket, or one of our bots in the server process."""

    async def send(self, msg: dict) -> None: ...

    async def close(self, reason: str) -> None: ...


@dataclass
class TableSettings:
    move_deadline_s: float = 120.0  # time for a move; then the lowest legal card is played
    reconnect_grace_s: float = 60.0  # a disconnected seat is held this long, then plays fallbacks
    thinking: bool = True  # send what ScrofaZero was thinking to the table
    live_thinking: bool = False  # send it after each move (it names the bot's cards to all at
    # the table), not with game_over


@dataclass
class SeatState:
    kind: str  # open or a registered player's name (messages.seat_kinds)
    name: str
    token: str
    conn: Connection | None = None
    joined: bool = False  # has joined once: the hand starts when every seat has
    away: bool = False  # disconnected past the grace time: its turns play the fallback
    grace: asyncio.TimerHandle | None = None


Writer = Callable[..., Awaitable]  # runs a Records method on the database thread


class Table:
    """One hand at one table. All methods run on the server's event loop; `lock` orders moves."""

    def __init__(self, table_id: str, deal, deal_number: int | None, leader: int,
                 kinds: list[str], names: list[str], settings: TableSettings, write: Writer,
                 write_move: Callable[..., Awaitable]):
        self.id = table_id
        self.deal = [int(c) for c in deal]
        self.deal_number = deal_number
        self.settings = settings
        self.state = GongzhuState(self.deal, leader=leader)
        self.seats = [SeatState(k, n, secrets.token_urlsafe(16)) for k, n in zip(kinds, names)]
        self.observers: set[Connection] = set()
        self.status = "waiting"
        self.game_id = -1
        self.write = write  # write(method, *args): a Records method on the database thread
        self.write_move = write_move  # write_move(game_id, ply, seat, card, ms, fallback, thinking)
        self.lock = asyncio.Lock()
        self.turn_started = 0.0
        self.deadline = 0.0
        self._deadline_timer: asyncio.TimerHandle | None = None
        self.done = asyncio.Event()
        self.held: list[SeatThought] = []  # thinking kept back until game_over

    async def open(self) -> None:
        self.game_id = await self.write(
            "new_game", self.id, format_deal(self.deal), self.deal_number, self.state.leader,
            [(s.kind, s.name) for s in self.seats],
            {"move_deadline_s": self.settings.move_deadline_s,
             "reconnect_grace_s": self.settings.reconnect_grace_s,
             "thinking": self.settings.thinking,
             "live_thinking": self.settings.live_thinking})

    # --- what clients are told -------------------------------------------------------------
    def table_info(self) -> TableInfo:
        return TableInfo(table=self.id, game_id=self.game_id, status=self.status,
                         first_leader=self.state.first_leader,
                         players=[PlayerInfo(seat=i, kind=s.kind, name=s.name,
                                             connected=s.conn is not None)
                                  for i, s in enumerate(self.seats)])

    def info(self) -> dict:
        """The table as GET /api/tables lists it (the fields of start)."""
        return self.table_info().model_dump()

    def welcome(self, seat: int | None) -> Welcome:
        state = self.state
        return Welcome(**dict(self.table_info()), **dict(public_state(state)), seat=seat,
                       hand=card_codes(mask_to_cards(state.hands[seat])) if seat is not None
                       else [],
                       history=[(s, card_code(c)) for s, c in state.history],
                       ply=len(state.history), move_deadline_s=self.settings.move_deadline_s,
                       thinking=self.settings.thinking,
                       live_thinking=self.settings.live_thinking,
                       returns=state.returns() if state.is_terminal() else None)

    def _turn_message(self) -> YourTurn:
        return YourTurn(table=self.id, ply=len(self.state.history) + 1,
                        legal=card_codes(self.state.legal_actions()), deadline=self.deadline,
                        timeout_s=self.settings.move_deadline_s)

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

    # --- joining and leaving -----------------------------------------------------------------
    def _check_seat(self, seat: int, token: str) -> SeatState:
        if not 0 <= seat < 4:
            raise ProtocolError("unknown_seat", f"table {self.id} has seats 0..3, not {seat}")
        spec = self.seats[seat]
        if not secrets.compare_digest(spec.token.encode(), token.encode()):
            raise ProtocolError("bad_token", f"wrong token for seat {seat} of table {self.id}")
        return spec

    async def join(self, conn: Connection, seat: int, token: str, name: str | None) -> None:
        # One lock section: no move can slip between the welcome and the turn check, so a
        # joining seat gets exactly one your_turn for the ply it must play.
        async with self.lock:
            spec = self._check_seat(seat, token)
            old = spec.conn
            spec.conn, spec.away, spec.joined = conn, False, True
            if spec.grace is not None:
                spec.grace.cancel()
                spec.grace = None
            if name and spec.kind == "open" and name != spec.name:
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
            await self._send(old, Error(code="replaced", message="another connection joined "
                                                             "this seat with its token"))
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
        if self.status in ("finished", "abandoned"):
            return
        loop = asyncio.get_running_loop()
        spec.grace = loop.call_later(self.settings.reconnect_grace_s,
                                     lambda: asyncio.ensure_future(self._grace_over(seat)))
        await self.broadcast(Seat(seat=seat, name=spec.name, connected=False))

    async def _grace_over(self, seat: int) -> None:
        async with self.lock:
            spec = self.seats[seat]
            spec.grace = None
            if spec.conn is not None:
                return
            spec.away = True
            if self.status == "playing" and self.state.current_player == seat:
                await self._fallback("away")

    # --- the game ---------------------------------------------------------------------------
    async def _start(self) -> None:
        self.status = "playing"
        await self.write("set_status", self.game_id, "playing")
        await self.broadcast(Start(**dict(self.table_info())))
        await self._next_turn()

    async def _next_turn(self) -> None:
        state = self.state
        if state.is_terminal():
            await self._finish()
            return
        seat = state.current_player
        self.turn_started = time.time()
        self.deadline = self.turn_started + self.settings.move_deadline_s
        ply = len(state.history) + 1
        loop = asyncio.get_running_loop()
        self._deadline_timer = loop.call_later(
            self.settings.move_deadline_s,
            lambda: asyncio.ensure_future(self._deadline_passed(ply)))
        spec = self.seats[seat]
        if spec.away:
            await self._fallback("away")
        elif spec.conn is not None:
            await self._send(spec.conn, self._turn_message())

    async def _deadline_passed(self, ply: int) -> None:
        async with self.lock:
            if self.status == "playing" and len(self.state.history) + 1 == ply:
                await self._fallback("deadline")

    async def _fallback(self, reason: str) -> None:
        """Play the lowest legal card for the seat to move (lock held)."""
        assert reason in FALLBACKS
        await self._apply(min(self.state.legal_actions()), reason, None)

    async def play(self, seat: int, card: int, ply: int | None = None,
                   thinking: dict | None = None) -> None:
        """A move from the connection at `seat`. Raises ProtocolError, changing nothing."""
        async with self.lock:
            if self.status == "waiting":
                raise ProtocolError("not_started", f"table {self.id} is waiting for players")
            if self.status != "playing":
                raise ProtocolError("game_over", f"the game at table {self.id} is over")
            state = self.state
            if state.current_player != seat:
                raise ProtocolError("not_your_turn", f"it is seat {state.current_player}'s turn, "
                                                     f"not seat {seat}'s")
            if ply is not None and ply != len(state.history) + 1:
                raise ProtocolError("not_your_turn", f"your move is for ply {ply}; the table is at "
                                                     f"ply {len(state.history) + 1}")
            legal = state.legal_actions()
            if card not in legal:
                held = state.hands[seat] >> card & 1
                why = "must follow the led suit" if held else "is not in your hand"
                raise ProtocolError("illegal_card", f"{card_code(card)} {why}; legal: "
                                                    f"{' '.join(card_codes(legal))}")
            await self._apply(card, None, thinking)

    async def bot_failed(self, seat: int, ply: int) -> None:
        """One of our bots raised instead of answering: play the fallback for it."""
        async with self.lock:
            if self.status == "playing" and self.state.current_player == seat and \
                    len(self.state.history) + 1 == ply:
                await self._fallback("bot_error")

    async def _apply(self, card: int, fallback: str | None, thinking: dict | None) -> None:
        state = self.state
        seat = state.current_player
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        think_ms = round((time.time() - self.turn_started) * 1000)
        state.apply(card)
        ply = len(state.history)
        await self.write_move(self.game_id, ply, seat, card_code(card), think_ms, fallback,
                              thinking)
        await self.broadcast(Played(seat=seat, card=card_code(card), ply=ply, fallback=fallback))
        if thinking is not None and self.settings.thinking:
            if self.settings.live_thinking:
                await self.broadcast(Thinking(seat=seat, ply=ply, **thinking))
            else:
                self.held.append(SeatThought(seat=seat, ply=ply, **thinking))
        if ply % 4 == 0:
            public = public_state(state)
            await self.broadcast(Trick(winner=state.leader,
                                       cards=[card_code(c) for _, c in state.history[-4:]],
                                       captured=public.captured, scores=public.scores,
                                       team=public.team))
        await self._next_turn()

    async def _finish(self) -> None:
        scores = self.state.pile_scores()
        await self.write("finish", self.game_id, scores)
        self.status = "finished"
        for spec in self.seats:
            if spec.grace is not None:
                spec.grace.cancel()
        team = [scores[0] + scores[2], scores[1] + scores[3]]
        await self.broadcast(GameOver(table=self.id, game_id=self.game_id, scores=scores,
                                      team=team, returns=self.state.returns(),
                                      deal_number=self.deal_number, thinking=self.held))
        self.done.set()

    def abandon(self) -> None:
        """Stop timers (server shutdown); the records keep the game as unfinished."""
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        for spec in self.seats:
            if spec.grace is not None:
                spec.grace.cancel()
