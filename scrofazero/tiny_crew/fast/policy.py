"""The exact value of a joint tabular policy over deals, the search player filling in the states
the table lacks; the same walk, with one seat's play replaced, is the best-response pass."""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from scrofazero.tiny_crew.fast.search import search_choice
from scrofazero.tiny_crew.fast.state import (
    H0,
    I0,
    MAX_DEPTH,
    ROW,
    descend,
    info_key,
    is_terminal,
    legal_mask,
    mover,
    next_card,
    popcount,
    start_row,
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


_FORCED, _OWN, _TABLE = 0, 1, 2  # what a frame walks: one card, the responder's, the table's


@njit(cache=True)
def policy_walk(stack, index, probs, fb, response):
    """The exact win probability from stack[0] under the joint policy (index, probs, fallback
    fb): a depth-first walk summing each card's probability times its child's value, in card
    order. response = (seat, k, br_index, br_card, q_index, q, q_legal, overflow) replaces
    seat's play (seat -1: nobody's): br_card at its levels above k and every card at k and
    below, adding to q[row, card] the win probability after `card` at its level-k states,
    weighted by the others' probability of reaching them (the best-response pass; seat's states
    are then worth 0 to the walk). A loop with per-depth frames, not a recursion, so numba can
    cache it."""
    seat, k, br_index, br_card, q_index, q, q_legal, overflow = response
    nxt = np.zeros(MAX_DEPTH + 1, dtype=np.int64)  # the next card to try at each depth
    legal = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    kinds = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    rows = np.zeros(MAX_DEPTH + 1, dtype=np.int64)  # q's row (_OWN) or the table's (_TABLE)
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
                        leaving = rows[d] == -2  # q is full: the caller grows it and retries
                elif key not in index and fb[0] > 0:
                    forced = fallback_card(r, key, legal[d], fb)
                else:
                    kinds[d] = _TABLE
                    rows[d] = index[key] if key in index else -1  # noqa: SIM401 (numba)
                    counts[d] = popcount(legal[d])
                if forced >= 0:
                    kinds[d] = _FORCED
                    weights[d + 1] = weights[d]
                    d = descend(stack, d, forced, nxt)
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
            while kinds[d] == _TABLE and c < 12:  # the table's cards of positive probability
                pr = card_probability(probs, rows[d], c, counts[d])
                if pr > 0.0:
                    break
                c = next_card(legal[d], c + 1)
            if c < 12:
                weights[d + 1] = weights[d] * pr
                d, entering = descend(stack, d, c, nxt), True
                continue
            value = total[d]
        if d == 0:
            return value
        d, entering = d - 1, False


@njit(cache=True)
def _q_row(key, legal, at_level, q_index, q, q_legal, overflow):
    """q's row for the responder's state `key`: -1 off level k, a new row for a new key, or -2
    (and overflow set) when q is full."""
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
def policy_values(deals, first_leaders, t1, t2, index, probs, fb):
    """[D] exact win probability of every deal under the joint policy (index: key -> row of
    probs [M, 12]). A state missing from index plays uniformly over its legal cards when
    fb[0] == 0, else the search player's card with fb[0] deals (see fallback_card)."""
    nobody = (-1, 0, Dict.empty(key_type=types.int64, value_type=types.int64),
              np.zeros(0, dtype=np.int64), Dict.empty(key_type=types.int64, value_type=types.int64),
              np.zeros((0, 12)), np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64))
    out = np.zeros(len(deals))
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        out[i] = policy_walk(stack, index, probs, fb, nobody)
    return out
