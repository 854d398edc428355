"""The determinized (open-hand vote) search player: the legal card that wins with open hands
in the most deals of the unseen cards consistent with what the mover has seen."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.bound import open_win
from scrofazero.tiny_crew.fast.state import (
    FIRST,
    H0,
    I0,
    LEADER,
    MAX_DEPTH,
    PENDING,
    ROW,
    SEQ,
    ST1,
    ST2,
    T0,
    TL,
    W0,
    N,
    legal_mask,
    mover,
    popcount,
    step,
)


@njit(cache=True)
def _voids(r):
    """[3] 4-bit masks of the suits each seat has shown to lack (failed to follow)."""
    v = np.zeros(3, dtype=np.int64)
    leader = r[FIRST]
    n = r[N]
    # Replay the plays to know each card's player and the led suit.
    row = np.zeros(ROW, dtype=np.int64)
    tmp = np.zeros(ROW, dtype=np.int64)
    row[:] = r
    for s in range(3):
        row[H0 + s] = r[I0 + s]
    row[LEADER] = leader
    row[TL] = 0
    row[N] = 0
    row[SEQ] = 0
    row[W0:W0 + 3] = 0
    row[ST1] = PENDING
    row[ST2] = PENDING
    for j in range(n):
        card = (r[SEQ] >> (4 * j)) & 15
        p = mover(row)
        if row[TL] > 0 and card // 3 != row[T0] // 3:
            v[p] |= 1 << (row[T0] // 3)
        step(row, card, tmp)
        row[:] = tmp
    return v


@njit(cache=True)
def search_choice(r, max_deals, seed):
    """The card the determinized player picks at the mover's state r: over the deals of the
    unseen cards consistent with hand sizes and shown voids (all of them, or max_deals of them
    drawn with a seed from the information state), the legal card that wins with open hands in
    the most deals; ties go to the lowest card."""
    p = mover(r)
    a, b = (p + 1) % 3, (p + 2) % 3
    unseen = r[H0 + a] | r[H0 + b]
    need_a = popcount(r[H0 + a])
    voids = _voids(r)
    cards = np.zeros(12, dtype=np.int64)
    u = 0
    for c in range(12):
        if unseen >> c & 1:
            cards[u] = c
            u += 1
    # Every subset of the unseen cards of size need_a for seat a, consistent with voids.
    options = np.zeros(1 << u, dtype=np.int64)
    m = 0
    for sub in range(1 << u):
        if popcount(sub) != need_a:
            continue
        ha = 0
        for j in range(u):
            if sub >> j & 1:
                ha |= 1 << cards[j]
        hb = unseen & ~ha
        ok = True
        for s in range(4):
            if (voids[a] >> s & 1) and (ha & (7 << (3 * s))):
                ok = False
            if (voids[b] >> s & 1) and (hb & (7 << (3 * s))):
                ok = False
        if ok:
            options[m] = ha
            m += 1
    if m > max_deals:
        np.random.seed(seed)
        pick = np.random.permutation(m)[:max_deals]
        chosen = options[pick]
        m = max_deals
    else:
        chosen = options[:m]
    legal = legal_mask(r)
    wins = np.zeros(12)
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for j in range(m):
        for c in range(12):
            if legal >> c & 1:
                stack[0, :] = r
                stack[0, H0 + a] = chosen[j]
                stack[0, H0 + b] = unseen & ~chosen[j]
                step(stack[0], c, stack[1])
                wins[c] += open_win(stack, 1)
    best = -1
    for c in range(12):
        if legal >> c & 1 and (best < 0 or wins[c] > wins[best]):
            best = c
    return best
