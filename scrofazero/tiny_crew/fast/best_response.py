"""The exact best response of one seat to the others' joint policy, level by level of its
information states."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.policy import fallback_card
from scrofazero.tiny_crew.fast.state import (
    H0,
    I0,
    MAX_DEPTH,
    ROW,
    info_key,
    is_terminal,
    legal_mask,
    mover,
    popcount,
    start_row,
    step,
    won,
)


@njit
def _br_pass(stack, d, seat, k, weight, index, probs, br_index, br_card, q_index, q, q_legal,
             overflow, fb):
    r = stack[d]
    if is_terminal(r):
        return won(r)
    p = mover(r)
    legal = legal_mask(r)
    key = info_key(r)
    if p == seat:
        level = popcount(r[I0 + seat]) - popcount(r[H0 + seat])
        if level > k:
            step(r, br_card[br_index[key]], stack[d + 1])
            return _br_pass(stack, d + 1, seat, k, weight, index, probs, br_index, br_card,
                            q_index, q, q_legal, overflow, fb)
        row = -1
        if level == k:
            if key in q_index:
                row = q_index[key]
            elif len(q_index) < q.shape[0]:
                row = len(q_index)
                q_index[key] = row
                q_legal[row] = legal
            else:
                overflow[0] = 1
                return 0.0
        for c in range(12):
            if legal >> c & 1:
                step(r, c, stack[d + 1])
                v = _br_pass(stack, d + 1, seat, k, weight, index, probs, br_index, br_card,
                             q_index, q, q_legal, overflow, fb)
                if row >= 0:
                    q[row, c] += weight * v
        return 0.0  # above level k values are not needed
    if key not in index and fb[0] > 0:
        step(r, fallback_card(r, key, legal, fb), stack[d + 1])
        return _br_pass(stack, d + 1, seat, k, weight, index, probs, br_index, br_card,
                        q_index, q, q_legal, overflow, fb)
    row = index[key] if key in index else -1  # noqa: SIM401 (numba-compiled)
    count = popcount(legal)
    total = 0.0
    for c in range(12):
        if legal >> c & 1:
            pr = probs[row, c] if row >= 0 else 1.0 / count
            if pr > 0.0:
                step(r, c, stack[d + 1])
                total += pr * _br_pass(stack, d + 1, seat, k, weight * pr, index, probs,
                                       br_index, br_card, q_index, q, q_legal, overflow, fb)
    return total


@njit
def br_level(deals, first_leaders, t1, t2, seat, k, index, probs, br_index, br_card, q_index,
             q, q_legal, overflow, fb):
    """Accumulate q[row, card] = sum over deals and others' play of the win probability after
    `card` at seat's level-k information states, its later levels playing br_card."""
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        _br_pass(stack, 0, seat, k, 1.0, index, probs, br_index, br_card, q_index, q, q_legal,
                 overflow, fb)
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
