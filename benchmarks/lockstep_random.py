"""Lockstep random play: N full-information Gongzhu games advanced together on numpy arrays.

Same rules as the reference engine rules.py (docs/rules.md sections 2-4), checked move by move in
tests/test_lockstep_random_benchmark.py; tuned for playing many whole games at random, for the
engine benchmark (benchmarks/engine.py) only, which is why it lives beside it. Search and
self-play use scrofazero.games.gongzhu.batch.StateBatch instead, whose rows can sit at any ply.
A hand is a "packed" uint64: suit s in bits 16s..16s+12, so one gather gives a seat's four suits
and bit counts pick cards.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from scrofazero.games.gongzhu.cards import NUM_CARDS, SCORING_BIT, card_code, check_card
from scrofazero.games.gongzhu.deals import DealError, check_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.games.gongzhu.scoring import batch_pile_scores, batch_team_returns

if sys.byteorder != "little":  # the uint64 <-> 4 x uint16 views below assume it
    raise ImportError("benchmarks/lockstep_random.py needs a little-endian machine")

NO_ACTION = -1  # the action of (and for) a game that is already over

_CARDS = np.arange(NUM_CARDS)
PACK_SHIFT = (16 * (_CARDS // 13) + _CARDS % 13).astype(np.uint64)  # [52] bit in a packed hand
PACK_BIT = np.left_shift(np.uint64(1), PACK_SHIFT)  # [52] uint64
SCORE_BIT16 = np.array(SCORING_BIT, dtype=np.uint64)  # [52] bit in the 16-bit pile layout
PACKED_FULL = np.uint64(0x1FFF_1FFF_1FFF_1FFF)
SUIT_BITS = np.uint64(0x1FFF)
_LOW_SUITS = [np.uint64((1 << (16 * k)) - 1) for k in (1, 2, 3)]  # suits 0..k-1 of a packed hand

_PATTERNS = np.arange(1 << 13)
POPCOUNT = np.bitwise_count(_PATTERNS).astype(np.uint8)  # [8192]
# SELECT[pattern * 13 + r] = rank index of the r-th set bit of a 13-bit pattern (0 past the end).
_select = np.zeros((1 << 13, 13), dtype=np.uint8)
for _rank in range(13):
    _has = (_PATTERNS >> _rank) & 1 == 1
    _below = POPCOUNT[_PATTERNS & ((1 << _rank) - 1)]
    _select[_has, _below[_has]] = _rank
SELECT = _select.reshape(-1).astype(np.int64)  # [8192 * 13], int64 to add card bases in place

# Per-game arrays indexed by game on axis 0 (the history is ply-major and handled apart).
_FIELDS = ("_hands", "_first", "_leader", "_led", "_led_shift", "_led_base", "_best_key",
           "_best_seat", "_trick_bits", "_piles", "_voids")


def _pack52(mask: int) -> int:
    """52-bit card mask -> packed layout (suit s in bits 16s..16s+12)."""
    return sum(((mask >> (13 * s)) & 0x1FFF) << (16 * s) for s in range(4))


def _unpack(packed: np.ndarray) -> np.ndarray:
    """Packed uint64 hands (any shape) -> 52-bit masks, same shape."""
    out = np.zeros_like(packed)
    for s in range(4):
        out |= ((packed >> np.uint64(16 * s)) & SUIT_BITS) << np.uint64(13 * s)
    return out


def _uniform_below(u: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """floor(u * counts / 2^32) for uint32 u: uniform on 0..counts-1 (bias below 2^-32)."""
    return (u.astype(np.uint64) * counts) >> np.uint64(32)


def _pick_any(hand: np.ndarray, u: np.ndarray) -> np.ndarray:
    """A uniformly chosen card of each packed hand [n] (none empty); u: uint32 [n] random.
    Arithmetic only: numpy's where/copyto on small dtypes cost ~10x a plain op here."""
    p0 = np.bitwise_count(hand & _LOW_SUITS[0])  # [n] uint8 cards in suit 0
    p1 = np.bitwise_count(hand & _LOW_SUITS[1])  # ... in suits 0-1
    p2 = np.bitwise_count(hand & _LOW_SUITS[2])  # ... in suits 0-2
    r = _uniform_below(u, np.bitwise_count(hand)).astype(np.uint8)  # index among all cards
    ge0, ge1, ge2 = r >= p0, r >= p1, r >= p2  # nested: ge2 implies ge1 implies ge0
    suit = ge0.view(np.uint8) + ge1.view(np.uint8) + ge2.view(np.uint8)
    before = np.maximum(np.maximum(p0 * ge0, p1 * ge1), p2 * ge2)  # cards in lower suits
    pattern = (hand >> (suit.astype(np.uint64) << np.uint64(4))) & SUIT_BITS
    rank = SELECT.take(pattern.view(np.int64) * 13 + (r - before).astype(np.int64))
    rank += suit.astype(np.int64) * 13
    return rank


