"""The server's Fish tables, the entry every Fish client message goes through, and our Fish bots
as clients.

`FishHub.receive(conn, text)` (common/client_hub.py) is the one path for a message from any
client of `/ws/fish`: a page, an outside bot, or a `FishBotClient` of ours, which rebuilds its
seat's view from the messages it gets (`SeatView`) and answers with the same JSON an outside bot
sends. A socket follows one live Fish table only, as at /ws. Bots are the Fish roster's players
(fish/players/roster.py) by seat kind; they think in a thread pool and the records are written
on the server's one database thread (one writer for the one database), so the event loop never
waits on either.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np

from scrofazero.fish.players.roster import make_fish_player
from scrofazero.fish.players.scorer import DEFAULT_MODEL, load_scorer
from scrofazero.games.fish.cards import card_code, card_id, set_cards
from scrofazero.games.fish.events import Ask, Call, Event
from scrofazero.games.fish.rules import AskMove, FishState, FishView, Params
from scrofazero.serve.common.client_hub import ClientHub
from scrofazero.serve.common.config import shipped
from scrofazero.serve.common.messages import OPEN, Ping
from scrofazero.serve.common.thinking import FairThreads
from scrofazero.serve.fish.messages import (
    FishAsk,
    FishCall,
    FishCreate,
    FishCreated,
    FishJoin,
    FishProtocolError,
    FishWatch,
    fish_seat_kinds,
    parse_fish_message,
)
from scrofazero.serve.fish.records import FishRecords
from scrofazero.serve.fish.table import FishTable, FishTableSettings


@dataclass
class FishHubSettings:
    table: FishTableSettings = field(default_factory=FishTableSettings)  # new tables' settings
    bot_threads: int = 2  # threads our Fish bots think in
    max_tables: int = 500  # live tables kept; the oldest finished ones are dropped beyond it
    seed: int | None = None  # seeds random deals and bots (None: fresh entropy)
    checkpoint: str = DEFAULT_MODEL  # the learned player's scorer
    bot_match_threads: int = 1  # threads the bots of tables of bots only think in


class FishHub(ClientHub):
    """Fish tables by id, their bots, and the Fish records."""

    error = FishProtocolError
    parse = staticmethod(parse_fish_message)
    what = "Fish table"

    def __init__(self, records: FishRecords, settings: FishHubSettings,
                 db_thread: Executor | None = None, limits=None):
        super().__init__(records, settings, "fish-", db_thread, limits)
        self.tables: dict[str, FishTable] = {}
        self._scorer = None
        self._kinds: tuple[str, ...] | None = None

    def scorer(self):
        """The learned player's scorer, loaded once (off the event loop)."""
        if self._scorer is None:
            self._scorer = load_scorer(self.settings.checkpoint)
        return self._scorer

    def seat_kinds(self) -> tuple[str, ...]:
        """The seat kinds this server offers: every Fish player's, less `learned` when its
        scorer does not load (checked once, off the event loop, at start)."""
        if self._kinds is None:
            try:
                self.scorer()
                self._kinds = fish_seat_kinds()
            except (OSError, ValueError, RuntimeError):
                self._kinds = tuple(k for k in fish_seat_kinds() if k != "learned")
        return self._kinds

    def make_bot(self, kind: str, seed: int):
        runtime = {"model": self.scorer()} if kind == "learned" else {}
        return make_fish_player(kind, seed=seed, **runtime)

    # --- tables -----------------------------------------------------------------------------
    async def create_table(self, msg: FishCreate, address: str | None = None
                           ) -> tuple[FishTable, dict[int, str]]:
        """A new table from a checked `fish_create` of the client at `address` (None: not
        limited); returns it and the open seats' tokens."""
        kinds, n = list(msg.seats), len(msg.seats)
        if msg.first >= n:
            raise FishProtocolError("bad_message", f"'first' must be a seat 0..{n - 1}, got "
                                                   f"{msg.first}")
        if msg.deal is not None and msg.seed is not None:
            raise FishProtocolError("bad_message", "give 'seed' or 'deal', not both")
        calls = msg.calls or self.settings.table.calls
        params = Params(num_players=n, calls=calls)
        seed = msg.seed
        try:
            if msg.deal is not None:
                hands = [[card_id(code, n) for code in hand] for hand in msg.deal]
                state = FishState.new(params, hands, first_player=msg.first)
            else:
                seed = self.fresh_seed() if seed is None else seed
                state = FishState.deal(params, seed, first_player=msg.first)
        except ValueError as err:
            raise FishProtocolError("bad_message", f"'deal': {err}"[:300]) from None
        if "learned" in kinds:
            offered = await asyncio.get_running_loop().run_in_executor(self.bot_threads,
                                                                       self.seat_kinds)
            if "learned" not in offered:  # its network is not there: said without the path
                raise FishProtocolError("bad_message", "this server has no network for the "
                                                       "learned seats; choose another kind")
        async with self.admitted(address, kinds):  # counted from now: no overshoot
            settings = FishTableSettings(**{**vars(self.settings.table), "calls": calls})
            names = [f"open seat {i}" if k == OPEN else f"{k} bot" for i, k in enumerate(kinds)]
            table_id = self.new_table_id()
            table = FishTable(table_id, state, seed, kinds, names, settings, self.write)
            await table.open()
            self.add_table(table, address, settings.idle_expire_s)
        bot_seed = self.fresh_seed()
        threads = self.bot_match_threads if table.bots_only else self.bot_threads
        tokens = await self.join_bots(table, FishJoin, lambda seat, kind: FishBotClient(
            self, self.make_bot(kind, bot_seed + seat), kind, threads))
        return table, tokens

    # --- the handlers of the client messages (the one path: ClientHub.receive) -------------
    async def _on_create(self, conn, msg: FishCreate, _thinking) -> None:
        table, tokens = await self.create_table(msg, getattr(conn, "address", None))
        await conn.send(FishCreated.of(table, tokens).model_dump())

    async def _on_ask(self, conn, msg: FishAsk, thinking: dict | None) -> None:
        """`thinking` (a bot's belief) comes only with our own bots' moves."""
        table, seat = self._seated(conn, "(fish_join) before moving")
        await table.ask(seat, msg.target, msg.card, msg.move,
                        thinking if isinstance(conn, FishBotClient) else None)

    async def _on_call(self, conn, msg: FishCall, thinking: dict | None) -> None:
        table, seat = self._seated(conn, "(fish_join) before moving")
        await table.call(seat, msg.set, msg.holders, msg.move,
                         thinking if isinstance(conn, FishBotClient) else None)

    handlers = {Ping: ClientHub._on_ping, FishCreate: _on_create, FishJoin: ClientHub._on_join,
                FishWatch: ClientHub._on_watch, FishAsk: _on_ask,
                FishCall: _on_call}  # one per FISH_CLIENT_MESSAGES


