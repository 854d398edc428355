"""Intransitivity epsilon (scrofazero/eval/epsilon.py).

Invariants: a matrix made of rating differences has epsilon 0 and gives back its ratings (mean
0); rock-paper-scissors has epsilon 1; for three players the triangle cycle is
M[a][b] + M[b][c] - M[a][c] and every residual has size |cycle| / 3; epsilon is unchanged by
scaling; non-square or non-antisymmetric input raises.
"""

import numpy as np
import pytest

from scrofazero.eval.epsilon import format_intransitivity, intransitivity


def ladder(r):
    r = np.asarray(r, dtype=float)
    return r[None, :] - r[:, None]  # column j beats row i by r[j] - r[i]


def test_ladder_is_transitive():
    stats = intransitivity(ladder([0, 194, 273, 300]))
    assert stats["epsilon"] == pytest.approx(0, abs=1e-12)
    r = np.array([0, 194, 273, 300.0])
    np.testing.assert_allclose(stats["ratings"], r - r.mean())
    assert all(abs(cyc) < 1e-9 for *_, cyc in stats["cycles"])


def test_rock_paper_scissors_is_fully_cyclic():
    m = np.array([[0, 1, -1], [-1, 0, 1], [1, -1, 0]], dtype=float)
    stats = intransitivity(m)
    assert stats["epsilon"] == pytest.approx(1.0)
    np.testing.assert_allclose(stats["ratings"], 0, atol=1e-12)


def test_three_player_cycle_and_residuals():
    m = ladder([0, 194.4, 273.0])
    m[1, 2] += 9.0
    m[2, 1] -= 9.0
    stats = intransitivity(m)
    (a, b, c, cycle), = stats["cycles"]
    assert (a, b, c) == (0, 1, 2) and cycle == pytest.approx(9.0)
    res = np.abs(np.array(stats["residual"]))[np.triu_indices(3, 1)]
    np.testing.assert_allclose(res, 3.0)
    assert intransitivity(5 * m)["epsilon"] == pytest.approx(stats["epsilon"])
    text = format_intransitivity(["random", "if", "greed"], stats)
    assert "epsilon" in text and "random -> if -> greed" in text


def test_bad_input():
    with pytest.raises(ValueError, match="antisymmetric"):
        intransitivity([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="square"):
        intransitivity([[0, 1, 2]])
