"""A Fish table: one game of 6 or 8 seats, the connections at them, deadlines and records.

Every move, from a person's page, an outside bot or one of our bots, arrives as a protocol
message through `FishTable.ask` or `FishTable.call`; the rules engine (games/fish/rules.py)
decides legality, outcomes, whose turn it is and the end, the table only tells every
connection what happened, records it, and plays the documented fallback for the seat to move
when its deadline passes, it stays away or its bot crashes (`fallback_move`).

Calls: by default "any_time" (the engine's default, docs/rules.md section 17): any seat may call
an uncalled set between moves, so a call may come from any seat while the game runs; "own_turn"
tables take calls only from the seat to move. Either way only the seat to move gets
`fish_turn` and only it asks. Fair play: nothing sent before `fish_over` names where a card lies
unless the receiver knows it (its own hand, a card handed over in public); `fish_over` reveals
the deal and the bots' beliefs.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from scrofazero.games.fish.cards import (
    card_code,
    card_id,
    num_sets,
    set_cards,
    set_name,
    teammates,
)
from scrofazero.games.fish.events import Ask
from scrofazero.games.fish.rules import AskMove, CallMove, FishState, IllegalMove, Move
from scrofazero.serve.common.messages import FALLBACKS, PlayerInfo
from scrofazero.serve.common.seating import SeatedTable, Writer
from scrofazero.serve.fish.messages import (
    Asked,
    Called,
    FishBelief,
    FishOver,
    FishProtocolError,
    FishSetInfo,
    FishStart,
    FishTableInfo,
    FishThought,
    FishTurn,
    FishWelcome,
)
from scrofazero.serve.fish.records import fish_move_row


@dataclass
class FishTableSettings:
    move_deadline_s: float = 120.0  # time for the seat to move; then its fallback is played
    reconnect_grace_s: float = 60.0  # a disconnected seat is held this long, then plays fallbacks
    calls: str = "any_time"  # rules.CALL_MODES: who may call between moves
    max_moves: int = 1000  # past this many moves the seat to move must call (every game ends)
    idle_expire_s: float = 1800.0  # a table whose game has not started by then is closed
    bot_delay_s: float = 0.0  # at a table with an open seat, our bots' least time after a move
    # ^ (python play.py's fish_bot_delay, 1 s: a person reads each move; a table of bots only
    #   never waits)


def fallback_move(state: FishState, capped: bool = False) -> Move:
    """The move the server makes for the seat to move (from its own knowledge only): its first
    legal ask (lowest target, then lowest card id); when it has none (or the move cap is
    reached), a call of the uncalled set it holds most cards of (ties: the lowest set id),
    placing its own cards with itself and every other card with its lowest teammate that holds
    cards (itself when none does)."""
    asks = [] if capped else state.legal_asks()
    if asks:
        return AskMove(*asks[0])
    seat = state.current_player
    hand = set(state.hand(seat))
    set_id = max(state.uncalled_sets(), key=lambda s: (sum(c in hand for c in set_cards(s)), -s))
    others = [s for s in teammates(seat, state.num_players)
              if s != seat and state.hand_counts[s] > 0]
    other = others[0] if others else seat
    return CallMove(set_id, tuple((c, seat if c in hand else other) for c in set_cards(set_id)))


class FishTable(SeatedTable):
    """One Fish game at one table (its seats: common/seating.py). All methods run on the event loop;
    `lock` orders moves."""

    error = FishProtocolError
    state: FishState
    settings: FishTableSettings

    def __init__(self, table_id: str, state: FishState, seed: int | None, kinds: list[str],
                 names: list[str], settings: FishTableSettings, write: Writer):
        super().__init__(table_id, kinds, names, write)  # write: a FishRecords method
        self.state = state
        self.seed = seed
        self.settings = settings
        self.history: list[dict] = []  # every asked / called message sent, in order
        self.held: list[FishThought] = []  # the bots' beliefs, kept back until fish_over
        self.turn_started = 0.0
        self.deadline = 0.0
        self._deadline_timer: asyncio.TimerHandle | None = None
        self.done = asyncio.Event()

    @property
    def num_players(self) -> int:
        return self.state.num_players

    @property
    def moves(self) -> int:
        return len(self.state.events)

    async def open(self) -> None:
        deal = [[card_code(c) for c in hand] for hand in self.state.initial_hands]
        self.game_id = await self.write(
            "new_game", self.id, self.num_players, self.settings.calls, self.state.first_player,
            self.seed, deal, [(s.kind, s.name) for s in self.seats],
            {"move_deadline_s": self.settings.move_deadline_s,
             "reconnect_grace_s": self.settings.reconnect_grace_s,
             "max_moves": self.settings.max_moves})

    # --- what clients are told -------------------------------------------------------------
    def table_info(self) -> FishTableInfo:
        return FishTableInfo(table=self.id, game_id=self.game_id, status=self.status,
                             num_players=self.num_players, calls=self.settings.calls,
                             first_player=self.state.first_player,
                             players=[PlayerInfo(seat=i, kind=s.kind, name=s.name,
                                                 connected=s.conn is not None)
                                      for i, s in enumerate(self.seats)])

    def _turn(self) -> int | None:
        return None if self.state.is_terminal else self.state.current_player

    def welcome(self, seat: int | None) -> FishWelcome:
        state = self.state
        called = state.called
        sets = [FishSetInfo(set=s, name=set_name(s), cards=[card_code(c) for c in set_cards(s)],
                            team=called.get(s)) for s in range(num_sets(self.num_players))]
        return FishWelcome(**dict(self.table_info()), seat=seat,
                           hand=[card_code(c) for c in state.hand(seat)] if seat is not None
                           else [],
                           hand_counts=list(state.hand_counts), sets=sets,
                           score=list(state.score), history=self.history,
                           turn=self._turn() if self.status == "playing" else None,
                           move=self.moves, move_deadline_s=self.settings.move_deadline_s)

    def bot_wait(self) -> float:
        """How long yet one of our bots holds back its move: at a table with an open seat (a
        person, or an outside bot, may sit there), until `bot_delay_s` has passed since the last
        move (or the start), so that each move can be read before the next; at a table of bots
        only, never."""
        if self.bots_only:
            return 0.0
        return max(0.0, self.turn_started + self.settings.bot_delay_s - time.time())

    def _capped(self) -> bool:
        return self.moves >= self.settings.max_moves

    def _turn_message(self) -> FishTurn:
        asks = [] if self._capped() else self.state.legal_asks()
        return FishTurn(table=self.id, move=self.moves + 1,
                        asks=[(t, card_code(c)) for t, c in asks], must_call=not asks,
                        deadline=self.deadline, timeout_s=self.settings.move_deadline_s)

    # --- the game ---------------------------------------------------------------------------
    async def _start(self) -> None:
        self.status = "playing"
        await self.write("set_status", self.game_id, "playing")
        await self.broadcast(FishStart(**dict(self.table_info()), turn=self.state.current_player))
        await self._next_turn()

    async def _next_turn(self) -> None:
        """Tell the seat to move (lock held); an away seat's fallback comes as its own task,
        so a run of away seats never nests calls."""
        if self.state.is_terminal:
            await self._finish()
            return
        seat, move = self.state.current_player, self.moves + 1
        self.turn_started = time.time()
        self.deadline = self.turn_started + self.settings.move_deadline_s
        loop = asyncio.get_running_loop()
        self._deadline_timer = loop.call_later(
            self.settings.move_deadline_s,
            lambda: asyncio.ensure_future(self._late(move, "deadline")))
        spec = self.seats[seat]
        if spec.away:
            asyncio.ensure_future(self._late(move, "away"))
        elif spec.conn is not None:
            await self._send(spec.conn, self._turn_message())

    async def _late(self, move: int, reason: str) -> None:
        async with self.lock:
            if self.status == "playing" and self.moves + 1 == move:
                await self._fallback(reason)

    async def _fallback(self, reason: str) -> None:
        """Play fallback_move for the seat to move (lock held)."""
        assert reason in FALLBACKS
        await self._apply(self.state.current_player, fallback_move(self.state, self._capped()),
                          reason, None)

    def _check_move(self, seat: int, move: int | None) -> None:
        if self.status == "waiting":
            raise FishProtocolError("not_started", f"table {self.id} is waiting for players")
        if self.status != "playing":
            raise FishProtocolError("game_over", f"the game at table {self.id} is over")
        if move is not None and move != self.moves + 1:
            raise FishProtocolError("stale_move", f"your move is for move {move}; the table is "
                                                  f"at move {self.moves + 1}")

    async def ask(self, seat: int, target: int, card: str, move: int | None = None,
                  thinking: dict | None = None) -> None:
        """An ask from the connection at `seat`. Raises FishProtocolError, changing nothing."""
        async with self.lock:
            self._check_move(seat, move)
            if self.state.current_player != seat:
                raise FishProtocolError("not_your_turn", f"it is seat "
                                                         f"{self.state.current_player}'s turn, "
                                                         f"not seat {seat}'s")
            if self._capped():
                raise FishProtocolError("illegal_ask", f"the game has reached "
                                                       f"{self.settings.max_moves} moves: the "
                                                       "seat to move must call", "move-cap")
            try:
                card_index = card_id(card, self.num_players)
            except ValueError as err:
                raise FishProtocolError("illegal_ask", str(err), "card-not-in-play") from None
            await self._apply(seat, AskMove(target, card_index), None, thinking)

    async def call(self, seat: int, set_id: int, holders: dict[str, int],
                   move: int | None = None, thinking: dict | None = None) -> None:
        """A call from the connection at `seat`. Raises FishProtocolError, changing nothing."""
        async with self.lock:
            self._check_move(seat, move)
            try:
                assignment = tuple((card_id(c, self.num_players), s) for c, s in holders.items())
            except ValueError as err:
                raise FishProtocolError("illegal_call", str(err), "call-incomplete") from None
            await self._apply(seat, CallMove(set_id, assignment), None, thinking)

    async def bot_failed(self, seat: int, move: int) -> None:
        """One of our bots raised instead of answering its turn: play its fallback."""
        async with self.lock:
            if self.status == "playing" and self.state.current_player == seat and \
                    self.moves + 1 == move:
                await self._fallback("bot_error")

    def _engine_move(self, seat: int, move: Move):
        """The move on the rules engine; its IllegalMove becomes the protocol's error."""
        try:
            if isinstance(move, AskMove):
                return self.state.ask(move.target, move.card, asker=seat)
            return self.state.call(seat, move.set_id, move.assignment)
        except IllegalMove as err:
            if err.rule in ("not-your-turn", "call-not-your-turn"):
                code = "not_your_turn"
            elif err.rule == "game-over":
                code = "game_over"
            else:
                code = "illegal_ask" if isinstance(move, AskMove) else "illegal_call"
            raise FishProtocolError(code, str(err), err.rule) from None

    async def _apply(self, seat: int, move: Move, fallback: str | None,
                     thinking: dict | None) -> None:
        """Make a checked move (lock held): record it, tell everyone, go on."""
        holders_before = self.state.holders
        event = self._engine_move(seat, move)
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        number, state = self.moves, self.state
        think_ms = round((time.time() - self.turn_started) * 1000)
        thought = self._thought(seat, number, thinking, holders_before)
        common = {"move": number, "seat": seat, "turn": self._turn(),
                  "hand_counts": list(state.hand_counts), "fallback": fallback}
        if isinstance(event, Ask):
            msg = Asked(**common, target=event.target, card=card_code(event.card),
                        hit=event.success)
            row = {"target": event.target, "card": msg.card}
        else:
            holders = {card_code(c): s for c, s in event.assignment}
            team = state.called[event.set_id]
            msg = Called(**common, set=event.set_id, holders=holders, right=event.correct,
                         team=team, removed=list(event.removed), score=list(state.score))
            row = {"set_id": event.set_id, "holders": holders}
        await self.write("add_move", self._row(number, seat, event, row, think_ms, fallback,
                                               thought))
        self.history.append(msg.model_dump())
        await self.broadcast(msg)
        if thought is not None:
            self.held.append(thought)
        await self._next_turn()

    def _row(self, number, seat, event, row, think_ms, fallback, thought) -> dict:
        success = event.success if isinstance(event, Ask) else event.correct
        return fish_move_row(self.game_id, number, seat, "ask" if isinstance(event, Ask)
                             else "call", **row, success=success, think_ms=think_ms,
                             fallback=fallback,
                             belief=None if thought is None else thought.model_dump())

    def _thought(self, seat: int, number: int, thinking: dict | None,
                 holders: tuple[int, ...]) -> FishThought | None:
        """A bot's belief ({"kind", "cards": [[card id, seat, p], ...]}) with the true holders
        of the moment it moved."""
        if thinking is None:
            return None
        return FishThought(seat=seat, move=number, kind=thinking["kind"],
                           cards=[FishBelief(card=card_code(c), seat=s, p=p, holder=holders[c])
                                  for c, s, p in thinking["cards"]])

    async def _finish(self) -> None:
        state = self.state
        score = list(state.score)
        await self.write("finish", self.game_id, score)
        self.status = "finished"
        self._cancel_graces()
        winner = None if score[0] == score[1] else int(score[1] > score[0])
        await self.broadcast(FishOver(
            table=self.id, game_id=self.game_id, score=score, winner=winner,
            returns=[int(r) for r in state.returns()],
            deal=[[card_code(c) for c in hand] for hand in state.initial_hands],
            beliefs=self.held))
        self.done.set()

    def abandon(self) -> None:
        """Stop timers (server shutdown); the records keep the game as unfinished."""
        if self._deadline_timer is not None:
            self._deadline_timer.cancel()
        self._cancel_graces()
