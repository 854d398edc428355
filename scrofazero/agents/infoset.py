"""One search over the player's own information in the last tricks: its later cards chosen once
per information state across the sampled worlds (docs/rules.md section 13, step 4).

The player's default (PIMC) values each legal card in each weighted world by the exact endgame
(agents/endgame.py), in which every seat, the player included, sees every card from the next
play on: it may plan a different later card in two worlds it cannot tell apart (strategy
fusion). `InfosetSearch` removes that for the player's next `depth` decisions:

- the worlds start together (the player cannot tell them apart now);
- the other seats play by a model of their play in each world: the behaviour network's most
  likely card for that seat's hand in that world and the public history (nn/behaviour.py), or
  at the opponents' seats Mr. Greed's own program (agents/mr_greed.py: the ceiling against
  Mr. Greeds); the worlds in which they play differently part, since the player sees the
  plays;
- at each of its next `depth` decisions (a forced card is none) the player chooses ONE card
  for all the worlds still together (the one with the best weighted value over them), and after
  the last of them each world's value is the exact endgame's (every seat sees every card from
  there on).

Depth 0 is the player's PIMC exactly. The value of a card in a world is what that world pays
under the shared plan, so the weighted mean over the worlds is the card's expected value and the
player's argmax is unchanged (agents/scrofazero_agent.py). The model is deterministic (the
network's most likely card, not its distribution): a world's future is one line of play, and a
tree over the distribution would branch at every one of the others' plays.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from scrofazero.agents.endgame import EndgameSolver, final_value, play
from scrofazero.agents.mr_greed import MrGreed
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.nn.behaviour import BehaviourModel
from scrofazero.nn.belief import Positions

OTHERS = ("behaviour", "greed")  # the models of the other seats' plays
_CARD_BITS = np.left_shift(np.int64(1), np.arange(NUM_CARDS, dtype=np.int64))  # [52]
_SUIT_MASK = np.int64(0x1FFF)


@dataclass
class _Group:
    """Worlds the player cannot tell apart: one public state, a hand per world.

    rows: [G] the worlds' rows of the root; hands: [G, 4] int64 52-bit masks; piles [4], trick
    [4] (int64), tl, leader: the public state all of them share; history: the (seat, card)
    plays of the hand so far."""

    rows: np.ndarray
    hands: np.ndarray
    piles: np.ndarray
    trick: np.ndarray
    tl: int
    leader: int
    history: tuple[tuple[int, int], ...]
    voids: tuple[int, ...]  # per seat, the suits it has shown to be void in (4-bit masks)

    @property
    def mover(self) -> int:
        return (self.leader + self.tl) & 3

    def after(self, card: int, keep: np.ndarray | None = None) -> _Group:
        """The group (or its worlds `keep`, a [G] bool mask) after the mover plays `card`."""
        seat = self.mover
        hands = self.hands if keep is None else self.hands[keep]
        hands = hands.copy()
        hands[:, seat] &= ~_CARD_BITS[card]
        piles, trick = self.piles.copy(), self.trick.copy()
        tl, leader = play(card, np.zeros(4, np.int64), piles, trick, self.tl, self.leader)
        rows = self.rows if keep is None else self.rows[keep]
        voids = list(self.voids)
        if self.tl and card // 13 != self.trick[0] // 13:
            voids[seat] |= 1 << int(self.trick[0] // 13)
        return _Group(rows, hands, piles, trick, int(tl), int(leader),
                      self.history + ((seat, card),), tuple(voids))

    def view(self, seat: int, row: int, first_leader: int) -> InfoView:
        """What `seat` knows in world `row` of the group."""
        sizes = tuple(int(h).bit_count() for h in self.hands[0])
        return InfoView(seat, int(self.hands[row, seat]), first_leader, self.leader,
                        tuple(int(c) for c in self.trick[:self.tl]), self.history,
                        tuple(int(p) for p in self.piles), self.voids, sizes)

    def legal(self) -> np.ndarray:
        """[G] 52-bit masks of the mover's legal cards in each world."""
        hand = self.hands[:, self.mover]
        if self.tl == 0:
            return hand
        follow = hand & (_SUIT_MASK << np.int64(13 * (int(self.trick[0]) // 13)))
        return np.where(follow != 0, follow, hand)


def _bools(masks: np.ndarray) -> np.ndarray:
    """[G, 52] bool of [G] 52-bit masks."""
    return (masks[:, None] & _CARD_BITS[None, :]) != 0


class InfosetSearch:
    """The exact values of a decision with the player's next `depth` decisions shared across
    the worlds it cannot tell apart (see the module's docstring).

    Args:
        solver: the exact endgame (its table is shared with the player's PIMC).
        model: the behaviour network, the model of the other seats' plays.
        depth: the player's later decisions chosen once per information state (0: PIMC).
        opponents: OTHERS: `behaviour` (the network at all three other seats) or `greed` (Mr.
            Greed's own program at the two opponents' seats, each call on its own seeded
            draws, the partner by the network: the ceiling against Mr. Greeds).
        fused: the diagnostic twin: the same lookahead and model, but each world's own best
            later cards (PIMC's strategy fusion against the model); against the shared search
            it isolates what sharing the decisions is worth from what the model is.
    """

    def __init__(self, solver: EndgameSolver, model: BehaviourModel, depth: int,
                 opponents: str = "behaviour", fused: bool = False):
        if depth < 0:
            raise ValueError(f"depth={depth}: choose 0 or more")
        if opponents not in OTHERS:
            raise ValueError(f"opponents={opponents!r}: choose one of {', '.join(OTHERS)}")
        self.solver, self.model, self.depth, self.fused = solver, model, depth, fused
        self.greed = MrGreed() if opponents == "greed" else None
        self._first_leader = self._seat = 0  # of the decision being searched
        self.model_calls = 0  # the behaviour network's batched forwards, over the player's life
        self._weights = np.zeros(0)
        self._stop: int | None = None

    def card_values(self, view: InfoView, hands: np.ndarray, weights: np.ndarray,
                    nodes: int | None = None) -> np.ndarray | None:
        """[D, L] the value of each legal card (`view.legal_actions()` order) in each world
        (hands [D, 4] current 52-bit masks), from the player's seat, under the best shared plan;
        None when the endgame's searches take more than `nodes` nodes (None: no limit)."""
        d = len(hands)
        root = _Group(np.arange(d), np.asarray(hands, dtype=np.uint64).astype(np.int64),
                      np.array(view.piles, np.int64),
                      np.array(list(view.trick) + [-1] * (4 - len(view.trick)), np.int64),
                      len(view.trick), view.leader, view.history, view.voids)
        self._weights = np.asarray(weights, dtype=np.float64)
        self._first_leader = view.first_leader
        self._seat = view.seat
        self._stop = self.solver.nodes + nodes if nodes is not None else None
        try:
            return self._decide(root, self.depth)
        except _OutOfNodes:
            return None

    def _decide(self, group: _Group, depth: int) -> np.ndarray:
        """[G, L] the value of each of the player's legal cards in each world of `group`."""
        legal = [int(c) for c in np.flatnonzero(_bools(group.legal()[:1])[0])]
        if depth == 0:
            left = None if self._stop is None else max(self._stop - self.solver.nodes, 1)
            out = self.solver.card_values(
                group.hands, np.tile(group.piles, (len(group.rows), 1)),
                np.tile(group.trick, (len(group.rows), 1)), np.full(len(group.rows), group.tl),
                np.full(len(group.rows), group.leader), legal, left)
            if out is None:
                raise _OutOfNodes
            return out
        out = np.empty((len(group.rows), len(legal)))
        later = depth - 1 if len(legal) > 1 else depth  # a forced card is no decision
        for j, card in enumerate(legal):
            out[:, j] = self._advance(group.after(card), later)
        return out

    def _advance(self, group: _Group, depth: int) -> np.ndarray:
        """[G] each world's value, from the player's seat, of the position `group` under its
        plan: the others play by the model until the player moves again, then its shared
        choice."""
        if group.tl == 0 and not group.hands.any():  # the hand is over
            value = float(final_value(group.piles))
            return np.full(len(group.rows), value if self._seat % 2 == 0 else -value)
        if group.mover == self._seat:
            values = self._decide(group, depth)  # [G, L]
            if values.shape[1] == 1:
                return values[:, 0]
            if self.fused:  # each world its own best card
                return values.max(axis=1)
            mean = self._weights[group.rows] @ values  # ties: the lowest card, as the player
            return values[:, int(np.argmax(mean))]
        cards = self._model_cards(group)
        out = np.empty(len(group.rows))
        for card in np.unique(cards):
            keep = cards == card
            out[keep] = self._advance(group.after(int(card), keep), depth)
        return out

    @torch.inference_mode()
    def _model_cards(self, group: _Group) -> np.ndarray:
        """[G] the card the mover plays in each world: its only legal card, else Mr. Greed's
        program's (an opponent, with `opponents=greed`), else the behaviour network's most
        likely one."""
        legal = group.legal()
        bools = _bools(legal)  # [G, 52]
        if (bools.sum(axis=1) == 1).all():
            return bools.argmax(axis=1)
        seat = group.mover
        if self.greed is not None and seat % 2 != self._seat % 2:
            n = len(group.history)
            return np.array([self.greed.act(group.view(seat, r, self._first_leader),
                                            np.random.default_rng([n, seat, int(row)]))
                             for r, row in enumerate(group.rows)])
        n = len(group.history)
        cards = np.zeros((1, NUM_CARDS), np.int64)
        seats = np.zeros((1, NUM_CARDS), np.int64)
        if n:
            seats[0, :n], cards[0, :n] = zip(*group.history)
        public = Positions(np.zeros((1, NUM_CARDS), bool), cards, seats,
                           np.array([n], np.int64), np.array([seat], np.int64))
        pre = self.model.public_pre(public)  # [1, hidden]
        # worlds often agree on the mover's hand: each hand is evaluated once
        hands, back = np.unique(group.hands[:, seat], return_inverse=True)
        logits = self.model.net.hand_logits(
            pre, torch.zeros(len(hands), dtype=torch.int64),
            torch.from_numpy(_bools(hands).astype(np.float32))).numpy()[back.reshape(-1)]
        self.model_calls += 1
        return np.where(bools, logits, -np.inf).argmax(axis=1)


class _OutOfNodes(Exception):
    """The endgame's searches passed the decision's node budget."""
