"""The exact endgame: the perfect-information value of a Gongzhu position by minimax.

Two teams, partners opposite, zero-sum in the team difference: seats 0 and 2 maximise the final
team difference (their final pile scores minus the others', docs/rules.md section 3), seats 1 and
3 minimise it. `solve` is alpha-beta over single card plays with

- a transposition table at trick starts (key: a Zobrist hash of who holds every remaining card,
  every seat's pile and the leader), whose entries are true bounds of the position's value, so
  the table may be kept across positions, worlds and decisions without changing any answer;
- equivalent cards searched once: two cards of one hand, of one suit, with no card still alive
  (held or in the trick) between them, that score alike (both plain, or hearts of one value),
  leave the same game whichever is played;
- an early end: once no scoring card is left to take, the final score is the piles' as they
  are.

The search is a loop over explicit frames (numba caches no recursive function). `root_values`
gives the exact value of every legal card in every world, from the mover's seat, as the
player's per-world search does (`EndgameSolver.card_values`). Checked against a plain minimax
over the rules engine (tests/agents/test_endgame.py), whose scoring every terminal uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np
from numba import njit
from pydantic import Field

from scrofazero.agents.greed_kernel import winner_pos
from scrofazero.games.gongzhu.cards import BASE_VALUE, HEARTS, NUM_CARDS, SCORING_BIT, SCORING_CARDS
from scrofazero.games.gongzhu.scoring import FINAL_SCORE
from scrofazero.settings import choice

FINAL = FINAL_SCORE.astype(np.int64)  # [65536] final pile scores
BITS = np.array(SCORING_BIT, dtype=np.int64)  # [52] 16-bit scoring layout, 0 if not scoring
SCORING_MASK = np.int64(sum(1 << c for c in SCORING_CARDS))  # the 16 scoring cards, 52-bit
# Cards that score alike share a class: 0 plain, the heart value for hearts (its own class
# 1000 + value so a 0-point heart is not plain), the card itself for SQ, DJ and C10.
CLASS = np.array([
    1000 + BASE_VALUE[c] if c // 13 == HEARTS else (2000 + c if SCORING_BIT[c] else 0)
    for c in range(NUM_CARDS)], dtype=np.int64)
INF = 1 << 30
ABORTED = -(1 << 40)  # what solve returns past its node budget
EXACT, LOWER, UPPER = 0, 1, 2
MAX_DEPTH = NUM_CARDS + 2
STATE = 14  # a frame's saved state: hands 4, piles 4, trick 4, trick length, leader
NODES, HITS = 0, 1  # counters of `stats`


def zobrist(seed: int = 0x5C0F) -> np.ndarray:
    """Random 64-bit keys [52 * 4 + 16 * 4 + 4]: card c held by seat s at 4c + s, then pile bit
    b of seat s at 208 + 16 s + b, then the leader at 272 + seat."""
    rng = np.random.default_rng(seed)
    return rng.integers(-(1 << 63), (1 << 63) - 1, size=52 * 4 + 64 + 4, dtype=np.int64)


@njit(cache=True)
def final_value(piles):
    """Team 0's final difference of four full piles (16-bit masks)."""
    return FINAL[piles[0]] - FINAL[piles[1]] + FINAL[piles[2]] - FINAL[piles[3]]


@njit(cache=True)
def position_key(hands, piles, leader, zob):
    """The Zobrist key of a position at a trick start."""
    key = zob[272 + leader]
    for seat in range(4):
        hand = hands[seat]
        for c in range(52):
            if (hand >> c) & 1:
                key ^= zob[4 * c + seat]
        pile = piles[seat]
        for b in range(16):
            if (pile >> b) & 1:
                key ^= zob[208 + 16 * seat + b]
    return key


@njit(cache=True)
def play(card, hands, piles, trick, tl, leader):
    """Play `card` for the seat to move, in place on hands, piles and trick; the new
    (trick length, leader)."""
    seat = (leader + tl) & 3
    hands[seat] &= ~(np.int64(1) << card)
    trick[tl] = card
    tl += 1
    if tl == 4:
        leader = (leader + winner_pos(trick)) & 3
        piles[leader] |= BITS[trick[0]] | BITS[trick[1]] | BITS[trick[2]] | BITS[trick[3]]
        tl = 0
    return tl, leader


