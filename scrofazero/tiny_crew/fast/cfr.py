"""Chance-sampled CFR (and CFR+): one full-width traversal per sampled deal, perfect-recall
information states shared across deals."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.state import (
    MAX_DEPTH,
    ROW,
    descend,
    info_key,
    is_terminal,
    legal_mask,
    mover,
    next_card,
    start_row,
    won,
)


@njit(cache=True)
def _cfr(stack, reach, index, regret, strat, legal_rows, t_weight, plus):
    """One full-width CFR traversal from stack[0]; returns the team's value there. Each
    state's regret matching is computed on entry, its children are walked in card order and
    its regrets and strategy sums updated on leaving (a loop with per-depth frames, not a
    recursion, so numba can cache it)."""
    nxt = np.zeros(MAX_DEPTH + 1, dtype=np.int64)  # the next card to try at each depth
    legal = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    rows = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    movers = np.zeros(MAX_DEPTH + 1, dtype=np.int64)
    old = np.zeros(MAX_DEPTH + 1)  # the mover's reach before the card being walked
    v = np.zeros(MAX_DEPTH + 1)
    sigma = np.zeros((MAX_DEPTH + 1, 12))
    values = np.zeros((MAX_DEPTH + 1, 12))
    d = 0
    entering = True
    value = 0.0  # the value of the node just left
    while True:
        r = stack[d]
        if entering and is_terminal(r):
            value = won(r)
        else:
            if entering:
                _enter(r, d, index, regret, legal_rows, legal, rows, movers, sigma)
                v[d] = 0.0
                nxt[d] = 0
            else:
                c = nxt[d] - 1
                values[d, c] = value
                reach[movers[d]] = old[d]
                v[d] += sigma[d, c] * value
            c = next_card(legal[d], nxt[d])
            if c < 12:
                p = movers[d]
                old[d] = reach[p]
                reach[p] = old[d] * sigma[d, c]
                d, entering = descend(stack, d, c, nxt), True
                continue
            _leave(d, reach, regret, strat, legal, rows, movers, sigma, values, v[d],
                   t_weight, plus)
            value = v[d]
        if d == 0:
            return value
        d, entering = d - 1, False


@njit(cache=True)
def _enter(r, d, index, regret, legal_rows, legal, rows, movers, sigma):
    """Frame d for state r: its table row (a new one for a new key), legal cards, mover and
    the regret-matching strategy sigma[d] over its legal cards (the other cards' entries are
    never read)."""
    movers[d] = mover(r)
    legal[d] = legal_mask(r)
    key = info_key(r)
    if key in index:
        row = index[key]
    else:
        row = len(index)
        index[key] = row
    rows[d] = row
    legal_rows[row] = legal[d]
    pos = 0.0
    count = 0
    for c in range(12):
        if legal[d] >> c & 1:
            count += 1
            if regret[row, c] > 0:
                pos += regret[row, c]
    for c in range(12):
        if legal[d] >> c & 1:
            sigma[d, c] = (regret[row, c] / pos if regret[row, c] > 0 else 0.0) if pos > 0 \
                else 1.0 / count


@njit(cache=True)
def _leave(d, reach, regret, strat, legal, rows, movers, sigma, values, v, t_weight, plus):
    """The regret and strategy-sum updates of frame d once all its cards are walked."""
    p, row = movers[d], rows[d]
    others = 1.0
    for q in range(3):
        if q != p:
            others *= reach[q]
    for c in range(12):
        if legal[d] >> c & 1:
            regret[row, c] += others * (values[d, c] - v)
            if plus and regret[row, c] < 0:
                regret[row, c] = 0.0
            strat[row, c] += t_weight * reach[p] * sigma[d, c]


@njit(cache=True)
def cfr_run(deals, first_leaders, t1, t2, order, start_t, index, regret, strat, legal_rows,
            plus):
    """Chance-sampled CFR on deals[order[k]] for k = 0, 1, ... (iteration start_t + k), each a
    full-width traversal with perfect-recall information states shared across deals. Stops
    early when the tables may not hold one more deal's new states; returns iterations done."""
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    reach = np.ones(3)
    done = 0
    for k in range(len(order)):
        if len(index) + 30000 > regret.shape[0]:
            break
        i = order[k]
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        reach[:] = 1.0
        weight = float(start_t + k + 1) if plus else 1.0  # CFR+ averages linearly
        _cfr(stack, reach, index, regret, strat, legal_rows, weight, plus)
        done += 1
    return done
