"""The exact value of a joint tabular policy over deals, the search player filling in the states
the table lacks."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.search import search_choice
from scrofazero.tiny_crew.fast.state import (
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
def fallback_card(r, key, legal, fb):
    """A state missing from the table: its only legal card, else the search player's card
    (memoised in fb[2]; fb = (max deals, salt per seat [3], cache))."""
    if popcount(legal) == 1:
        c = 0
        while not legal >> c & 1:
            c += 1
        return c
    cache = fb[2]
    if key in cache:
        return cache[key]
    c = search_choice(r, fb[0], (key + fb[1][mover(r)] * 1000003) % 2147483647)
    cache[key] = c
    return c


@njit
def _policy_value(stack, d, index, probs, fb):
    r = stack[d]
    if is_terminal(r):
        return won(r)
    legal = legal_mask(r)
    key = info_key(r)
    if key not in index and fb[0] > 0:
        step(r, fallback_card(r, key, legal, fb), stack[d + 1])
        return _policy_value(stack, d + 1, index, probs, fb)
    row = index[key] if key in index else -1  # noqa: SIM401 (numba-compiled)
    count = popcount(legal)
    total = 0.0
    for c in range(12):
        if legal >> c & 1:
            p = probs[row, c] if row >= 0 else 1.0 / count
            if p > 0.0:
                step(r, c, stack[d + 1])
                total += p * _policy_value(stack, d + 1, index, probs, fb)
    return total


@njit
def policy_values(deals, first_leaders, t1, t2, index, probs, fb):
    """[D] exact win probability of every deal under the joint policy (index: key -> row of
    probs [M, 12]). A state missing from index plays uniformly over its legal cards when
    fb[0] == 0, else the search player's card with fb[0] deals (see fallback_card)."""
    out = np.zeros(len(deals))
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        out[i] = _policy_value(stack, 0, index, probs, fb)
    return out
