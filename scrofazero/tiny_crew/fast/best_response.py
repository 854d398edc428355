"""The exact best response of one seat to the others' joint policy, level by level of its
information states."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.policy import card_probability, fallback_card
from scrofazero.tiny_crew.fast.state import (
    H0,
    I0,
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

_FORCED, _OWN, _OTHERS = 0, 1, 2  # what a frame walks: one card, seat's cards, the others'


@njit(cache=True)
def _br_pass(stack, seat, k, index, probs, br_index, br_card, q_index, q, q_legal, overflow,
             fb):
    """One deal from stack[0]: adds to q[row, card] the win probability after `card` at
    seat's level-k information states, weighted by the others' probability of reaching them;
    seat plays br_card at its later levels and every card at its earlier ones. A loop with
    per-depth frames, not a recursion, so numba can cache it."""
    nxt = np.zeros(MAX_DEPTH + 1, dtype=np.int64)  # the next card to try at each depth
    legal = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    kinds = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    rows = np.zeros(MAX_DEPTH + 1, dtype=np.int64)  # q's row (_OWN) or the table's (_OTHERS)
    counts = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    weights = np.ones(MAX_DEPTH + 1)  # the others' probability of reaching each frame
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
                nxt[d] = 0
                total[d] = 0.0
                forced = -1
                if mover(r) == seat:
                    level = popcount(r[I0 + seat]) - popcount(r[H0 + seat])
                    if level > k:
                        forced = br_card[br_index[key]]
                    else:
                        kinds[d] = _OWN
                        rows[d] = _q_row(key, legal[d], level == k, q_index, q, q_legal,
                                         overflow)
                        if rows[d] == -2:
                            value = 0.0
                            leaving = True
                elif key not in index and fb[0] > 0:
                    forced = fallback_card(r, key, legal[d], fb)
                else:
                    kinds[d] = _OTHERS
                    rows[d] = index[key] if key in index else -1  # noqa: SIM401 (numba)
                    counts[d] = popcount(legal[d])
                if forced >= 0:
                    kinds[d] = _FORCED
                    step(r, forced, stack[d + 1])
                    weights[d + 1] = weights[d]
                    d += 1
                    continue
        elif kinds[d] == _FORCED:
            leaving = True  # one card played: its child's value is this state's
        elif kinds[d] == _OWN:
            if rows[d] >= 0:
                q[rows[d], nxt[d] - 1] += weights[d] * value
        else:
            total[d] += card_probability(probs, rows[d], nxt[d] - 1, counts[d]) * value
        if not leaving:
            c = next_card(legal[d], nxt[d])
            pr = 1.0
            if kinds[d] == _OTHERS:
                while c < 12 and not card_probability(probs, rows[d], c, counts[d]) > 0.0:
                    c = next_card(legal[d], c + 1)
                if c < 12:
                    pr = card_probability(probs, rows[d], c, counts[d])
            if c < 12:
                nxt[d] = c + 1
                step(r, c, stack[d + 1])
                weights[d + 1] = weights[d] * pr if kinds[d] == _OTHERS else weights[d]
                d += 1
                entering = True
                continue
            value = total[d]  # 0.0 for seat's own states: above level k values are not needed
        if d == 0:
            return value
        d -= 1
        entering = False


@njit(cache=True)
def _q_row(key, legal, at_level, q_index, q, q_legal, overflow):
    """q's row for seat's state `key`: -1 off level k, a new row for a new key, or -2 (and
    overflow set) when q is full."""
    if not at_level:
        return -1
    if key in q_index:
        return q_index[key]
    if len(q_index) < q.shape[0]:
        row = len(q_index)
        q_index[key] = row
        q_legal[row] = legal
        return row
    overflow[0] = 1
    return -2


@njit(cache=True)
def br_level(deals, first_leaders, t1, t2, seat, k, index, probs, br_index, br_card, q_index,
             q, q_legal, overflow, fb):
    """Accumulate q[row, card] = sum over deals and others' play of the win probability after
    `card` at seat's level-k information states, its later levels playing br_card."""
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        _br_pass(stack, seat, k, index, probs, br_index, br_card, q_index, q, q_legal, overflow,
                 fb)
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
