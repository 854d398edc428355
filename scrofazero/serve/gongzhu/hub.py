"""The server's tables, the entry every client message goes through, and our bots as clients.

`Hub.receive(conn, text)` (common/client_hub.py) is the one path for a message from any client: a
WebSocket of a page or an outside bot, or a `BotClient` of ours, which rebuilds its view from
the messages it gets (protocol.SeatTracker) and answers with the same JSON an outside bot
sends. Each client message model has one handler (Hub.handlers). Bots are the registry's
players (agents/registry.py), built by seat kind; what one was thinking is its `decide`
explanation, whatever its class. Agents think in a thread pool and records are written on one
database thread, so the event loop never waits on either.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import numpy as np

from scrofazero.agents import PLAYERS, Explanation, check_real_game
from scrofazero.agents import decide as explained_move
from scrofazero.games.gongzhu.cards import SCORING_CARDS, card_code, card_index
from scrofazero.games.gongzhu.deals import load_deals, random_deal
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.nn.checkpoint import load_model
from scrofazero.serve.common.client_hub import ClientHub
from scrofazero.serve.common.config import PlayConfig, shipped
from scrofazero.serve.common.messages import OPEN, Join, Ping
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.common.thinking import FairThreads
from scrofazero.serve.gongzhu.messages import (
    CardBelief,
    CardValue,
    Create,
    Created,
    Next,
    Play,
    Thought,
    Watch,
)
from scrofazero.serve.gongzhu.protocol import SeatTracker, parse_client_message
from scrofazero.serve.gongzhu.records import Records, move_row
from scrofazero.serve.gongzhu.table import STORAGE_RETRY_S, MatchRules, Table, TableSettings

# Belief rows of the thinking panel, most important first: the pig, the sheep, the doubler, hearts.
BELIEF_CARDS = tuple(card_index(c) for c in ("SQ", "DJ", "C10")) + tuple(
    sorted((c for c in SCORING_CARDS if c // 13 == 1), reverse=True))


@dataclass
class HubSettings:
    checkpoint: str = "models/scrofazero.pt"  # network of the scrofazero and raw seats
    table: TableSettings = field(default_factory=TableSettings)
    # ^ deadlines and thinking of new tables
    bot_threads: int = 2  # threads our bots think in
    max_tables: int = 500  # live tables kept; the oldest finished ones are dropped beyond it
    seed: int | None = None  # seeds random deals and bots (None: fresh entropy)
    bot_match_threads: int = 1  # threads the bots of tables of bots only think in


def hub_settings(cfg: PlayConfig) -> HubSettings:
    """The Gongzhu hub's settings of a server (`cfg`): its network, bot threads, seed, and
    the deadlines and thinking of its tables."""
    return HubSettings(checkpoint=shipped(cfg.checkpoint), bot_threads=cfg.bot_threads,
                       seed=cfg.seed, bot_match_threads=cfg.bot_match_threads,
                       table=TableSettings(move_deadline_s=cfg.move_deadline_s,
                                           reconnect_grace_s=cfg.reconnect_grace_s,
                                           thinking=cfg.thinking, next_hand_s=cfg.next_hand_s,
                                           idle_expire_s=cfg.idle_expire_s))


class Hub(ClientHub):
    """Tables by id, their bots, and the records database."""

    error = ProtocolError
    parse = staticmethod(parse_client_message)

    def __init__(self, records: Records, settings: HubSettings, limits=None):
        super().__init__(records, settings, "", limits=limits)
        self.tables: dict[str, Table] = {}
        self._model = None
        self._standard = None
        self._moves: list[tuple[dict, asyncio.Future]] = []  # waiting for the next commit
        self._flusher: asyncio.Task | None = None

    # --- shared resources ------------------------------------------------------------------
    async def write_move(self, *fields) -> None:
        """Record one move (Records.move_row's fields); returns once it is committed. Moves that
        arrive while a commit runs wait for the next one and share it (a group commit), ahead
        of the writes that make new tables (client_hub.RecordsThread)."""
        done = asyncio.get_running_loop().create_future()
        self._moves.append((move_row(*fields), done))
        if self._flusher is None:
            self._flusher = asyncio.ensure_future(self._flush_moves())
        await done

    async def _flush_moves(self) -> None:
        try:
            while self._moves:
                batch, self._moves = self._moves, []
                try:
                    await asyncio.get_running_loop().run_in_executor(
                        self.db_thread, self.records.add_moves, [row for row, _ in batch])
                except Exception as err:  # noqa: BLE001  (handed to every waiting table)
                    for _, done in batch:
                        done.set_exception(err)
                else:
                    for _, done in batch:
                        done.set_result(None)
        finally:
            self._flusher = None

    def model(self):
        if self._model is None:
            self._model = load_model(self.settings.checkpoint)
        return self._model

    def standard_deals(self):
        if self._standard is None:
            self._standard = load_deals()
        return self._standard

    def warm(self) -> dict[str, float]:
        """Play one move of every registered player on a throwaway deal, so that compiling
        (Mr. Greed's numba kernels) and loading (the network) happen before the server is
        ready, not in a table's first move; returns the seconds each took. The network players
        are skipped when the network does not load (their tables are refused by name then).
        Runs off the event loop."""
        try:
            self.model()
            kinds = list(PLAYERS)
        except (OSError, ValueError):
            kinds = [k for k, spec in PLAYERS.items() if not spec.network]
        taken = {}
        for kind in kinds:
            start = time.perf_counter()
            state = GongzhuState(random_deal(np.random.default_rng(0)))
            decide(self.make_bot(kind), state.view(state.current_player),
                   np.random.default_rng(0))
            taken[kind] = time.perf_counter() - start
        return taken

    def make_bot(self, kind: str):
        """The registry's player `kind` with its default settings (and the server's network)."""
        spec = PLAYERS[kind]
        bot = spec.make(model=self.model() if spec.network else None)
        check_real_game(bot, "a table")  # a player that would see the true deal never sits
        return bot

    # --- tables -----------------------------------------------------------------------------
    def match_deals(self, chosen: list[int]):
        """Hand k -> (deal, standard number), asked for k = 1, 2, ... in order: the standard
        deal `chosen[k - 1]` for the hands the creator chose (an open deal: the standard deals
        are public, so each seat's own cards name it, and with it every hand), a fresh random
        deal for every later hand, so no seat can know those. Refuses (bad_message) a number
        that is no standard deal's."""
        deals = self.standard_deals()
        for number in chosen:
            if not 0 <= number < len(deals):
                raise ProtocolError("bad_message", f"'deal' must be standard deal numbers "
                                                   f"0..{len(deals) - 1} or null, got {number}")
        rng = np.random.default_rng(self.fresh_seed())  # this table's own

        def deal_of(hand: int):
            if hand <= len(chosen):
                return deals[chosen[hand - 1]], chosen[hand - 1]
            return random_deal(rng), None

        return deal_of

    async def create_table(self, msg: Create, address: str | None = None
                           ) -> tuple[Table, dict[int, str]]:
        """A new table from a checked `create` message of the client at `address` (None: not
        limited); returns it and the open seats' tokens."""
        kinds = list(msg.seats)
        if msg.public and msg.deal is not None:
            raise ProtocolError("bad_message", f"a chosen deal ('deal': {msg.deal}) is for "
                                               "private tables only: whoever chose it knows "
                                               "every hand, so a public table always deals at "
                                               "random")
        chosen = msg.chosen_deals()
        deals = self.match_deals(chosen)
        async with self.admitted(address, kinds):  # counted from now: no overshoot
            if any(PLAYERS[k].network for k in kinds if k != OPEN):
                try:
                    await asyncio.get_running_loop().run_in_executor(self.bot_threads, self.model)
                except (OSError, ValueError) as err:
                    raise ProtocolError("bad_message", f"the network players' seats need a "
                                                       f"network: {err}") from None
            asked = {"thinking": msg.thinking, "live_thinking": msg.live_thinking}
            settings = TableSettings(**{**vars(self.settings.table),
                                        **{k: v for k, v in asked.items() if v is not None}})
            names = [f"open seat {i}" if k == OPEN else PLAYERS[k].title
                     for i, k in enumerate(kinds)]
            table_id = self.new_table_id()
            table = Table(table_id, deals, msg.leader, kinds, names, settings, self.write,
                          self.write_move, MatchRules(msg.hands, msg.target, msg.public,
                                                      len(chosen)))
            await table.open()
            self.add_table(table, address, settings.idle_expire_s)
        seed = self.fresh_seed()
        threads = self.bot_match_threads if table.bots_only else self.bot_threads
        tokens = await self.join_bots(
            table, Join, lambda seat, kind: BotClient(self, self.make_bot(kind), seed, threads))
        return table, tokens

    async def claim(self, table_id: str, seat: int, name: str | None) -> str:
        """An open seat of a public table for whoever asks first: its token."""
        return await self.table(table_id).claim(seat, name)

    # --- the handlers of the client messages (the one path: ClientHub.receive) -------------
    async def _on_create(self, conn, msg: Create, _thinking) -> None:
        table, tokens = await self.create_table(msg, getattr(conn, "address", None))
        await conn.send(Created.of(table, tokens).model_dump())

    async def _on_next(self, conn, _msg: Next, _thinking) -> None:
        table, seat = self._seated(conn, "before saying next")
        await table.ready_for_next(seat)

    async def _on_play(self, conn, msg: Play, thinking: dict | None) -> None:
        """`thinking` (a Thought's fields) comes only with our own bots' moves."""
        table, seat = self._seated(conn, "before playing")
        await table.play(seat, msg.card_index, msg.ply,
                         thinking if isinstance(conn, BotClient) else None)

    handlers = {Ping: ClientHub._on_ping, Create: _on_create, Join: ClientHub._on_join,
                Watch: ClientHub._on_watch, Play: _on_play,
                Next: _on_next}  # one per client message (CLIENT_MESSAGES)


class BotClient:
    """One of our players at a seat, talking the protocol like an outside bot. Every hand of a
    match begins with a fresh welcome, which resets its tracker; a move the records refused
    (`storage`) is sent again shortly."""

    def __init__(self, hub: Hub, agent, seed: int, threads: FairThreads):
        self.hub = hub
        self.agent = agent
        self.seed = seed
        self.threads = threads  # the pool it thinks in
        self.tracker = SeatTracker()
        self.errors: list[dict] = []
        self.task: asyncio.Task | None = None
        self.last_move: tuple[str, dict | None] | None = None  # the Play frame and its thinking

    async def send(self, msg: dict) -> None:
        if msg["type"] == "error":  # e.g. a move that came after its deadline's fallback
            self.errors.append(msg)
            if msg["code"] == "storage" and self.last_move is not None:
                self.task = asyncio.ensure_future(self._resend(self.last_move))
            return
        self.tracker.on_message(msg)
        if msg["type"] == "your_turn":
            # think off the event loop; the move comes back through Hub.receive
            self.task = asyncio.ensure_future(self._move(msg))

    async def close(self, reason: str) -> None:
        pass

    async def _move(self, turn: dict) -> None:
        view = self.tracker.view()
        table, seat = self.hub.tables[turn["table"]], self.tracker.seat
        rng = np.random.default_rng([self.seed, seat, turn["ply"]])
        try:
            # in turn with the other clients' tables: one share per client, then per table
            card, thinking = await self.threads.run(table.creator, table.id, decide, self.agent,
                                                    view, rng)
        except Exception:  # noqa: BLE001  (a crashing bot never blocks its table: fallback)
            await table.bot_failed(seat, turn["ply"])
            return
        self.last_move = (Play(card=card_code(card), ply=turn["ply"]).model_dump_json(), thinking)
        await self.hub.receive(self, *self.last_move)

    async def _resend(self, move: tuple[str, dict | None]) -> None:
        """The move again (refused as not_your_turn if a fallback has played it meanwhile)."""
        await asyncio.sleep(STORAGE_RETRY_S)
        await self.hub.receive(self, *move)


def decide(agent, view: InfoView, rng: np.random.Generator) -> tuple[int, dict | None]:
    """The agent's card and, for a player that explains its moves, what it was thinking (the
    fields of a Thought)."""
    card, why = explained_move(agent, view, rng)
    return card, (None if why is None else thinking_of(why, view).model_dump())


def thinking_of(why: Explanation, view: InfoView) -> Thought:
    """The thinking panel's view of an explanation: each legal card's value, and the belief
    about the important cards the mover cannot see (BELIEF_CARDS, most important first)."""
    values = [CardValue(card=card_code(c), value=None if v is None else round(v, 2))
              for c, v in zip(view.legal_actions(), why.values)]
    belief = [] if why.belief is None else [
        CardBelief(card=card_code(c), p=[round(float(p), 4) for p in why.belief[c]])
        for c in BELIEF_CARDS if view.unseen >> c & 1]
    return Thought(forced=why.forced, values=values, belief=belief, deals=why.deals,
                   ess=round(float(why.ess), 2))
