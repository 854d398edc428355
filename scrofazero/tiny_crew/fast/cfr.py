"""Chance-sampled CFR (and CFR+): one full-width traversal per sampled deal, perfect-recall
information states shared across deals."""

from __future__ import annotations

import numpy as np
from numba import njit

from scrofazero.tiny_crew.fast.state import (
    MAX_DEPTH,
    ROW,
    info_key,
    is_terminal,
    legal_mask,
    mover,
    start_row,
    step,
    won,
)


@njit
def _cfr(stack, d, reach, index, regret, strat, legal_rows, t_weight, plus):
    r = stack[d]
    if is_terminal(r):
        return won(r)
    p = mover(r)
    legal = legal_mask(r)
    key = info_key(r)
    if key in index:
        row = index[key]
    else:
        row = len(index)
        index[key] = row
    legal_rows[row] = legal
    # Regret matching over the legal cards.
    sigma = np.zeros(12)
    pos = 0.0
    count = 0
    for c in range(12):
        if legal >> c & 1:
            count += 1
            if regret[row, c] > 0:
                pos += regret[row, c]
    for c in range(12):
        if legal >> c & 1:
            sigma[c] = (regret[row, c] / pos if regret[row, c] > 0 else 0.0) if pos > 0 \
                else 1.0 / count
    values = np.zeros(12)
    v = 0.0
    for c in range(12):
        if legal >> c & 1:
            old = reach[p]
            reach[p] = old * sigma[c]
            step(r, c, stack[d + 1])
            values[c] = _cfr(stack, d + 1, reach, index, regret, strat, legal_rows,
                             t_weight, plus)
            reach[p] = old
            v += sigma[c] * values[c]
    others = 1.0
    for q in range(3):
        if q != p:
            others *= reach[q]
    for c in range(12):
        if legal >> c & 1:
            regret[row, c] += others * (values[c] - v)
            if plus and regret[row, c] < 0:
                regret[row, c] = 0.0
            strat[row, c] += t_weight * reach[p] * sigma[c]
    return v


@njit
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
        _cfr(stack, 0, reach, index, regret, strat, legal_rows, weight, plus)
        done += 1
    return done
