"""Numba kernels of Mr. Greed's one-trick search: per-card scores over sampled deals, summed
(greed_scores_q, what Mr. Greed plays by) or one row per deal (greed_sample_scores_q, for its
play probabilities).

Called by mr_greed.py (which documents the rule and its choices). Every quantity is an integer
in quarter points (each term of the rule is a multiple of 1/4 point), so sums and ties are
exact and match tests/helpers/greed_reference.py. Card sets are 52-bit masks held in int64.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.games.gongzhu.cards import C10, DJ, HEARTS, SCORING_BIT, SQ
from scrofazero.games.gongzhu.scoring import FINAL_SCORE, MID_SCORE

SA, SK = 12, 11
DQ, DA = 36, 38  # DQ, DK, DA are 36, 37, 38; DJ is 35
CJ, CA = 48, 51  # CJ, CQ, CK, CA are 48..51; C10 is 47
C10_SCORING_BIT = 1 << 15
ALL_SCORING = (1 << 16) - 1
NEG_INF = -(1 << 62)

# Layout of the per-decision context vector `ctx` (int64).
LEADER, PLAYED, BEFORE0, S4Q, PILES, PILE_VALUES, CTX_SIZE = 0, 1, 2, 3, 4, 8, 12

# Relief in points by rank 2..A (docs/rules.md section 9): S, D and C share one row; hearts stop
# at H10.
_RELIEF_PLAIN = (0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11)
_RELIEF_HEARTS = (0, 0, 1, 1, 2, 3, 4, 5, 6, 0, 0, 0, 0)
BASE_RELIEF = np.array(
    [(_RELIEF_HEARTS if s == HEARTS else _RELIEF_PLAIN)[r] for s in range(4) for r in range(13)],
    dtype=np.int64,
)  # [52] points
# Constant tables, frozen into the compiled code as globals (taking them out of a tuple
# argument cost a reference count per access in the hot functions).
RELIEF_Q = 4 * BASE_RELIEF  # [52] quarter points
BITS = np.array(SCORING_BIT, dtype=np.int64)  # [52] 16-bit scoring layout, 0 if not scoring
MID = MID_SCORE.astype(np.int64)  # [65536] mid-game pile scores (points)
FINAL = FINAL_SCORE.astype(np.int64)  # [65536] final pile scores (points)


@njit(cache=True, inline="always")
def winner_pos(trick):
    """Position 0..3 of the card winning a full trick [4]: the highest of the led suit."""
    led = trick[0] // 13
    best = 0
    for i in range(1, 4):
        if trick[i] // 13 == led and trick[i] > trick[best]:
            best = i
    return best


@njit(cache=True, inline="always")
def team0_change(trick, ctx):
    """Change (quarter points) of team 0's score difference when the full `trick` [4] is
    collected: the pile valuation after minus before (final rule once all 16 scoring cards are
    captured, else the mid-game rule), plus the C10 term (points still to come)."""
    taken = BITS[trick[0]] | BITS[trick[1]] | BITS[trick[2]] | BITS[trick[3]]
    if taken == 0:
        return 0  # no scoring card: no pile changes
    winner = (ctx[LEADER] + winner_pos(trick)) & 3
    own = ctx[PILES + winner]
    captured = ctx[PILES] | ctx[PILES + 1] | ctx[PILES + 2] | ctx[PILES + 3] | taken
    if captured != ALL_SCORING:
        # Mid-game rule before and after: only the winner's pile changes value.
        change = 4 * (MID[own | taken] - MID[own])
        if winner % 2:
            change = -change
    else:
        after0 = 0
        for s in range(4):
            pile = ctx[PILES + s] | taken if s == winner else ctx[PILES + s]
            after0 += FINAL[pile] if s % 2 == 0 else -FINAL[pile]
        change = 4 * (after0 - ctx[BEFORE0])
    if taken & C10_SCORING_BIT:
        # docs/rules.md section 9: C10 taken also costs/earns the points still to come per player.
        change += ctx[S4Q] if winner % 2 == 0 else -ctx[S4Q]
    return change


@njit(cache=True, inline="always")
def relief(card, known, pile_value, s4q):
    """Relief (quarter points) of playing `card` for a player who knows the cards in `known`
    (its own hand and every played card): the rest is unseen to it."""
    r = RELIEF_Q[card]
    if card in (SA, SK):
        if not (known >> SQ) & 1:
            r += 200 if card == SA else 120  # +50 / +30 points
    elif DQ <= card <= DA:
        if not (known >> DJ) & 1:
            r -= (card - DJ) * 40  # DQ -10, DK -20, DA -30 points
    elif CJ <= card <= CA and not (known >> C10) & 1:
        # -r x (still to come + own pile), r = 0.1 .. 0.4 = (card - C10) / 10; exact.
        r -= (card - C10) * (s4q + 4 * pile_value) // 10
    return r


@njit(cache=True, inline="always")
def _player(trick, pos, hands, ctx):
    """(seat, known cards, legal mask, lo, hi, team sign, current best card, later cards) of
    the seat playing trick[pos]: its legal cards lie among cards lo..hi-1 of the mask; `later`
    is every card held by the seats still to play after it."""
    leader = ctx[LEADER]
    seat = (leader + pos) & 3
    hand = hands[seat]
    known = hand | ctx[PLAYED]
    led = trick[0] // 13
    top = trick[0]
    for i in range(pos):
        known |= np.int64(1) << trick[i]
        if trick[i] // 13 == led and trick[i] > top:
            top = trick[i]
    later = np.int64(0)
    for j in range(pos + 1, 4):
        later |= hands[(leader + j) & 3]
    sign = 1 if seat % 2 == 0 else -1
    follow = hand & (np.int64(0x1FFF) << (13 * led))
    if pos > 0 and follow:
        return seat, known, follow, 13 * led, 13 * led + 13, sign, top, later
    return seat, known, hand, 0, 52, sign, top, later


NO_SHARE, NEUTRAL = -100, -5


@njit(cache=True, inline="always")
def share_key(c, pos, top, later):
    """Candidates with the same key (other than NO_SHARE) leave the seats still to play the
    same problem, so their answers and the trick's change are equal (exact, no approximation):
    NEUTRAL for a non-scoring card that does not take the lead; for a non-scoring card that
    takes it (or leads), the lowest later-held card above it in its suit (which of their cards
    beat it is then the same), or -(suit + 1) if none. Scoring cards never share."""
    if BITS[c] != 0:
        return NO_SHARE
    suit = c // 13
    if pos > 0 and not (suit == top // 13 and c > top):
        return NEUTRAL
    above = later & (np.int64(0x1FFF) << (13 * suit)) & ~((np.int64(2) << c) - 1)
    if above == 0:
        return -(suit + 1)
    return above & -above


@njit(cache=True)
def _answer(trick, pos, hands, ctx):
    """Fill trick[pos..3] (pos 1..3) with the greedy answers of the seats still to play, in one
    sampled deal with perfect information: each seat maximises its team's change plus its
    relief given the later seats' answers; ties go to the lowest card index."""
    seat, known, mask, lo, hi, sign, top, later = _player(trick, pos, hands, ctx)
    pile_value, s4q = ctx[PILE_VALUES + seat], ctx[S4Q]
    best_v = NEG_INF
    b1 = b2 = b3 = -1
    # Two reusable results: the neutral one and the last lead-taking class (key, change, trick).
    n_ok, n_change, n1, n2, n3 = False, 0, -1, -1, -1
    w_key, w_change, w1, w2, w3 = NO_SHARE, 0, -1, -1, -1
    for c in range(lo, hi):
        if not (mask >> c) & 1:
            continue
        trick[pos] = c
        key = share_key(c, pos, top, later)
        if key == NEUTRAL and n_ok:
            change, trick[1], trick[2], trick[3] = n_change, n1, n2, n3
            trick[pos] = c
        elif key != NO_SHARE and key != NEUTRAL and key == w_key:
            change, trick[1], trick[2], trick[3] = w_change, w1, w2, w3
            trick[pos] = c
        else:
            if pos < 3:
                _answer(trick, pos + 1, hands, ctx)
            change = team0_change(trick, ctx)
            if key == NEUTRAL:
                n_ok, n_change, n1, n2, n3 = True, change, trick[1], trick[2], trick[3]
            elif key != NO_SHARE:
                w_key, w_change, w1, w2, w3 = key, change, trick[1], trick[2], trick[3]
        v = sign * change + relief(c, known, pile_value, s4q)
        if v > best_v:
            best_v = v
            b1, b2, b3 = trick[1], trick[2], trick[3]
    trick[1], trick[2], trick[3] = b1, b2, b3