def _random_decks(num_games: int, rng: np.random.Generator) -> np.ndarray:
    """num_games uniformly random deals, card-major [52, num_games] int8 (vectorised
    Fisher-Yates: column g is a uniform permutation of 0..51)."""
    n = int(num_games)
    deck = np.tile(np.arange(NUM_CARDS, dtype=np.int8)[:, None], (1, n))  # [52, n]
    flat = deck.reshape(-1)
    cols = np.arange(n)
    u = rng.bit_generator.random_raw((NUM_CARDS, (n + 1) // 2)).view(np.uint32)  # [52, >=n]
    for i in range(NUM_CARDS - 1, 0, -1):
        where = _uniform_below(u[i, :n], np.uint64(i + 1)).view(np.int64) * n + cols
        picked = flat.take(where)
        flat[where] = deck[i]
        deck[i] = picked
    return deck


def random_deals(num_games: int, rng: np.random.Generator) -> np.ndarray:
    """num_games uniformly random deals [num_games, 52] int8."""
    return np.ascontiguousarray(_random_decks(num_games, rng).T)


class LockstepRandomGames:
    """N games of Gongzhu. Games built together advance together; `from_states` may mix
    games at different plies (slower: each step then runs per trick position)."""

    # --- construction --------------------------------------------------------------------
    def __init__(self, deals, leaders=0):
        """deals: [N, 52] card indices (seat i holds positions 13i..13i+12 of each row);
        leaders: first leader, one int for all games or [N] ints."""
        deals = np.asarray(deals)
        if deals.ndim != 2 or deals.shape[1] != NUM_CARDS or deals.shape[0] == 0:
            raise DealError(f"deals must have shape [N, 52] with N >= 1, got {deals.shape}")
        if not np.issubdtype(deals.dtype, np.integer):
            raise DealError(f"deals must hold integer card indices, got dtype {deals.dtype}")
        in_range = ((deals >= 0) & (deals < NUM_CARDS)).all(axis=1)
        packed = PACK_BIT.take(np.where(in_range[:, None], deals, 0)).reshape(-1, 4, 13)
        hands = np.bitwise_or.reduce(packed, axis=2)  # [N, 4] uint64
        full = np.bitwise_or.reduce(hands, axis=1) == PACKED_FULL  # 52 cards: all distinct
        bad = np.flatnonzero(~(in_range & full))
        if bad.size:
            i = int(bad[0])
            check_deal(deals[i], where=f"game {i}")  # raises with the detailed message
            raise DealError(f"game {i}: not a deal of 52 distinct cards")
        self._init_from_hands(hands, self._check_leaders(leaders, deals.shape[0]))

    @classmethod
    def random(cls, num_games: int, rng: np.random.Generator, leaders=0) -> LockstepRandomGames:
        """num_games fresh games on uniformly random deals drawn from rng."""
        deck = _random_decks(num_games, rng)  # [52, N]
        hands = np.zeros((4, num_games), np.uint64)
        for pos in range(NUM_CARDS):
            hands[pos // 13] |= PACK_BIT.take(deck[pos])
        hands = np.ascontiguousarray(hands.T)  # [N, 4]
        obj = cls.__new__(cls)
        obj._init_from_hands(hands, cls._check_leaders(leaders, num_games))
        return obj

    @staticmethod
    def _check_leaders(leaders, n: int) -> np.ndarray:
        arr = np.asarray(leaders)
        if arr.ndim == 0:
            arr = np.full(n, arr)
        if arr.shape != (n,) or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(f"leaders must be one int or [{n}] ints, got {np.asarray(leaders)!r}")
        bad = np.flatnonzero((arr < 0) | (arr > 3))
        if bad.size:
            raise ValueError(f"game {bad[0]}: leader must be a seat 0..3, got {arr[bad[0]]}")
        return arr.astype(np.uint8)

    def _init_from_hands(self, hands: np.ndarray, leaders: np.ndarray) -> None:
        n = hands.shape[0]
        self._hands = np.ascontiguousarray(hands, dtype=np.uint64)  # [N, 4] packed
        self._first = leaders.copy()  # [N] first leader of the game
        self._leader = leaders.copy()  # [N] leader of the current trick
        # The led suit in three dtypes, set once per trick, so that the per-card kernels
        # never mix dtypes (a mixed-dtype numpy op costs several times a plain one).
        self._led = np.zeros(n, np.uint16)  # [N] suit led in the current trick
        self._led_shift = np.zeros(n, np.uint64)  # [N] 16 * led: its place in a packed hand
        self._led_base = np.zeros(n, np.int64)  # [N] 13 * led: its first card index
        self._best_key = np.zeros(n, np.uint16)  # [N] rank 1..13 of the winning card so far
        self._best_seat = np.zeros(n, np.uint8)  # [N] seat of the winning card so far
        self._trick_bits = np.zeros(n, np.uint64)  # [N] scoring bits in the current trick
        self._piles = np.zeros(n, np.uint64)  # [N] four 16-bit piles, seat k in bits 16k..
        self._voids = np.zeros(n, np.uint16)  # [N] bit 4*seat + suit: seat shown void
        self._history = np.full((NUM_CARDS, n), NO_ACTION, np.int8)  # [52, N] ply-major
        self._played: int | np.ndarray = 0  # plies played: an int while games are in step
        self._finish_init()

    def _finish_init(self) -> None:
        n = self._hands.shape[0]
        self._rows4 = np.arange(n, dtype=np.intp) * 4
        self._cache = None

    @classmethod
    def from_states(cls, states: Sequence[GongzhuState]) -> LockstepRandomGames:
        """A batch holding copies of reference states (any plies, finished games included)."""
        states = list(states)
        if not states or not all(isinstance(s, GongzhuState) for s in states):
            raise ValueError("from_states needs a non-empty list of GongzhuState")
        obj = cls.__new__(cls)
        hands = np.array([[_pack52(h) for h in s.hands] for s in states], dtype=np.uint64)
        obj._init_from_hands(hands, np.array([s.first_leader for s in states], np.uint8))
        played = np.array([len(s.history) for s in states], dtype=np.int64)
        for i, s in enumerate(states):
            obj._leader[i] = s.leader
            obj._piles[i] = sum(int(p) << (16 * k) for k, p in enumerate(s.piles))
            obj._voids[i] = sum(int(v) << (4 * k) for k, v in enumerate(s.voids))
            obj._history[: len(s.history), i] = [card for _, card in s.history]
            if s.trick:
                led = s.trick[0] // 13
                keys = [c % 13 + 1 if c // 13 == led else 0 for c in s.trick]
                obj._led[i] = led
                obj._led_shift[i] = 16 * led
                obj._led_base[i] = 13 * led
                obj._best_key[i] = max(keys)
                obj._best_seat[i] = (s.leader + keys.index(max(keys))) & 3
                obj._trick_bits[i] = sum({SCORING_BIT[c] for c in s.trick})
        obj._played = int(played[0]) if (played == played[0]).all() else played
        return obj

    def clone(self) -> LockstepRandomGames:
        other = LockstepRandomGames.__new__(LockstepRandomGames)
        for name in _FIELDS:
            setattr(other, name, getattr(self, name).copy())
        other._history = self._history.copy()
        other._played = self._played if isinstance(self._played, int) else self._played.copy()
        other._finish_init()
        return other

    # --- queries -------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._hands.shape[0]

    @property
    def num_games(self) -> int:
        return self._hands.shape[0]

    @property
    def num_played(self) -> np.ndarray:
        """Cards played so far per game [N] int64."""
        return np.broadcast_to(np.asarray(self._played, np.int64), (self.num_games,)).copy()

    @property
    def in_step(self) -> bool:
        """True while every game has played the same number of cards (the fast path)."""
        return isinstance(self._played, int)

    @property
    def current_player(self) -> np.ndarray:
        """Seat to move per game [N] int64 (at the end: the last trick's winner)."""
        return ((self._leader.astype(np.int64) + (self.num_played & 3)) & 3)

    @property
    def leader(self) -> np.ndarray:
        return self._leader.astype(np.int64)  # [N] leader of the current trick

    @property
    def first_leader(self) -> np.ndarray:
        return self._first.astype(np.int64)  # [N]

    @property
    def hands(self) -> np.ndarray:
        """Current hands [N, 4] uint64 as 52-bit card masks (bit c = card c)."""
        return _unpack(self._hands)

    @property
    def piles(self) -> np.ndarray:
        """Captured scoring cards [N, 4] uint16 (16-bit scoring layout of cards.py)."""
        return self._piles.view(np.uint16).reshape(-1, 4).copy()

    @property
    def voids(self) -> np.ndarray:
        """Shown voids [N, 4] uint8: per seat a 4-bit mask of suits it failed to follow."""
        shifts = np.array([0, 4, 8, 12], dtype=np.uint16)
        return ((self._voids[:, None] >> shifts) & 15).astype(np.uint8)

    @property
    def history(self) -> np.ndarray:
        """Cards played per game in order [N, 52] int8, -1 past the current ply."""
        return np.ascontiguousarray(self._history.T)

    def is_terminal(self) -> np.ndarray:
        """Per game: has every card been played? [N] bool."""
        return self.num_played == NUM_CARDS

    def all_terminal(self) -> bool:
        return bool(self.is_terminal().all())

    def pile_scores(self) -> np.ndarray:
        """Pile scores [N, 4] int32: final rule once all 16 scoring cards are captured."""
        return batch_pile_scores(self.piles)

    def returns(self) -> np.ndarray:
        """Team differences per seat [N, 4] int32; mid-game valuation before the end."""
        return batch_team_returns(self.pile_scores())

    def legal_mask(self) -> np.ndarray:
        """Legal cards of the player to move [N, 52] bool (all False in finished games)."""
        legal = np.zeros(self.num_games, np.uint64)
        for rows, sub, pos in self._groups():
            legal[rows] = sub._legal_packed(pos)
        return ((legal[:, None] >> PACK_SHIFT) & np.uint64(1)).astype(bool)

    def state(self, i: int) -> GongzhuState:
        """Game i rebuilt as a reference GongzhuState (by replaying its history)."""
        i = int(i)
        if not 0 <= i < self.num_games:
            raise IndexError(f"game {i} out of range 0..{self.num_games - 1}")
        cards = [int(c) for c in self._history[: int(self.num_played[i]), i]]
        hands = [int(h) for h in _unpack(self._hands[i])]
        leader, trick = int(self._first[i]), []
        for card in cards:  # seats follow from the trick winners alone
            hands[(leader + len(trick)) & 3] |= 1 << card
            trick.append(card)
            if len(trick) == 4:
                led = trick[0] // 13
                best = max(range(4), key=lambda k: trick[k] if trick[k] // 13 == led else -1)
                leader, trick = (leader + best) & 3, []
        state = GongzhuState.from_hands(hands, int(self._first[i]))
        for card in cards:
            state.apply(card)
        return state

    # --- moves ---------------------------------------------------------------------------
    def random_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal card per game [N] int64 (-1 for finished games)."""
        out = np.full(self.num_games, NO_ACTION, np.int64)
        for rows, sub, pos in self._groups():
            cards = sub._random(pos, rng)
            if sub is self:
                return cards
            out[rows] = cards
        return out

    def apply(self, actions) -> None:
        """Play actions[i] in game i, for all games at once. Raises ValueError naming the first
        bad game and card (out of range, not held, revoke, or not -1 in a finished game),
        leaving every game unchanged."""
        a = np.asarray(actions)
        if a.shape != (self.num_games,):
            raise ValueError(f"actions must have shape ({self.num_games},), got {a.shape}")
        if not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be integer card indices, got dtype {a.dtype}")
        a = a.astype(np.int64, copy=False)
        if self.in_step:
            if self._played == NUM_CARDS:
                raise ValueError("the games are over: no card can be played")
            if a.view(np.uint64).max() < NUM_CARDS:  # negatives wrap to huge values
                decoded = self._decode(a)
                if self._bad(self._played & 3, decoded) is None:
                    self._advance(self._played & 3, a, decoded)
                    return
            out = (a < 0) | (a >= NUM_CARDS)
            bad = self._bad(self._played & 3, self._decode(np.where(out, 0, a)))
            self._raise_first(np.flatnonzero(out if bad is None else out | bad), a)
            return
        self._apply_mixed(a)

    def _apply_mixed(self, a: np.ndarray) -> None:
        over = self.is_terminal()
        out = (a < 0) | (a >= NUM_CARDS)
        bad = [np.flatnonzero(np.where(over, a != NO_ACTION, out))]
        safe = np.where(out, 0, a)  # out-of-range cards are reported, not decoded
        groups = list(self._groups())
        for rows, sub, pos in groups:
            local = sub._bad(pos, self._decode(safe[rows]))
            if local is not None:
                bad.append(rows[local])
        if any(b.size for b in bad):
            self._raise_first(np.concatenate(bad), a)
        for rows, sub, pos in groups:
            sub._advance(pos, a[rows], self._decode(a[rows]))
            for name in _FIELDS:
                getattr(self, name)[rows] = getattr(sub, name)
            self._history[:, rows] = sub._history
            self._played[rows] = sub._played
        if (self._played == self._played[0]).all():
            self._played = int(self._played[0])  # back in step: the fast path again
        self._cache = None

    def _raise_first(self, bad: np.ndarray, a: np.ndarray) -> None:
        i = int(bad.min())
        card = int(a[i])
        if self.is_terminal()[i]:
            raise ValueError(f"game {i} is over: its action must be {NO_ACTION}, got {card}")
        try:
            check_card(card)
            self.state(i).apply(card)
        except ValueError as err:
            raise ValueError(f"game {i}: {err}") from None
        raise AssertionError(f"game {i}: card {card_code(card)} rejected but legal")  # bug

    # --- per trick position kernels (pos is the same for every game of self) -------------
    def _groups(self):
        """(rows, batch, pos) for each trick position among unfinished games; the batch is
        self itself (rows = all) while the games are in step."""
        if self.in_step:
            if self._played < NUM_CARDS:
                yield slice(None), self, self._played & 3
            return
        played = self._played
        for pos in range(4):
            rows = np.flatnonzero((played & 3 == pos) & (played < NUM_CARDS))
            if rows.size:
                yield rows, self._subset(rows), pos

    def _subset(self, rows: np.ndarray) -> LockstepRandomGames:
        sub = LockstepRandomGames.__new__(LockstepRandomGames)
        for name in _FIELDS:
            setattr(sub, name, getattr(self, name)[rows])
        sub._history = self._history[:, rows]
        sub._played = self._played[rows]
        sub._finish_init()
        return sub

    def _current(self, pos: int):
        """(seat [N] uint8, flat index of the seat's hand [N], hand [N] packed, led pattern
        [N] uint64 or None at a lead), cached until the next move."""
        if self._cache is None:
            seat = (self._leader + np.uint8(pos)) & np.uint8(3) if pos else self._leader
            index = self._rows4 + seat.astype(np.intp)
            hand = self._hands.reshape(-1).take(index)
            led_pattern = (hand >> self._led_shift) & SUIT_BITS if pos else None
            self._cache = (seat, index, hand, led_pattern)
        return self._cache

    def _legal_packed(self, pos: int) -> np.ndarray:
        _, _, hand, led_pattern = self._current(pos)
        if led_pattern is None:
            return hand
        return np.where(led_pattern != 0, led_pattern << self._led_shift, hand)

    def _random(self, pos: int, rng: np.random.Generator) -> np.ndarray:
        _, _, hand, led_pattern = self._current(pos)
        n = hand.shape[0]
        u = rng.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]  # [N] uint32
        if led_pattern is None:
            return _pick_any(hand, u)
        r = _uniform_below(u, np.bitwise_count(led_pattern))
        cards = SELECT.take(led_pattern.view(np.int64) * 13 + r.view(np.int64))
        cards += self._led_base
        void = np.flatnonzero(led_pattern == 0)  # cannot follow: any card of the hand
        if void.size:
            cards[void] = _pick_any(hand[void], u[void])
        return cards

    @staticmethod
    def _decode(a: np.ndarray):
        """(card uint16, suit uint16, packed-hand bit uint64) of cards a (int64 in 0..51)."""
        card = a.astype(np.uint16)
        suit = (card * np.uint16(79)) >> np.uint16(10)  # == card // 13 for cards 0..51
        shift = card + suit * np.uint16(3)  # 16 * suit + rank: the card's packed bit
        return card, suit, np.left_shift(np.uint64(1), shift.astype(np.uint64))

    def _bad(self, pos: int, decoded):
        """Bool mask of games where the decoded card is not playable, or None if all are."""
        _, _, hand, led_pattern = self._current(pos)
        _, suit, bit = decoded
        ok = (hand & bit) != 0
        if led_pattern is not None:
            ok &= (suit == self._led) | (led_pattern == 0)
        return None if ok.all() else ~ok

    def _advance(self, pos: int, a: np.ndarray, decoded) -> None:
        seat, index, hand, _ = self._current(pos)
        self._cache = None
        card, suit, bit = decoded
        self._hands.reshape(-1)[index] = hand ^ bit
        if isinstance(self._played, int):
            self._history[self._played] = a
        else:
            self._history[self._played, np.arange(a.shape[0])] = a
        self._played = self._played + 1
        rank = card - suit * np.uint16(13) + np.uint16(1)  # 1..13
        if pos == 0:
            self._led[:] = suit
            self._led_shift[:] = suit << np.uint16(4)
            self._led_base[:] = suit * np.uint16(13)
            self._best_key[:] = rank
            self._best_seat[:] = seat
            self._trick_bits[:] = SCORE_BIT16.take(a)
            return
        follows = suit == self._led
        key = rank * follows  # a discard never wins the trick
        win = (key > self._best_key).view(np.uint8)
        self._best_seat ^= (self._best_seat ^ seat) * win  # seat where win, else unchanged
        np.maximum(self._best_key, key, out=self._best_key)
        void_at = ((seat << np.uint8(2)) + self._led).astype(np.uint16)  # bit 4*seat + led
        self._voids |= (~follows).view(np.uint8).astype(np.uint16) << void_at
        self._trick_bits |= SCORE_BIT16.take(a)
        if pos == 3:  # trick complete: the winner collects the scoring cards and leads
            self._piles |= self._trick_bits << (self._best_seat.astype(np.uint64) << np.uint64(4))
            self._leader[:] = self._best_seat
