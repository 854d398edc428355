"""The exact best response of one seat to the others' joint policy, level by level of its
information states."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.policy import policy_walk
from scrofazero.tiny_crew.fast.state import MAX_DEPTH, ROW, start_row


@njit(cache=True)
def br_level(deals, first_leaders, t1, t2, seat, k, index, probs, br_index, br_card, q_index,
             q, q_legal, overflow, fb):
    """Accumulate q[row, card] = sum over deals and others' play of the win probability after
    `card` at seat's level-k information states, its later levels playing br_card (the walk of
    policy.policy_walk with seat's play replaced)."""
    response = (seat, k, br_index, br_card, q_index, q, q_legal, overflow)
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        policy_walk(stack, index, probs, fb, response)
        if overflow[0]:
            return


@njit(cache=True)
def best_cards(q, q_legal, rows):
    """Argmax over legal cards of q[:rows] (ties to the lowest card)."""
    out = np.zeros(rows, dtype=np.int64)
    for i in range(rows):
        best = -1
        for c in range(12):
            if q_legal[i] >> c & 1 and (best < 0 or q[i, c] > q[i, best]):
                best = c
        out[i] = best
    return out
