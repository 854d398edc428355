"""Open hands: whether the team can still win a deal with every hand shown and best joint
play (the upper bound of every policy)."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.state import (
    MAX_DEPTH,
    ROW,
    is_terminal,
    legal_mask,
    start_row,
    step,
    won,
)


@njit
def open_win(stack, d):
    r = stack[d]
    if is_terminal(r):
        return won(r)
    legal = legal_mask(r)
    for c in range(12):
        if legal >> c & 1:
            step(r, c, stack[d + 1])
            if open_win(stack, d + 1) == 1.0:
                return 1.0
    return 0.0


@njit
def open_hand_values(deals, first_leaders, t1, t2):
    """[D] 1.0 where the team wins the deal with open hands and best joint play, else 0."""
    out = np.zeros(len(deals))
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        out[i] = open_win(stack, 0)
    return out
