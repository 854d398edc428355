"""Open hands: whether the team can still win a deal with every hand shown and best joint
play (the upper bound of every policy)."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.state import (
    MAX_DEPTH,
    ROW,
    descend,
    is_terminal,
    legal_mask,
    next_card,
    start_row,
    won,
)


@njit(cache=True)
def open_win(stack, d0):
    """1.0 when the team wins from stack[d0] with open hands and best joint play, else 0.0: a
    depth-first search over stack[d0:] that stops at the first winning line (a loop, not a
    recursion, so numba can cache it)."""
    nxt = np.zeros(MAX_DEPTH + 1, dtype=np.int64)  # the next card to try at each depth
    legal = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    d, entering, value = d0, True, 0.0  # value: of the state just left
    while True:
        r = stack[d]
        if entering and is_terminal(r):
            value = won(r)
        elif entering or value != 1.0:  # a new state, or its last card lost: try the next
            if entering:
                legal[d] = legal_mask(r)
                nxt[d] = 0
            c = next_card(legal[d], nxt[d])
            if c < 12:
                d, entering = descend(stack, d, c, nxt), True
                continue
            value = 0.0
        if d == d0:  # else a winning card: no need to try the others
            return value
        d, entering = d - 1, False


@njit(cache=True)
def open_hand_values(deals, first_leaders, t1, t2):
    """[D] 1.0 where the team wins the deal with open hands and best joint play, else 0."""
    out = np.zeros(len(deals))
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        out[i] = open_win(stack, 0)
    return out