@njit(cache=True)
def greed_scores_q(owners, seat, trick_in, root_hand, legal, bonus, ctx):
    """Per legal card [K] (quarter points), summed over the sampled deals `owners` [D, 52]
    (seat per card, -1 when played): our team's change from the trick after the greedy answers
    + our relief + lead bonus [K]. Last to play (len(trick_in) == 3): one evaluation, owners
    unused. legal [K] ascending; ctx [CTX_SIZE] as laid out above. Returns int64 [K]."""
    n = trick_in.shape[0]
    k = legal.shape[0]
    out = np.zeros(k, dtype=np.int64)
    trick = np.zeros(4, dtype=np.int64)
    trick[:n] = trick_in
    hands = np.zeros(4, dtype=np.int64)
    hands[seat] = root_hand
    _, known, _, _, _, sign, top, _ = _player(trick, n, hands, ctx)  # the root seat
    for i in range(k):
        out[i] = relief(legal[i], known, ctx[PILE_VALUES + seat], ctx[S4Q])
        out[i] += bonus[i]
    if n == 3:
        for i in range(k):
            trick[3] = legal[i]
            out[i] += sign * team0_change(trick, ctx)
        return out
    out *= owners.shape[0]  # the sample-independent part, once per sample
    for d in range(owners.shape[0]):
        for s in range(4):
            if s != seat:
                hands[s] = 0
        for c in range(52):
            o = owners[d, c]
            if o >= 0 and o != seat:
                hands[o] |= np.int64(1) << c
        later = np.int64(0)
        for j in range(n + 1, 4):
            later |= hands[(ctx[LEADER] + j) & 3]
        last_key, last_change = NO_SHARE, 0
        n_ok, n_change = False, 0
        for i in range(k):
            c = legal[i]
            key = share_key(c, n, top, later)
            if key == NEUTRAL and n_ok:
                change = n_change
            elif key != NO_SHARE and key != NEUTRAL and key == last_key:
                change = last_change
            else:
                trick[n] = c
                _answer(trick, n + 1, hands, ctx)
                change = team0_change(trick, ctx)
                if key == NEUTRAL:
                    n_ok, n_change = True, change
                elif key != NO_SHARE:
                    last_key, last_change = key, change
            out[i] += sign * change
    return out


@njit(cache=True)
def greed_sample_scores_q(owners, seat, trick_in, root_hand, legal, bonus, ctx):
    """The same scores one sampled deal at a time: int64 [D, K] (quarter points) whose sum over
    axis 0 is greed_scores_q's [K] for the same arguments (each deal's row holds the
    sample-independent part once). Last to play, every row is the one exact evaluation (the
    deal does not matter then), so the sum is D times greed_scores_q's."""
    out = np.empty((owners.shape[0], legal.shape[0]), dtype=np.int64)
    for d in range(owners.shape[0]):
        # A one-deal call is that deal's row. Its repeated set-up costs this kernel about 5%;
        # sharing an inlined per-deal helper instead cost the summing kernel, which plays every
        # game, about 1%.
        out[d] = greed_scores_q(owners[d:d + 1], seat, trick_in, root_hand, legal, bonus, ctx)
    return out
