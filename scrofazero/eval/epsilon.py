"""How far a matrix of duplicate margins is from a strength ladder: the intransitivity epsilon.

If points between players were transitive, every margin would be a difference of ratings,
M[i][j] = r[j] - r[i] (column j beats row i by M[i][j], as eval.arena.matrix returns), and in
particular every triangle would close: M[a][b] + M[b][c] = M[a][c]. We fit the ratings by least
squares; on a complete antisymmetric matrix the solution (mean rating 0) is the column mean
r[j] = (1/n) sum_i M[i][j]. What the ratings cannot explain is the cyclic part
R[i][j] = M[i][j] - (r[j] - r[i]), and

    epsilon = sqrt(sum_{i<j} R[i][j]^2) / sqrt(sum_{i<j} M[i][j]^2)

is the share of the matrix (in the Frobenius norm) that is intransitive: 0 for a perfect
ladder, 1 for pure rock-paper-scissors. For three players every residual has size |cycle| / 3,
with cycle = M[a][b] + M[b][c] - M[a][c] the points a triangle fails to close by; the cycles of
all triangles are reported too. (Our definition: the paper names the statistic; the gongzhu
doc does not give its formula.)
"""

from __future__ import annotations

import itertools

import numpy as np


def intransitivity(margin) -> dict:
    """Ratings, epsilon and triangle cycles of an antisymmetric margin matrix [n, n] (n >= 2).

    Returns {"ratings": [n], "epsilon": float (nan when every margin is 0), "residual":
    [n][n], "cycles": [(a, b, c, cycle)] for a < b < c}."""
    m = np.asarray(margin, dtype=np.float64)
    n = m.shape[0]
    if m.ndim != 2 or m.shape != (n, n) or n < 2:
        raise ValueError(f"margin must be a square matrix of at least 2 players, got {m.shape}")
    if not np.allclose(m, -m.T, atol=1e-9):
        raise ValueError("margin must be antisymmetric (margin[j][i] = -margin[i][j])")
    ratings = m.mean(axis=0)  # [n]; least squares with mean 0
    residual = m - (ratings[None, :] - ratings[:, None])
    upper = np.triu_indices(n, 1)
    norm = float(np.sqrt(np.square(m[upper]).sum()))
    epsilon = float(np.sqrt(np.square(residual[upper]).sum()) / norm) if norm > 0 else float("nan")
    cycles = [
        (a, b, c, float(m[a, b] + m[b, c] - m[a, c]))
        for a, b, c in itertools.combinations(range(n), 3)
    ]
    return {"ratings": ratings.tolist(), "epsilon": epsilon, "residual": residual.tolist(),
            "cycles": cycles}


def format_intransitivity(players, stats: dict) -> str:
    """Ratings and epsilon as printed by `evaluate.py --matrix`."""
    order = np.argsort(stats["ratings"])[::-1]
    ladder = ", ".join(f"{players[i]} {stats['ratings'][i]:+.1f}" for i in order)
    lines = [f"ratings (least squares, mean 0): {ladder}",
             f"intransitivity epsilon = {stats['epsilon']:.3f} "
             "(share of the margins no rating ladder explains; eval/epsilon.py)"]
    for a, b, c, cycle in stats["cycles"]:
        lines.append(f"  triangle {players[a]} -> {players[b]} -> {players[c]}: "
                     f"fails to close by {cycle:+.1f} points")
    return "\n".join(lines)
