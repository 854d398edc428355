"""A table: a match of Gongzhu hands, four seats, the connections at them, deadlines and records.

Every move, from a person's page, an outside bot or one of our bots, arrives as a protocol
message through `Table.play`; the rules engine decides legality and scores, the table only
orders turns, tells every connection what happened, records it, and plays the documented
fallback (the lowest legal card) when a deadline passes, a seat stays away or a bot crashes.
A move is recorded before it is applied: when the records refuse it, the table is unchanged and
the mover is told (`storage`), so the move can be sent again.

A match (docs/protocol.md, "Matches") plays hands with the same seats and tokens until `hands`
are played or one team leads by `target`; hand k is led by seat (leader + k - 1) % 4. Between
hands the table waits until every seat is ready (`next`; our bots and absent seats are ready at
once) or `next_hand_s` passes.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from scrofazero.games.gongzhu.cards import card_code, mask_to_cards
from scrofazero.games.gongzhu.deals import format_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.serve.common.messages import FALLBACKS, OPEN, PlayerInfo
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.common.seating import SeatedTable, Writer
from scrofazero.serve.gongzhu.messages import (
    GameOver,
    HandOver,
    HandResult,
    MatchOver,
    Played,
    Ready,
    SeatThought,
    Start,
    TableInfo,
    Thinking,
    Trick,
    Welcome,
    YourTurn,
)
from scrofazero.serve.gongzhu.protocol import card_codes, public_state

STORAGE_RETRY_S = 1.0  # a fallback the records refused is tried again after this long


@dataclass
class TableSettings:
    move_deadline_s: float = 120.0  # time for a move; then the lowest legal card is played
    reconnect_grace_s: float = 60.0  # a disconnected seat is held this long, then plays fallbacks
    thinking: bool = True  # send what ScrofaZero was thinking to the table
    live_thinking: bool = False  # send it after each move (it names the bot's cards to all at
    # the table), not with game_over
    next_hand_s: float = 30.0  # between hands of a match: the next starts after this anyway
    idle_expire_s: float = 1800.0  # a table whose first hand has not started by then is closed


@dataclass(frozen=True)
class MatchRules:
    hands: int = 1  # the most hands played
    target: int | None = None  # the match also ends once a team leads by this many points
    public: bool = False  # open seats are listed in the lobby and can be claimed by anyone
    open_hands: int = 0  # the first hands that play standard deals the creator chose (open)


Deals = Callable[[int], tuple[list[int], int | None]]  # hand number -> (deal, standard number)


class Table(SeatedTable):
    """One match at one table (its seats: common/seating.py). All methods run on the server's event
    loop; `lock` orders moves and the changes between hands."""

    error = ProtocolError
    state: GongzhuState
    settings: TableSettings

    def __init__(self, table_id: str, deals: Deals, leader: int, kinds: list[str],
                 names: list[str], settings: TableSettings, write: Writer,
                 write_move: Callable[..., Awaitable], rules: MatchRules = MatchRules()):
        super().__init__(table_id, kinds, names, write)
        self.deals = deals
        self.first_leader = leader  # leads the match's first hand
        self.settings = settings
        self.rules = rules
        self.match_id = -1
        self.hand = 1
        self.totals = [0, 0]  # team points (seats 0+2, 1+3) over the finished hands
        self.results: list[HandResult] = []
        self.deal_numbers: list[int | None] = []  # each dealt hand's standard deal number
        self.ready: set[int] = set()  # between hands: the seats ready for the next
        self.next_hand_at = 0.0
        self.write_move = write_move  # write_move(game_id, ply, seat, card, ms, fallback, thinking)
        self.turn_started = 0.0
        self.deadline = 0.0
        self._deadline_timer: asyncio.TimerHandle | None = None
        self._next_timer: asyncio.TimerHandle | None = None
        self.done = asyncio.Event()  # set when the match is over
        self._deal_hand()

    def leader_of(self, hand: int) -> int:
        return (self.first_leader + hand - 1) % 4

    def _deal_hand(self) -> None:
        """The state of hand `self.hand` (its deal from `deals`), nothing played."""
        deal, self.deal_number = self.deals(self.hand)
        self.deal_numbers.append(self.deal_number)
        self.deal = [int(c) for c in deal]
        self.state = GongzhuState(self.deal, leader=self.leader_of(self.hand))
        self.held: list[SeatThought] = []  # thinking kept back until game_over

    async def open(self) -> None:
        self.match_id = await self.write("new_match", self.id, self.rules.hands,
                                         self.rules.target)
        await self._record_hand()

    async def _record_hand(self) -> None:
        self.game_id = await self.write(
            "new_game", self.id, format_deal(self.deal), self.deal_number, self.state.leader,
            [(s.kind, s.name) for s in self.seats],
            {"move_deadline_s": self.settings.move_deadline_s,
             "reconnect_grace_s": self.settings.reconnect_grace_s,
             "thinking": self.settings.thinking,
             "live_thinking": self.settings.live_thinking},
            self.match_id, self.hand)

    # --- what clients are told -------------------------------------------------------------
    def open_seats(self) -> list[int]:
        """Open seats that nobody has joined and no lobby claim has given out."""
        return [i for i, s in enumerate(self.seats)
                if s.kind == OPEN and not s.joined and not s.claimed]

    def table_info(self) -> TableInfo:
        return TableInfo(table=self.id, game_id=self.game_id, status=self.status,
                         first_leader=self.state.first_leader,
                         players=[PlayerInfo(seat=i, kind=s.kind, name=s.name,
                                             connected=s.conn is not None)
                                  for i, s in enumerate(self.seats)],
                         match_id=self.match_id, hand=self.hand, hands=self.rules.hands,
                         target=self.rules.target, totals=list(self.totals),
                         public=self.rules.public, open_seats=self.open_seats(),
                         open_deal=self.rules.open_hands > 0,
                         open_hands=self.rules.open_hands)

    def welcome(self, seat: int | None) -> Welcome:
        state = self.state
        fields = {**dict(self.table_info()), **dict(public_state(state))}
        fields["hand"] = card_codes(mask_to_cards(state.hands[seat])) if seat is not None else []
        return Welcome(**fields, seat=seat, hand_number=self.hand,
                       match_history=list(self.results),
                       history=[(s, card_code(c)) for s, c in state.history],
                       ply=len(state.history), move_deadline_s=self.settings.move_deadline_s,
                       thinking=self.settings.thinking,
                       live_thinking=self.settings.live_thinking,
                       returns=state.returns() if state.is_terminal() else None)

    def _turn_message(self) -> YourTurn:
        return YourTurn(table=self.id, ply=len(self.state.history) + 1,
                        legal=card_codes(self.state.legal_actions()), deadline=self.deadline,
                        timeout_s=self.settings.move_deadline_s)

    # --- joining and leaving -----------------------------------------------------------------
    async def claim(self, seat: int, name: str | None) -> str:
        """Give an open seat of a public table to whoever asks first: a fresh token for it
        (any token handed out before no longer fits). Raises ProtocolError, changing nothing."""
        async with self.lock:
            if not self.rules.public:
                raise ProtocolError("not_public", f"table {self.id} is not public: its seats "
                                                  "are given by its creator")
            if not 0 <= seat < 4:
                raise ProtocolError("unknown_seat", f"table {self.id} has seats 0..3, not {seat}")
            spec = self.seats[seat]
            if seat not in self.open_seats():
                raise ProtocolError("seat_taken", f"seat {seat} of table {self.id} is taken")
            spec.claimed, spec.token = True, secrets.token_urlsafe(16)
            if name and name != spec.name:
                spec.name = name
                await self.write("name_seat", self.game_id, seat, name)
            return spec.token

    async def _seat_gone(self, seat: int) -> None:
        """Between hands a seat that is gone is ready for the next."""
        if self.status == "between":
            await self._mark_ready(seat)

    # --- the game ---------------------------------------------------------------------------
    async def _start(self) -> None:
        self.status = "playing"
        await self.write("set_status", self.game_id, "playing")
        await self.write("set_match", self.match_id, "playing", self.totals)
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
        self._arm_fallback(self.settings.move_deadline_s, "deadline")
        spec = self.seats[seat]
        if spec.away:
            await self._fallback("away")
        elif spec.conn is not None:
            await self._send(spec.conn, self._turn_message())

    def _arm_fallback(self, delay: float, reason: str) -> None:
        """Play the fallback for the seat to move after `delay`, unless it has moved by then."""
        ply = len(self.state.history) + 1
        game_id = self.game_id
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        self._deadline_timer = asyncio.get_running_loop().call_later(
            delay, lambda: asyncio.ensure_future(self._deadline_passed(game_id, ply, reason)))

    async def _deadline_passed(self, game_id: int, ply: int, reason: str = "deadline") -> None:
        async with self.lock:
            if self.status == "playing" and self.game_id == game_id and \
                    len(self.state.history) + 1 == ply:
                await self._fallback(reason)

    async def _fallback(self, reason: str) -> None:
        """Play the lowest legal card for the seat to move (lock held). When the records refuse
        it, it is tried again shortly (the seat may still move itself meanwhile)."""
        assert reason in FALLBACKS
        try:
            await self._apply(min(self.state.legal_actions()), reason, None)
        except ProtocolError as err:
            if err.code != "storage":
                raise
            self._arm_fallback(min(STORAGE_RETRY_S, self.settings.move_deadline_s), reason)

    async def play(self, seat: int, card: int, ply: int | None = None,
                   thinking: dict | None = None) -> None:
        """A move from the connection at `seat`. Raises ProtocolError, changing nothing."""
        async with self.lock:
            if self.status == "waiting":
                raise ProtocolError("not_started", f"table {self.id} is waiting for players")
            if self.status == "between":
                raise ProtocolError("game_over", f"hand {self.hand} at table {self.id} is over; "
                                                 "the next starts when every seat is ready")
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
        """Record the move, then play it (lock held). Raises ProtocolError `storage`, the table
        unchanged and the deadline still running, when the records refuse it."""
        state = self.state
        seat = state.current_player
        ply = len(state.history) + 1
        think_ms = round((time.time() - self.turn_started) * 1000)
        try:
            await self.write_move(self.game_id, ply, seat, card_code(card), think_ms, fallback,
                                  thinking)
        except Exception as err:  # noqa: BLE001  (any failed write: the move did not happen)
            raise ProtocolError("storage", f"the records could not store the move ({err}"[:200]
                                + "); nothing was played: send it again") from None
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        state.apply(card)
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

    def _match_decided(self) -> bool:
        lead = abs(self.totals[0] - self.totals[1])
        return self.hand >= self.rules.hands or (self.rules.target is not None and
                                                 lead >= self.rules.target)

    async def _finish(self) -> None:
        """The hand is over: its game_over, then hand_over or (the last hand) match_over."""
        scores = self.state.pile_scores()
        await self.write("finish", self.game_id, scores)
        team = [scores[0] + scores[2], scores[1] + scores[3]]
        returns = self.state.returns()
        self.results.append(HandResult(hand=self.hand, game_id=self.game_id, team=team,
                                       returns=returns))
        self.totals = [a + b for a, b in zip(self.totals, team)]
        over = self._match_decided()
        self.status = "finished" if over else "between"
        await self.write("set_match", self.match_id, self.status, self.totals)
        if over:
            self._cancel_graces()
        # deal numbers are told only when the match is over (so no number hints at the deals
        # still to come; Hub.match_deals draws them unpredictably too)
        await self.broadcast(GameOver(table=self.id, game_id=self.game_id, scores=scores,
                                      team=team, returns=returns,
                                      deal_number=self.deal_number if over else None,
                                      thinking=self.held, match_id=self.match_id, hand=self.hand))
        if over:
            await self.broadcast(self.match_over())
            self.done.set()
        else:
            await self._between()

    def match_over(self) -> MatchOver:
        a, b = self.totals
        return MatchOver(table=self.id, match_id=self.match_id, hands_played=len(self.results),
                         totals=list(self.totals), history=list(self.results),
                         winner=None if a == b else int(b > a),
                         deal_numbers=list(self.deal_numbers))

    async def _between(self) -> None:
        """Wait for the next hand: our bots and absent seats are ready now, the rest say `next`,
        and after next_hand_s it starts anyway."""
        self.ready = {i for i, s in enumerate(self.seats)
                      if s.kind != OPEN or s.away or s.conn is None}
        self.next_hand_at = time.time() + self.settings.next_hand_s
        hand = self.hand
        self._next_timer = asyncio.get_running_loop().call_later(
            self.settings.next_hand_s, lambda: asyncio.ensure_future(self._next_hand_due(hand)))
        await self.broadcast(HandOver(table=self.id, match_id=self.match_id, hand=self.hand,
                                      hands=self.rules.hands, target=self.rules.target,
                                      totals=list(self.totals), history=list(self.results),
                                      next_leader=self.leader_of(self.hand + 1),
                                      next_hand_at=self.next_hand_at, ready=sorted(self.ready)))
        self._start_if_all_ready()

    async def ready_for_next(self, seat: int) -> None:
        """`next` from the connection at `seat`. Raises ProtocolError, changing nothing."""
        async with self.lock:
            if self.status != "between":
                raise ProtocolError("not_between", f"table {self.id} is {self.status}, not "
                                                   "between two hands of a match")
            if seat in self.ready:  # said before: told again, to it alone (its answer)
                conn = self.seats[seat].conn
                if conn is not None:  # (it is: `seat` is the sender's)
                    await self._send(conn, Ready(table=self.id, seat=seat))
                return
            await self._mark_ready(seat)

    async def _mark_ready(self, seat: int) -> None:
        if seat in self.ready:
            return
        self.ready.add(seat)
        await self.broadcast(Ready(table=self.id, seat=seat))
        self._start_if_all_ready()

    def _start_if_all_ready(self) -> None:
        # a task of its own: a match of absent seats must not start each hand deeper in the stack
        if len(self.ready) == len(self.seats):
            asyncio.ensure_future(self._next_hand_due(self.hand))

    async def _next_hand_due(self, hand: int) -> None:
        async with self.lock:
            if self.status == "between" and self.hand == hand:
                await self._next_hand()

    async def _next_hand(self) -> None:
        """Deal and record the next hand, give every seat a fresh welcome (same tokens) and every
        watcher a watcher's one, then start it (lock held)."""
        if self._next_timer is not None:
            self._next_timer.cancel()
        self.hand += 1
        self.ready = set()
        self._deal_hand()
        await self._record_hand()
        self.status = "playing"
        for seat, spec in enumerate(self.seats):
            if spec.conn is not None:
                await self._send(spec.conn, self.welcome(seat))
        for conn in list(self.observers):
            await self._send(conn, self.welcome(None))
        await self._start()

    async def _record_expired(self) -> None:
        await self.write("set_status", self.game_id, "expired")
        await self.write("set_match", self.match_id, "expired", self.totals)

    def abandon(self) -> None:
        """Stop timers (server shutdown); the records keep the game as unfinished."""
        for timer in (self._deadline_timer, self._next_timer):
            if timer is not None:
                timer.cancel()
        self._cancel_graces()