def make_fish_hub(cfg, records, db_thread: Executor, limits=None) -> FishHub:
    """The Fish hub of a server (`cfg` a PlayConfig): its deadlines, its bots' pace, threads and
    seed, the engine of the server's records (`records.engine`) and their database thread
    (`db_thread`, one writer for the one database); Fish games a previous server left
    unfinished are marked abandoned."""
    fish_records = FishRecords(records.engine)
    fish_records.abandon_unfinished()
    table = FishTableSettings(move_deadline_s=cfg.move_deadline_s,
                              reconnect_grace_s=cfg.reconnect_grace_s,
                              idle_expire_s=cfg.idle_expire_s,
                              bot_delay_s=cfg.fish_bot_delay)
    return FishHub(fish_records, FishHubSettings(table=table, bot_threads=cfg.bot_threads,
                                                 seed=cfg.seed,
                                                 bot_match_threads=cfg.bot_match_threads,
                                                 checkpoint=shipped(cfg.fish_checkpoint)),
                   db_thread=db_thread, limits=limits)


class SeatView:
    """One seat's view rebuilt from the server's messages alone (fish_welcome, asked, called):
    its hand, the public hand counts, the uncalled sets and the moves made."""

    def __init__(self, welcome: dict):
        n = self.num_players = welcome["num_players"]
        self.seat = welcome["seat"]
        self.calls = welcome["calls"]
        self.hand = {card_id(c, n) for c in welcome["hand"]}
        self.hand_counts = list(welcome["hand_counts"])
        self.uncalled = {s["set"] for s in welcome["sets"] if s["team"] is None}
        self.moves = welcome["move"]

    def event(self, msg: dict) -> Event:
        """Take in an asked or called message; returns its public event."""
        n, me = self.num_players, self.seat
        if msg["type"] == "asked":
            card = card_id(msg["card"], n)
            if msg["hit"]:
                if msg["target"] == me:
                    self.hand.discard(card)
                if msg["seat"] == me:
                    self.hand.add(card)
            event = Ask(asker=msg["seat"], target=msg["target"], card=card, success=msg["hit"])
        else:
            self.hand -= set(set_cards(msg["set"]))
            self.uncalled.discard(msg["set"])
            assignment = tuple(sorted((card_id(c, n), s) for c, s in msg["holders"].items()))
            event = Call(caller=msg["seat"], set_id=msg["set"], assignment=assignment,
                         correct=msg["right"], removed=tuple(msg["removed"]))
        self.hand_counts = list(msg["hand_counts"])
        self.moves = msg["move"]
        return event

    def view(self, turn: dict | None) -> FishView:
        """The engine's FishView of this seat: with `turn` (its fish_turn) the legal asks and
        must_call, else none."""
        n = self.num_players
        asks = tuple((t, card_id(c, n)) for t, c in turn["asks"]) if turn else ()
        return FishView(seat=self.seat, num_players=n, hand=tuple(sorted(self.hand)),
                        hand_counts=tuple(self.hand_counts),
                        uncalled_sets=tuple(sorted(self.uncalled)), legal_asks=asks,
                        must_call=bool(turn and turn["must_call"]))


