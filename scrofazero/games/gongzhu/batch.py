"""Gongzhu as pure functions over batches of full-information states at any ply.

The batched state that search, self-play, the evaluator and the players use. Unlike the engine
benchmark's LockstepRandomGames (benchmarks/lockstep_random.py: games in lockstep, tuned for
random play), a `StateBatch` row can be at any point of any game, and `step` returns a new batch
instead of mutating: this is what tree search needs (gather parents, step, store children).
`GongzhuRules` exposes these functions as the batched-game protocol that search/ talks to.
Checked against rules.GongzhuState in tests.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scrofazero.games.gongzhu.cards import NUM_CARDS, SCORING_BIT, SUIT_MASK
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.games.gongzhu.scoring import batch_pile_scores, batch_team_returns

_SUIT_MASK = np.array(SUIT_MASK, dtype=np.uint64)  # [4]
_SHIFTS = np.arange(NUM_CARDS, dtype=np.uint64)  # [52]
# Scoring bit of each card, plus a trailing 0 so the -1 padding of a trick indexes to 0.
_SCORING_BIT = np.array(SCORING_BIT + [0], dtype=np.int32)  # [53], [-1] -> 0


@dataclass(frozen=True)
class StateBatch:
    """B full-information Gongzhu states.

    hands [B, 4] uint64 52-bit masks; piles [B, 4] int32 16-bit scoring masks; trick [B, 4]
    int8 cards of the current trick in play order (-1 beyond trick_len); trick_len [B] int8;
    leader [B] int8 (seat leading the current trick); num_played [B] int8 (cards played).
    """

    hands: np.ndarray
    piles: np.ndarray
    trick: np.ndarray
    trick_len: np.ndarray
    leader: np.ndarray
    num_played: np.ndarray

    def __len__(self) -> int:
        return len(self.leader)

    def take(self, idx) -> StateBatch:
        """Rows `idx` (an index array or boolean mask) as a new batch."""
        return StateBatch(
            self.hands[idx], self.piles[idx], self.trick[idx],
            self.trick_len[idx], self.leader[idx], self.num_played[idx],
        )

    @staticmethod
    def concat(batches: Sequence[StateBatch]) -> StateBatch:
        return StateBatch(*(np.concatenate([getattr(b, f) for b in batches]) for f in _FIELDS))

    @staticmethod
    def from_states(states: Sequence[GongzhuState]) -> StateBatch:
        """Stack single-game states (any plies) into a batch."""
        trick = np.full((len(states), 4), -1, dtype=np.int8)
        for i, s in enumerate(states):
            trick[i, : len(s.trick)] = s.trick
        return StateBatch(
            hands=np.array([s.hands for s in states], dtype=np.uint64).reshape(-1, 4),
            piles=np.array([s.piles for s in states], dtype=np.int32).reshape(-1, 4),
            trick=trick,
            trick_len=np.array([len(s.trick) for s in states], dtype=np.int8),
            leader=np.array([s.leader for s in states], dtype=np.int8),
            num_played=np.array([len(s.history) for s in states], dtype=np.int8),
        )


    @staticmethod
    def from_view(view, hands) -> StateBatch:
        """The states of `view` completed by each row of `hands` [D, 4] (uint64 52-bit masks of
        the current hands of sampled deals, e.g. sampling.uniform.owners_to_hands): batched and
        unchecked counterpart of GongzhuState.from_view (tests check they agree)."""
        hands = np.asarray(hands, dtype=np.uint64).reshape(-1, 4)
        d = hands.shape[0]
        trick = np.full((d, 4), -1, dtype=np.int8)
        trick[:, : len(view.trick)] = view.trick
        return StateBatch(
            hands=hands.copy(),
            piles=np.tile(np.array(view.piles, dtype=np.int32), (d, 1)),
            trick=trick,
            trick_len=np.full(d, len(view.trick), dtype=np.int8),
            leader=np.full(d, view.leader, dtype=np.int8),
            num_played=np.full(d, len(view.history), dtype=np.int8),
        )


_FIELDS = ("hands", "piles", "trick", "trick_len", "leader", "num_played")


def current_player(s: StateBatch) -> np.ndarray:
    """Seat to move [B] int64."""
    return (s.leader.astype(np.int64) + s.trick_len) & 3


def is_terminal(s: StateBatch) -> np.ndarray:
    """[B] bool: all 52 cards played."""
    return s.num_played == NUM_CARDS


def legal_bits(s: StateBatch) -> np.ndarray:
    """Legal cards of the player to move as 52-bit masks [B] uint64 (0 when terminal)."""
    hand = s.hands[np.arange(len(s)), current_player(s)]  # [B]
    led = np.maximum(s.trick[:, 0], 0) // 13  # [B] suit led (meaningless when trick_len == 0)
    follow = hand & _SUIT_MASK[led]
    use_follow = (s.trick_len > 0) & (follow != 0)
    return np.where(use_follow, follow, hand)


def legal_mask(s: StateBatch) -> np.ndarray:
    """[B, 52] bool legal cards of the player to move."""
    return ((legal_bits(s)[:, None] >> _SHIFTS) & np.uint64(1)).astype(bool)


def returns(s: StateBatch) -> np.ndarray:
    """[B, 4] team differences per seat: final score at the end, mid-game valuation before."""
    return batch_team_returns(batch_pile_scores(s.piles))


def step(s: StateBatch, actions, check: bool = True) -> StateBatch:
    """Play actions [B] (card indices) for the players to move; returns the new batch.

    With check=True an illegal action raises ValueError naming the row and card.
    """
    a = np.asarray(actions, dtype=np.int64)
    if a.shape != (len(s),):
        raise ValueError(f"actions must have shape ({len(s)},), got {a.shape}")
    rows = np.arange(len(s))
    seat = current_player(s)
    if check:
        ok = (a >= 0) & (a < NUM_CARDS)
        ok[ok] = ((legal_bits(s)[ok] >> a[ok].astype(np.uint64)) & np.uint64(1)) == 1
        if not ok.all():
            row = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"row {row}: card {int(a[row])} is not legal for seat "
                             f"{int(seat[row])}")
    hands = s.hands.copy()
    hands[rows, seat] &= ~(np.uint64(1) << a.astype(np.uint64))
    trick = s.trick.copy()
    trick[rows, s.trick_len] = a
    trick_len = s.trick_len + 1
    leader = s.leader.copy()
    piles = s.piles
    done = np.flatnonzero(trick_len == 4)
    if len(done):
        t = trick[done].astype(np.int64)  # [D, 4]
        led = t[:, :1] // 13
        # Highest card of the led suit wins (docs/rules.md section 2): rank key, -1 off suit.
        key = np.where(t // 13 == led, t % 13, -1)
        winner = (leader[done].astype(np.int64) + key.argmax(axis=1)) & 3
        bits = np.bitwise_or.reduce(_SCORING_BIT[t], axis=1)  # [D]
        piles = piles.copy()
        piles[done, winner] |= bits
        leader[done] = winner
        trick_len[done] = 0
        trick[done] = -1
    return StateBatch(hands, piles, trick, trick_len, leader, s.num_played + 1)


class GongzhuRules:
    """The batched-game protocol used by search: Gongzhu over `StateBatch`es."""

    num_actions = NUM_CARDS
    num_players = 4
    teams = np.array([0, 1, 0, 1])  # seat -> team; partners sit opposite

    current_player = staticmethod(current_player)
    is_terminal = staticmethod(is_terminal)
    legal_mask = staticmethod(legal_mask)
    returns = staticmethod(returns)

    @staticmethod
    def step(s: StateBatch, actions) -> StateBatch:
        return step(s, actions, check=False)

    @staticmethod
    def take(s: StateBatch, idx) -> StateBatch:
        return s.take(idx)

    @staticmethod
    def concat(batches: Sequence[StateBatch]) -> StateBatch:
        return StateBatch.concat(batches)
