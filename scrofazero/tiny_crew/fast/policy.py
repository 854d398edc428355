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
    next_card,
    popcount,
    start_row,
    step,
    won,
)


@njit(cache=True)
def fallback_card(r, key, legal, fb):
    """A state missing from the table: its only legal card, else the search player's card
    (memoised in fb[2]; fb = (max deals, salt per seat [3], cache))."""
    if popcount(legal) == 1:
        return next_card(legal, 0)
    cache = fb[2]
    if key in cache:
        return cache[key]
    c = search_choice(r, fb[0], (key + fb[1][mover(r)] * 1000003) % 2147483647)
    cache[key] = c
    return c


@njit(cache=True)
def card_probability(probs, row, c, count):
    """The table's probability of card c at a state of table row `row` (-1: not in the table,
    uniform over its `count` legal cards)."""
    return probs[row, c] if row >= 0 else 1.0 / count


@njit(cache=True)
def _policy_value(stack, index, probs, fb):
    """The exact win probability from stack[0] under the joint policy: a depth-first walk
    summing each card's probability times its child's value, in card order (a loop with
    per-depth frames, not a recursion, so numba can cache it)."""
    nxt = np.zeros(MAX_DEPTH + 1, dtype=np.int64)  # the next card to try at each depth
    legal = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    rows = np.zeros(MAX_DEPTH + 1, dtype=np.int64)  # table row, -1 when missing
    counts = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    forced = np.zeros(MAX_DEPTH + 1, dtype=np.bool_)  # the search player's card, not the table
    total = np.zeros(MAX_DEPTH + 1)
    d = 0
    entering = True
    value = 0.0  # the value of the node just left
    while True:
        r = stack[d]
        leaving = False
        if entering:
            if is_terminal(r):
                value = won(r)
                leaving = True
            else:
                legal[d] = legal_mask(r)
                key = info_key(r)
                forced[d] = key not in index and fb[0] > 0
                if forced[d]:
                    step(r, fallback_card(r, key, legal[d], fb), stack[d + 1])
                    d += 1
                    continue
                rows[d] = index[key] if key in index else -1  # noqa: SIM401 (numba-compiled)
                counts[d] = popcount(legal[d])
                total[d] = 0.0
                nxt[d] = 0
        elif forced[d]:
            leaving = True  # one card played: its child's value is this state's
        else:
            total[d] += card_probability(probs, rows[d], nxt[d] - 1, counts[d]) * value
        if not leaving:
            c = next_card(legal[d], nxt[d])
            while c < 12 and not card_probability(probs, rows[d], c, counts[d]) > 0.0:
                c = next_card(legal[d], c + 1)
            if c < 12:
                nxt[d] = c + 1
                step(r, c, stack[d + 1])
                d += 1
                entering = True
                continue
            value = total[d]
        if d == 0:
            return value
        d -= 1
        entering = False


@njit(cache=True)
def policy_values(deals, first_leaders, t1, t2, index, probs, fb):
    """[D] exact win probability of every deal under the joint policy (index: key -> row of
    probs [M, 12]). A state missing from index plays uniformly over its legal cards when
    fb[0] == 0, else the search player's card with fb[0] deals (see fallback_card)."""
    out = np.zeros(len(deals))
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        out[i] = _policy_value(stack, index, probs, fb)
    return out