def belief_summary(player, kind: str, view: FishView) -> dict | None:
    """For each card `view`'s seat cannot see (not in its hand, in an uncalled set): the seat
    its belief puts it with likeliest and that probability; None for a player without one."""
    probs = player.belief()
    if probs is None:
        return None
    hand = set(view.hand)
    cards = []
    for set_id in view.uncalled_sets:
        for card in set_cards(set_id):
            if card not in hand:
                seat = int(np.argmax(probs[:, card]))
                cards.append([card, seat, round(float(probs[seat, card]), 3)])
    return {"kind": kind, "cards": cards}


class FishBotClient:
    """One of our Fish players at a seat, talking the protocol like an outside bot. Its
    player is told every public event in order and asked `act` on each fish_turn and, at an
    any_time table, `call_now` once after every move; all of that runs in the hub's bot threads,
    one job at a time per bot, so a player is never used from two threads at once."""

    def __init__(self, hub: FishHub, player, kind: str, threads: FairThreads):
        self.hub, self.player, self.kind = hub, player, kind
        self.threads = threads  # the pool it thinks in
        self.seen: SeatView | None = None
        self.table_id: str | None = None
        self.reset_args: tuple | None = None
        self.pending: list[Event] = []
        self.turn: dict | None = None
        self.checked = -1  # moves made when call_now was last asked
        self.over = False
        self.errors: list[dict] = []
        self.task: asyncio.Task | None = None

    async def send(self, msg: dict) -> None:
        kind = msg["type"]
        if kind == "error":  # e.g. a move that went stale while it thought
            self.errors.append(msg)
            return
        if kind == "fish_welcome":
            self.seen, self.table_id = SeatView(msg), msg["table"]
            # our bots join when the table is made, before any move: the hand is as dealt
            self.reset_args = (msg["num_players"], msg["seat"], sorted(self.seen.hand))
            self.pending = []
        elif kind in ("asked", "called"):
            assert self.seen is not None  # fish_welcome came first: our bots join before a move
            self.pending.append(self.seen.event(msg))
            self.turn = None
        elif kind == "fish_turn":
            self.turn = msg
        elif kind == "fish_over":
            self.over = True
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._run())

    async def close(self, reason: str) -> None:
        pass

    def _table(self) -> FishTable | None:
        """The table it sits at (None: gone from the hub, or not joined yet)."""
        return None if self.table_id is None else self.hub.tables.get(self.table_id)

    def _job(self) -> tuple[str, dict | None] | None:
        """What to think about next: its turn ("act"), a chance to call ("call_now"), or None."""
        if self.over or self.seen is None:
            return None
        if self.turn is not None and self.turn["move"] == self.seen.moves + 1:
            turn, self.turn = self.turn, None
            return "act", turn
        if self.seen.calls == "any_time" and self.checked < self.seen.moves and \
                self.seen.uncalled:
            self.checked = self.seen.moves
            return "call_now", None
        return None

    async def _run(self) -> None:
        while (job := self._job()) is not None:
            what, turn = job
            assert self.seen is not None  # (a job is only found once it is)
            reset, self.reset_args = self.reset_args, None
            events, self.pending = self.pending, []
            view = self.seen.view(turn)
            move_no = self.seen.moves + 1
            table = self._table()
            owner = None if table is None else table.creator
            try:
                # in turn with the other clients' tables: one share per client, then per table
                move, thinking = await self.threads.run(owner, self.table_id, self._think, reset,
                                                        events, what, view)
            except Exception:  # noqa: BLE001  (a crashing bot never blocks its table: fallback)
                if what == "act":
                    await self._failed(view.seat, move_no)
                continue
            if move is None:
                continue
            await self._hold_back()
            refused = len(self.errors)
            await self.hub.receive(self, json.dumps(move_message(move, move_no)), thinking)
            if what == "act" and any(e["code"] in ("illegal_ask", "illegal_call")
                                     for e in self.errors[refused:]):
                await self._failed(view.seat, move_no)  # a move the rules refuse: fallback

    async def _hold_back(self) -> None:
        """Wait as long as the table asks of our bots before a move (FishTable.bot_wait: at a
        table with a person, the last move stays readable a while). A move made meanwhile by
        another seat makes this one stale: the table refuses it and the bot thinks again."""
        table = self._table()
        wait = 0.0 if table is None else table.bot_wait()
        if wait > 0:
            await asyncio.sleep(wait)

    async def _failed(self, seat: int, move_no: int) -> None:
        table = self._table()
        if table is not None:
            await table.bot_failed(seat, move_no)

    def _think(self, reset, events, what: str, view: FishView):
        """In a bot thread: bring the player up to date, then decide (None: no call now)."""
        player = self.player
        if reset is not None:
            player.reset(*reset)
        for event in events:
            player.observe(event)
        move = player.act(view) if what == "act" else player.call_now(view)
        if move is None:
            return None, None
        return move, belief_summary(player, self.kind, view)


def move_message(move, move_no: int) -> dict:
    """The protocol message of an engine move (AskMove or CallMove)."""
    if isinstance(move, AskMove):
        return {"type": "ask", "target": int(move.target), "card": card_code(move.card),
                "move": move_no}
    return {"type": "call", "set": int(move.set_id), "move": move_no,
            "holders": {card_code(c): int(s) for c, s in move.assignment}}
