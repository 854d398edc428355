"""The compiled Tiny Crew state all the algorithms of this package step: one int64 row.

A state is one int64 row (layout below) so that a depth-first search keeps a preallocated
stack of rows, one per depth. The walks are loops over that stack with small per-depth frames
(allocated once per walk), not recursions, because numba cannot cache a recursive function and
every process would compile them again (some 10 s on 2 cores). An information state is one
int64 key: the mover's initial hand (12 bits), the first leader (2 bits), the number of plays n
(4 bits) and the plays so far (4 bits each, bits 18 and up), which is the perfect-recall view
of docs/rules.md section 16 (tasks are public and fixed by the parameters). The slow reference
is rules.TinyCrewState; the tests check that both agree move by move and on every value this
package computes.
"""

from __future__ import annotations

from numba import njit

# Row layout.
H0, LEADER, TL, T0, N, W0, ST1, ST2, SEQ, FIRST, I0, T1SEAT, T2SEAT = (
    0, 3, 4, 5, 8, 9, 12, 13, 14, 15, 16, 19, 20)
ROW = 21
PENDING, SUCCESS, FAILED = 0, 1, 2
MAX_DEPTH = 13


@njit(cache=True)
def start_row(owners, first_leader, t1, t2, out):
    """Fill `out` [ROW] with the initial state of the deal `owners` [12]."""
    out[:] = 0
    for c in range(12):
        out[H0 + owners[c]] |= 1 << c
    for s in range(3):
        out[I0 + s] = out[H0 + s]
    out[LEADER] = first_leader
    out[FIRST] = first_leader
    out[T1SEAT] = t1
    out[T2SEAT] = t2


@njit(cache=True)
def is_terminal(r):
    return r[ST1] == FAILED or r[ST2] == FAILED or (r[ST1] == SUCCESS and r[ST2] == SUCCESS)


@njit(cache=True)
def won(r):
    return 1.0 if (r[ST1] == SUCCESS and r[ST2] == SUCCESS) else 0.0


@njit(cache=True)
def mover(r):
    return (r[LEADER] + r[TL]) % 3


@njit(cache=True)
def legal_mask(r):
    """12-bit mask of the mover's legal cards."""
    hand = r[H0 + mover(r)]
    if r[TL] > 0:
        suit = r[T0] // 3
        follow = hand & (7 << (3 * suit))
        if follow:
            return follow
    return hand


@njit(cache=True)
def info_key(r):
    """Information-state key of the mover (see the module docstring)."""
    n = r[N]
    return (r[I0 + mover(r)] | (r[FIRST] << 12) | (n << 14)
            | ((r[SEQ] & ((1 << (4 * n)) - 1)) << 18))


@njit(cache=True)
def step(r, card, out):
    """out = r after the mover plays `card` (assumed legal)."""
    out[:] = r
    p = mover(r)
    out[H0 + p] &= ~(1 << card)
    out[T0 + r[TL]] = card
    out[SEQ] |= card << (4 * r[N])
    out[N] = r[N] + 1
    out[TL] = r[TL] + 1
    if out[TL] < 3:
        return
    # The trick is complete: the highest submarine wins, else the highest of the led colour.
    best = 0
    for i in range(1, 3):
        c, b = out[T0 + i], out[T0 + best]
        if c // 3 == 3:
            if b // 3 != 3 or c > b:
                best = i
        elif b // 3 != 3 and c // 3 == out[T0] // 3 and c > b:
            best = i
    winner = (out[LEADER] + best) % 3
    blues = 0
    for i in range(3):
        c = out[T0 + i]
        if c == 2:
            out[ST1] = SUCCESS if winner == out[T1SEAT] else FAILED
        if 3 <= c <= 5:
            blues += 1
    out[W0 + winner] += blues
    if out[W0 + out[T2SEAT]] >= 2:
        out[ST2] = FAILED
    else:
        gone = True
        for s in range(3):
            if out[H0 + s] & (7 << 3):
                gone = False
        if gone:
            out[ST2] = SUCCESS if out[W0 + out[T2SEAT]] == 1 else FAILED
    out[LEADER] = winner
    out[TL] = 0


@njit(cache=True)
def next_card(legal, c):
    """The lowest card >= c in the 12-bit mask `legal`, or 12 when there is none."""
    while c < 12 and not legal >> c & 1:
        c += 1
    return c


@njit(cache=True)
def descend(stack, d, c, nxt):
    """A depth-first walk's step down: card c played from stack[d] into stack[d + 1], c + 1
    noted as the next card to try at depth d; returns d + 1."""
    nxt[d] = c + 1
    step(stack[d], c, stack[d + 1])
    return d + 1


@njit(cache=True)
def popcount(x):
    """The number of set bits of x."""
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n
