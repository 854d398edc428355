"""Exact sampling of initial Fish deals by a dynamic programme over the sets (the count of
fish/belief/tracker.py with its backward pass kept), for fish/belief/sampling.py: one item per
constrained set (every assignment of its free cards enumerated, checked, grouped by per-seat
count vector d) or per lone card with forbidden seats; a forward pass over the dense box of
leftover capacities, then backward sampling (the leftover the pool fills in proportion to
F_K(r) * multinomial(P; r), each item's d in proportion to w_d F_{k-1}(r + d), an assignment
with that d uniformly, the pool as a uniform permutation). Cost: count vectors times box
states.

Why a second form of the tracker's count (fish/belief/fast.py): that one (numba, sparse
supports) weighs deals by soft evidence and ask models and keeps only what marginals need; the
sampler uses hard evidence only and needs every forward table kept to draw backwards. Both count
the same deals: `SetDP.log_count` equals the tracker's log_num_consistent_deals and the
brute-force count (tests/fish/test_set_dp_count.py)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from scrofazero.games.fish.cards import set_of

_TABLES: dict = {}  # set tables by their inputs (shared: a table depends only on its key)
_TABLES_LIMIT = 256
_LOG_FACTORIALS = np.array([math.lgamma(k + 1.0) for k in range(65)])


def log_factorial(r: npt.ArrayLike) -> np.ndarray:
    """log(r!) of non-negative integer counts (at most 64: the deck's size)."""
    return _LOG_FACTORIALS[np.asarray(r, dtype=np.int64)]


def _set_table(A: int, choices: list, atleast: list, not_named: list, exact: list):
    """Every assignment of one set's constrained free cards (card i to a seat in choices[i])
    meeting the set's constraints (columns local to the set), grouped by count vector:
    (assignments [n, f] int8, d_rows [m, A], weight [m], group [n])."""
    key = (A, tuple(tuple(int(a) for a in ch) for ch in choices),
           tuple((tuple(c), a) for c, a in atleast),
           tuple((tuple(c), tuple(st)) for c, st in not_named),
           tuple((tuple(c), tuple(w)) for c, w in exact))
    if key in _TABLES:
        return _TABLES[key]
    grid = np.stack(np.meshgrid(*choices, indexing="ij"), axis=-1).reshape(-1, len(choices))
    grid = grid.astype(np.int8)
    ok = np.ones(len(grid), bool)
    for cols, a in atleast:
        ok &= (grid[:, cols] == a).any(axis=1)
    for cols, seats in not_named:
        ok &= ~(grid[:, cols] == np.array(seats)[None, :]).all(axis=1)
    for cols, want in exact:
        for a in range(A):
            ok &= (grid[:, cols] == a).sum(axis=1) == want[a]
    grid = grid[ok]
    code = np.zeros(len(grid), np.int64)  # count vector d as a base-8 number
    for i in range(grid.shape[1]):
        code += np.int64(8) ** grid[:, i].astype(np.int64)
    codes, group, weight = np.unique(code, return_inverse=True, return_counts=True)
    d_rows = (codes[:, None] // (np.int64(8) ** np.arange(A))[None, :]) % 8
    table = (grid, d_rows.astype(np.int64), weight.astype(float), group.reshape(-1))
    if len(_TABLES) >= _TABLES_LIMIT:
        _TABLES.clear()
    _TABLES[key] = table
    return table


class SetDP:
    """Exact sampling by a dynamic programme over the sets (the tracker's count, rebuilt here
    with its backward pass kept). Items: the constrained free cards of a set with constraints,
    every assignment of them to allowed seats enumerated, checked against the set's constraints
    and grouped by count vector d (weight w_d = how many); a lone card with forbidden seats,
    one row per allowed seat. Forward over the dense box of leftover capacities r:
    F_k(r - d) += w_d F_{k-1}(r); the pool fills the last r in multinomial(P; r) ways.
    Backward: the last r in proportion to F_K(r) Mult(P; r), each item's d in proportion to
    w_d F_{k-1}(r + d), then one of the item's assignments with that d uniformly, then the pool
    as a uniform permutation into r: an exact draw."""

    def __init__(self, problem):
        self.problem = problem
        self.shape = tuple(int(c) + 1 for c in problem.cap)
        self.box = int(np.prod(self.shape))
        by_set: dict[int, list[int]] = {}
        for j, c in enumerate(problem.cards):
            by_set.setdefault(set_of(c), []).append(j)
        self.plan = []  # (cols, set-local constraints or None for single cards)
        self.cost = 0
        for cols in by_set.values():
            local = {j: i for i, j in enumerate(cols)}
            cons = ([(np.array([local[int(j)] for j in c]), a) for c, a in problem.atleast
                     if int(c[0]) in local],
                    [(np.array([local[int(j)] for j in c]), st) for c, st in problem.not_named
                     if int(c[0]) in local],
                    [(np.array([local[int(j)] for j in c]), w) for c, w in problem.exact
                     if len(c) and int(c[0]) in local])
            if any(cons):
                seats = int(problem.allowed[cols].any(axis=0).sum())
                self.plan.append((np.array(cols, np.int64), cons))
                self.cost += math.comb(len(cols) + seats - 1, seats - 1) * self.box
            else:
                for j in cols:
                    self.plan.append((np.array([j], np.int64), None))
                    self.cost += int(problem.allowed[j].sum()) * self.box

    def run(self) -> bool:
        """Builds the items and runs the forward pass; False if no deal is consistent. Sets
        `log_count`: log of the number of consistent deals of the free cards (the forward
        tables are rescaled per item; the scales are summed back in here)."""
        problem, A = self.problem, len(self.problem.seats)
        self.items = []
        for cols, cons in self.plan:
            if cons is None:
                seats = np.flatnonzero(problem.allowed[cols[0]])
                grid = seats[:, None].astype(np.int8)
                d_rows = np.eye(A, dtype=np.int64)[seats]
                self.items.append((cols, grid, d_rows, np.ones(len(seats)),
                                   np.arange(len(seats))))
            else:
                choices = [np.flatnonzero(problem.allowed[j]) for j in cols]
                self.items.append((cols,) + _set_table(A, choices, *cons))
        F = np.zeros(self.shape)
        F[tuple(s - 1 for s in self.shape)] = 1.0
        self.forward = [F]
        log_scale = 0.0  # F_k is the true forward table divided by exp(log_scale)
        for _, _, d_rows, weight, _ in self.items:
            G = np.zeros(self.shape)
            for d, w in zip(d_rows, weight):
                if (d >= np.array(self.shape)).any():
                    continue
                src = tuple(slice(int(x), None) for x in d)
                dst = tuple(slice(0, s - int(x)) for s, x in zip(self.shape, d))
                G[dst] += w * F[src]
            scale = G.max()
            if not scale > 0:
                return False
            F = G / scale
            log_scale += math.log(scale)
            self.forward.append(F)
        r = np.indices(self.shape).reshape(len(self.shape), -1).T  # [box, A]
        log_mult = -log_factorial(r).sum(axis=1)
        fill = r.sum(axis=1) == len(problem.pool)
        top = log_mult[fill].max() if fill.any() else 0.0
        last = F.reshape(-1) * np.where(fill, np.exp(log_mult - top), 0.0)
        if not last.sum() > 0:
            return False
        self.log_count = (log_scale + math.log(last.sum()) + top
                          + float(log_factorial(len(problem.pool))))
        self.last = last / last.sum()
        self.states = r
        return True

    def draw(self, rng: np.random.Generator) -> np.ndarray:
        problem = self.problem
        r = self.states[rng.choice(len(self.last), p=self.last)].copy()
        leftover = r.copy()  # what the pool fills
        x = np.zeros(len(problem.cards), np.int64)
        cap = problem.cap
        for k in range(len(self.items) - 1, -1, -1):
            cols, grid, d_rows, weight, group = self.items[k]
            before = r[None, :] + d_rows  # [m, A]
            fits = (before <= cap[None, :]).all(axis=1)
            w = np.zeros(len(d_rows))
            w[fits] = weight[fits] * self.forward[k][tuple(before[fits].T)]
            pick = rng.choice(len(w), p=w / w.sum())
            rows = np.flatnonzero(group == pick)
            x[cols] = grid[rows[rng.integers(len(rows))]]
            r = r + d_rows[pick]
        seats = np.array(problem.seats, np.int64)
        deal = problem.base.copy()
        if len(problem.cards):
            deal[np.array(problem.cards)] = seats[x]
        if problem.pool:
            deal[rng.permutation(np.array(problem.pool))] = np.repeat(seats, leftover)
        return deal