@njit(cache=True)
def moves(hands, trick, tl, leader, first, out):
    """The legal cards of the seat to move into `out`, one of each class of equivalent cards
    (the lowest), `first` (the table's best move, -1 for none) in front; their count."""
    seat = (leader + tl) & 3
    hand = hands[seat]
    legal = hand
    if tl > 0:
        follow = hand & (np.int64(0x1FFF) << (13 * (trick[0] // 13)))
        if follow:
            legal = follow
    alive = hands[0] | hands[1] | hands[2] | hands[3]
    for i in range(tl):
        alive |= np.int64(1) << trick[i]
    n = 0
    if first >= 0 and (legal >> first) & 1:
        out[0] = first
        n = 1
    for c in range(51, -1, -1):
        if not (legal >> c) & 1 or c == first:
            continue
        # the next lower card still alive in c's suit: equivalent if in this hand, alike
        r = c - 1
        low = 13 * (c // 13)
        while r >= low and not (alive >> r) & 1:
            r -= 1
        if r >= low and (legal >> r) & 1 and CLASS[r] == CLASS[c]:
            continue
        out[n] = c
        n += 1
    return n


@njit(cache=True)
def solve(hands, piles, trick, tl, leader, alpha, beta, tt_key, tt_val, tt_meta, zob, stats,
          stop):
    """The value (team 0's final difference) of the position, exact when it lies strictly inside
    (alpha, beta), else a bound on the side it failed (fail-soft); ABORTED once stats[NODES]
    passes `stop` (what the table holds stays true). hands, piles and trick (int64 [4]) are
    used as scratch and left as given, unless aborted. tt_*: the transposition table (keys,
    values, and flag + 4 x best move), shared by every call; stats[NODES], stats[HITS] count."""
    mask = len(tt_key) - 1
    mv = np.empty((MAX_DEPTH, 13), np.int64)
    nmv = np.zeros(MAX_DEPTH, np.int64)
    at = np.zeros(MAX_DEPTH, np.int64)
    lo = np.empty(MAX_DEPTH, np.int64)  # the window as searched (alpha, beta)
    hi = np.empty(MAX_DEPTH, np.int64)
    lo0 = np.empty(MAX_DEPTH, np.int64)  # the window the node was entered with
    hi0 = np.empty(MAX_DEPTH, np.int64)
    best = np.empty(MAX_DEPTH, np.int64)
    best_move = np.empty(MAX_DEPTH, np.int64)
    keys = np.zeros(MAX_DEPTH, np.int64)
    keyed = np.zeros(MAX_DEPTH, np.bool_)
    saved = np.empty((MAX_DEPTH, STATE), np.int64)
    d = 0
    lo[0] = alpha
    hi[0] = beta
    while True:
        # -- enter node d: resolve it at once, or open its first move --
        stats[NODES] += 1
        if stats[NODES] > stop:
            return ABORTED
        a, b = lo[d], hi[d]
        left = hands[0] | hands[1] | hands[2] | hands[3]
        pending = np.int64(0)
        for i in range(tl):
            pending |= BITS[trick[i]]
        resolved = False
        v = np.int64(0)
        first = -1
        keyed[d] = False
        if (left & SCORING_MASK) == 0 and pending == 0:
            v = final_value(piles)  # nothing left to score (the end of the game included)
            resolved = True
        elif tl == 0:
            key = position_key(hands, piles, leader, zob)
            keys[d] = key
            keyed[d] = True
            slot = key & mask
            if tt_key[slot] == key:
                stats[HITS] += 1
                tv = tt_val[slot]
                flag = tt_meta[slot] & 3
                first = (tt_meta[slot] >> 2) - 1
                if flag == EXACT or (flag == LOWER and tv >= b) or (flag == UPPER and tv <= a):
                    v = tv
                    resolved = True
                elif flag == LOWER:
                    a = max(a, tv)
                else:
                    b = min(b, tv)
        if not resolved:
            lo[d], hi[d], lo0[d], hi0[d] = a, b, a, b
            nmv[d] = moves(hands, trick, tl, leader, first, mv[d])
            best[d] = -INF if ((leader + tl) & 1) == 0 else INF
            best_move[d] = -1
            saved[d, 0:4] = hands
            saved[d, 4:8] = piles
            saved[d, 8:12] = trick
            saved[d, 12] = tl
            saved[d, 13] = leader
            at[d] = 1
            tl, leader = play(mv[d, 0], hands, piles, trick, tl, leader)
            lo[d + 1], hi[d + 1] = a, b
            d += 1
            continue
        # -- return v to the parents until one has a move left to open --
        while True:
            if d == 0:
                return v
            d -= 1
            hands[:] = saved[d, 0:4]
            piles[:] = saved[d, 4:8]
            trick[:] = saved[d, 8:12]
            tl = saved[d, 12]
            leader = saved[d, 13]
            maximising = ((leader + tl) & 1) == 0
            moved = mv[d, at[d] - 1]
            if maximising:
                if v > best[d]:
                    best[d], best_move[d] = v, moved
                lo[d] = max(lo[d], v)
            else:
                if v < best[d]:
                    best[d], best_move[d] = v, moved
                hi[d] = min(hi[d], v)
            if lo[d] < hi[d] and at[d] < nmv[d]:
                c = mv[d, at[d]]
                at[d] += 1
                tl, leader = play(c, hands, piles, trick, tl, leader)
                lo[d + 1], hi[d + 1] = lo[d], hi[d]
                d += 1
                break
            v = best[d]
            if keyed[d]:
                slot = keys[d] & mask
                flag = UPPER if v <= lo0[d] else (LOWER if v >= hi0[d] else EXACT)
                tt_key[slot] = keys[d]
                tt_val[slot] = v
                tt_meta[slot] = flag | ((best_move[d] + 1) << 2)


@njit(cache=True)
def out_rep(c, reps, n):
    """The kept card standing for `c`: the highest kept card of c's suit not above c."""
    rep = -1
    for k in range(n):
        if reps[k] <= c and reps[k] // 13 == c // 13 and reps[k] > rep:
            rep = reps[k]
    return rep


@njit(cache=True)
def root_values(hands, piles, trick, tlen, leader, legal, tt_key, tt_val, tt_meta, zob,
                stats, stop, out):
    """out[w, j] = the exact value of playing legal[j] in world w (rows of hands [W, 4], piles
    [W, 4], trick [W, 4], tlen [W], leader [W]), from the mover's seat. Equivalent cards
    (`moves`) are solved once. False (out incomplete) once stats[NODES] passes `stop`."""
    h = np.empty(4, np.int64)
    p = np.empty(4, np.int64)
    t = np.empty(4, np.int64)
    reps = np.empty(13, np.int64)
    for w in range(hands.shape[0]):
        tl0, lead0 = tlen[w], leader[w]
        h[:] = hands[w]
        t[:] = trick[w]
        n = moves(h, t, tl0, lead0, -1, reps)
        sign = 1 if ((lead0 + tl0) & 1) == 0 else -1
        for j in range(len(legal)):
            c = legal[j]
            done = -1  # an earlier card of the same run of equivalent cards
            for k in range(j):
                if out_rep(legal[k], reps, n) == out_rep(c, reps, n):
                    done = k
                    break
            if done >= 0:
                out[w, j] = out[w, done]
                continue
            h[:] = hands[w]
            p[:] = piles[w]
            t[:] = trick[w]
            tl, lead = play(c, h, p, t, tl0, lead0)
            value = solve(h, p, t, tl, lead, -INF, INF, tt_key, tt_val, tt_meta, zob, stats,
                          stop)
            if value == ABORTED:
                return False
            out[w, j] = sign * value
    return True


@dataclass
class EndgameConfig:
    """When the full player values its worlds exactly instead of by MCTS and the network
    (`scrofazero.endgame` of evaluate.py and play.py)."""

    # the first trick (1..13) searched exactly in every world; 0 never (MCTS to the end)
    trick: Annotated[int, Field(ge=0, le=13)] = 9
    # the transposition table's size, 2^table_bits entries of 24 bytes, kept for the player's life
    table_bits: Annotated[int, Field(ge=10, le=26)] = 20
    # the most nodes one decision's worlds may take (about 3 million a second on one core of
    # the 2-core CPU); past it the decision is searched by MCTS as before the endgame's trick
    nodes: Annotated[int, Field(ge=1)] = 2_000_000
    # the player's later decisions (cards with a choice) chosen once for all the worlds it
    # cannot tell apart, the others playing by the behaviour network (agents/infoset.py); 0:
    # each world's exact value as it is (PIMC)
    shared: Annotated[int, Field(ge=0, le=12)] = 0
    # the model of the other seats in those decisions: behaviour (the network at all three) |
    # greed (Mr. Greed's own program at the opponents' seats: the ceiling against Mr. Greeds)
    others: Annotated[str, choice("behaviour", "greed")] = "behaviour"
    # diagnostic: the same lookahead with each world's own best later cards (strategy fusion
    # against the same model), to tell what sharing is worth from what the model is
    fused: bool = False

    def reaches(self, num_played: int) -> bool:
        """Whether a decision after `num_played` cards is searched exactly."""
        return self.trick > 0 and num_played // 4 + 1 >= self.trick


class EndgameSolver:
    """Exact values of the legal cards over many worlds, with one transposition table kept for
    the solver's life (2^table_bits entries, 24 bytes each; its entries stay true across
    positions, so keeping it changes no answer, only the time)."""

    def __init__(self, table_bits: int = 20):
        if not 10 <= table_bits <= 26:
            raise ValueError(f"table_bits={table_bits}: choose 10 to 26")
        size = 1 << table_bits
        self.tt_key = np.zeros(size, np.int64)
        self.tt_key[0] = 1  # no position hashes to key 1 in slot 0 by accident of zeroing
        self.tt_val = np.zeros(size, np.int64)
        self.tt_meta = np.zeros(size, np.int64)
        self.zob = zobrist()
        self.stats = np.zeros(2, np.int64)

    def card_values(self, hands, piles, trick, tlen, leader, legal,
                    nodes: int | None = None) -> np.ndarray | None:
        """[W, L] float64: the exact final team difference, from the seat to move, of playing each
        of `legal` [L] (legal in every world) in each world (StateBatch fields' rows); None when
        that takes more than `nodes` nodes (None: no limit)."""
        out = np.empty((len(tlen), len(legal)), np.int64)
        stop = self.stats[NODES] + nodes if nodes is not None else np.iinfo(np.int64).max
        done = root_values(
            np.asarray(hands).astype(np.int64), np.asarray(piles).astype(np.int64),
            np.asarray(trick).astype(np.int64), np.asarray(tlen).astype(np.int64),
            np.asarray(leader).astype(np.int64), np.asarray(legal, dtype=np.int64),
            self.tt_key, self.tt_val, self.tt_meta, self.zob, self.stats, stop, out)
        return out.astype(np.float64) if done else None

    @property
    def nodes(self) -> int:
        return int(self.stats[NODES])
