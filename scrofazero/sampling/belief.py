"""Deals of the unseen cards that follow a belief (per-card seat probabilities) exactly.

The target distribution over consistent deals is the product model restricted to the hard
constraints: P(deal) proportional to prod_c w[c, owner(c)] over the deals that give every seat
its hand size, where w[c, s] = 0 for a seat that cannot hold card c (a shown void). A dynamic
programme over the cards with state (cards still owed to seat 0, to seat 1) computes its
normaliser, samples it exactly (forward, card by card, from the backward partition sums) and
gives its marginals (forward-backward). Unlike sequential assignment with importance weights,
nothing needs correcting: every draw is an exact, equally weighted draw from the target.

`calibrate` fits the weights so that the constrained model's marginals equal the belief's own
(iterative proportional fitting): the network's per-card softmax knows nothing of the exact hand
sizes, the product model does, so the fitted model is the deal distribution closest to the belief
that respects them. Late in a hand the fitting over-sharpens: with few cards unseen the exact
sizes already carry most of what is known, and forcing the network's marginals onto them makes a
confident wrong guess certain (held-out log-loss above the uniform prior at tricks 12-13, where
the plain product model is below it). `fitted_weights` can therefore fit only while more than
`calibrate_above` cards are unseen; the player does not by default, because doing so from trick
9 on played worse although it scores the cards better. With all weights 1 the model is the
exact uniform distribution over consistent deals, which sampling/uniform.py draws; the tests check
both against brute-force enumeration.

`sample_belief` is what the player's `sampling.method=belief` draws (sampling/stratified.py
draw): stratified on important cards, each stratum weighted by its probability under the belief
instead of by counting, or plain draws (no important cards).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable

import numba
import numpy as np
import numpy.typing as npt

from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.sampling.uniform import assignment_owners, view_constraints

MIN_WEIGHT = 1e-6  # floor of an allowed cell, so a confident belief never rules a deal out


def _check(weights: npt.ArrayLike, sizes: Iterable[int]) -> tuple[np.ndarray, tuple[int, ...]]:
    w = np.asarray(weights, dtype=np.float64)
    sizes = tuple(int(s) for s in sizes)
    if w.ndim != 2 or w.shape[1] != 3:
        raise ValueError(f"weights must have shape [U, 3], got {w.shape}")
    if len(sizes) != 3 or min(sizes) < 0 or sum(sizes) != w.shape[0]:
        raise ValueError(f"sizes {sizes} must be three hand sizes summing to {w.shape[0]} cards")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative")
    return w, sizes


@numba.njit(cache=True)
def _backward_kernel(w: np.ndarray, s0: int, s1: int
                     ) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled
    u = w.shape[0]
    z = np.zeros((u + 1, s0 + 1, s1 + 1))
    log_scale = np.zeros(u + 1)
    z[u, 0, 0] = 1.0
    for i in range(u - 1, -1, -1):
        left = u - i
        peak = 0.0
        for a in range(s0 + 1):
            for b in range(s1 + 1):
                c = left - a - b  # owed to seat 2
                if c < 0:
                    continue
                v = 0.0
                if c >= 1:
                    v += w[i, 2] * z[i + 1, a, b]
                if a >= 1:
                    v += w[i, 0] * z[i + 1, a - 1, b]
                if b >= 1:
                    v += w[i, 1] * z[i + 1, a, b - 1]
                z[i, a, b] = v
                if v > peak:
                    peak = v
        scale = peak if peak > 0 else 1.0
        for a in range(s0 + 1):
            for b in range(s1 + 1):
                z[i, a, b] /= scale
        log_scale[i] = log_scale[i + 1] + np.log(scale)
    return z, log_scale


@numba.njit(cache=True)
def _marginals_kernel(w: np.ndarray, z: np.ndarray, s0: int,
                      s1: int) -> np.ndarray:  # pragma: no cover - compiled
    u = w.shape[0]
    out = np.zeros((u, 3))
    f = np.zeros((s0 + 1, s1 + 1))
    g = np.zeros((s0 + 1, s1 + 1))
    f[s0, s1] = 1.0
    for i in range(u):
        left = u - i
        t0 = t1 = t2 = 0.0
        g[:, :] = 0.0
        for a in range(s0 + 1):
            for b in range(s1 + 1):
                fv = f[a, b]
                if fv == 0.0:
                    continue
                if left - a - b >= 1:  # card i to seat 2: (a, b) stays
                    x = fv * w[i, 2]
                    g[a, b] += x
                    t2 += x * z[i + 1, a, b]
                if a >= 1:  # to seat 0: (a, b) -> (a - 1, b)
                    x = fv * w[i, 0]
                    g[a - 1, b] += x
                    t0 += x * z[i + 1, a - 1, b]
                if b >= 1:  # to seat 1: (a, b) -> (a, b - 1)
                    x = fv * w[i, 1]
                    g[a, b - 1] += x
                    t1 += x * z[i + 1, a, b - 1]
        total = t0 + t1 + t2
        out[i, 0], out[i, 1], out[i, 2] = t0 / total, t1 / total, t2 / total
        peak = g.max()
        f[:, :] = g / (peak if peak > 0 else 1.0)
    return out


@numba.njit(cache=True)
def _sample_kernel(w: np.ndarray, z: np.ndarray, s0: int, s1: int,
                   uniforms: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    num, u = uniforms.shape
    out = np.empty((num, u), dtype=np.int8)
    for r in range(num):
        a, b = s0, s1
        for i in range(u):
            p0 = w[i, 0] * z[i + 1, a - 1, b] if a > 0 else 0.0
            p1 = w[i, 1] * z[i + 1, a, b - 1] if b > 0 else 0.0
            p2 = w[i, 2] * z[i + 1, a, b] if (u - i) - a - b >= 1 else 0.0
            x = uniforms[r, i] * (p0 + p1 + p2)
            if x < p0:
                out[r, i] = 0
                a -= 1
            elif x < p0 + p1:
                out[r, i] = 1
                b -= 1
            else:
                out[r, i] = 2
    return out


def _backward(w: np.ndarray, sizes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Backward partition sums: z[i, a, b] (scaled) = total weight of dealing cards i..U-1 so
    that seat 0 gets a, seat 1 gets b and seat 2 the rest; log_scale[i] undoes the scaling
    (log of the true sum = log z + log_scale[i])."""
    return _backward_kernel(np.ascontiguousarray(w), sizes[0], sizes[1])


def log_partition(weights: npt.ArrayLike, sizes: Iterable[int]) -> float:
    """log of the sum over consistent deals of prod_c weights[c, owner]: -inf when none.

    Args:
        weights: [U, 3] non-negative weight of each unseen card at each other seat.
        sizes: (3,) hand sizes of the other seats, summing to U.
    """
    w, sizes = _check(weights, sizes)
    z, log_scale = _backward(w, sizes)
    top = z[0, sizes[0], sizes[1]]
    return float(np.log(top) + log_scale[0]) if top > 0 else float("-inf")


def marginals(weights: npt.ArrayLike, sizes: Iterable[int]) -> np.ndarray:
    """Per-card marginals of the constrained product model (forward-backward); ValueError when
    no deal is consistent.

    Args:
        weights: [U, 3] non-negative weight of each unseen card at each other seat.
        sizes: (3,) hand sizes of the other seats, summing to U.

    Returns:
        [U, 3] probability that each card goes to each seat.
    """
    w, sizes = _check(weights, sizes)
    z, _ = _backward(w, sizes)
    if z[0, sizes[0], sizes[1]] <= 0:
        raise ValueError("no consistent deal: the weights and hand sizes allow none")
    return _marginals_kernel(np.ascontiguousarray(w), z, sizes[0], sizes[1])


def sample(weights: npt.ArrayLike, sizes: Iterable[int], num: int,
           rng: np.random.Generator) -> np.ndarray:
    """Exact draws from the constrained product model; ValueError when no deal is consistent.

    Args:
        weights: [U, 3] non-negative weight of each unseen card at each other seat.
        sizes: (3,) hand sizes of the other seats, summing to U.
        num: how many deals to draw.
        rng: the random source of the draws.

    Returns:
        [num, U] int8 seat of each card, 0..2 (an index into the other seats).
    """
    w, sizes = _check(weights, sizes)
    z, _ = _backward(w, sizes)
    if z[0, sizes[0], sizes[1]] <= 0:
        raise ValueError("no consistent deal: the weights and hand sizes allow none")
    return _sample_kernel(np.ascontiguousarray(w), z, sizes[0], sizes[1],
                          rng.random((int(num), w.shape[0])))


def calibrate(target: npt.ArrayLike, sizes: Iterable[int], iterations: int = 20,
              tol: float = 1e-4) -> np.ndarray:
    """Weights whose constrained model has (about) the marginals `target` (zero cells stay
    zero), by iterative proportional fitting from w = target.

    Args:
        target: [U, 3] wanted probability of each unseen card at each other seat.
        sizes: (3,) hand sizes of the other seats, summing to U.
        iterations: most fitting passes.
        tol: stop once no marginal differs from its target by this much or more.

    Returns:
        [U, 3] weights, zero where `target` is zero (a row's overall scale does not matter).
    """
    w, sizes = _check(target, sizes)
    allowed = w > 0
    target = np.where(allowed, np.maximum(w, MIN_WEIGHT), 0.0)
    target /= np.maximum(target.sum(axis=1, keepdims=True), 1e-300)
    w = target.copy()
    for _ in range(iterations):
        m = marginals(w, sizes)
        if np.max(np.abs(m - target)) < tol:
            break
        # A cell the constraints make impossible has marginal 0: leave it be rather than blow
        # it up; a step is bounded so that the weights stay finite and positive.
        ratio = np.where(m > 1e-12, target / np.maximum(m, 1e-12), 1.0)
        new = np.where(allowed, w * np.clip(ratio, 1e-3, 1e3), 0.0)
        new /= np.maximum(new.max(axis=1, keepdims=True), 1e-300)  # per card: scale is free
        new = np.where(allowed, np.maximum(new, 1e-12), 0.0)
        if not np.all(np.isfinite(new)):
            break
        w = new
    return w


def fitted_weights(weights: np.ndarray, sizes: Iterable[int], iterations: int = 20,
                   above: int = 0) -> np.ndarray:
    """The weights the sampler draws from: `calibrate`d when `iterations` > 0 and more than
    `above` cards are unseen, else `weights` as they are (the constrained product).

    Args:
        weights: [U, 3] the belief's cells (view_weights).
        sizes: (3,) hand sizes of the other seats, summing to U.
        iterations: fitting passes toward the belief's marginals (0: never fit).
        above: fit only when U > above (0: whenever a card is unseen).
    """
    if iterations > 0 and len(weights) > above:
        return calibrate(weights, sizes, iterations)
    return weights


def view_weights(view: InfoView, probabilities: npt.ArrayLike
                 ) -> tuple[np.ndarray, tuple[int, ...], tuple[int, ...], np.ndarray]:
    """The sampling problem of `view` with a belief.

    Args:
        view: the deciding seat's information.
        probabilities: [52, 4] belief over absolute seats (BeliefModel.probabilities).

    Returns:
        (cards [U], sizes, others, weights [U, 3]), as view_constraints's but with weights: the
        belief's cells for the other seats, zero where a seat cannot hold a card (a shown void,
        or no cards left), floored at MIN_WEIGHT elsewhere so that a confident belief never
        excludes a consistent deal.
    """
    probabilities = np.asarray(probabilities, dtype=np.float64)
    if probabilities.shape != (52, 4) or not np.all(np.isfinite(probabilities)):
        raise ValueError(f"a belief must be a finite [52, 4] array, got {probabilities.shape}")
    cards, sizes, voids, others = view_constraints(view)
    suit = cards // 13
    allowed = np.stack([((voids[j] >> suit) & 1) == 0 for j in range(3)], axis=1)  # [U, 3]
    allowed &= np.array(sizes)[None, :] > 0
    columns: list[int] = list(others)
    cells = probabilities[cards][:, columns]  # [U, 3]
    weights = np.where(allowed, np.maximum(cells, MIN_WEIGHT), 0.0)
    return cards, sizes, others, weights


def view_holders(view: InfoView, probabilities: np.ndarray,
                 calibrate_iterations: int = 20, calibrate_above: int = 0) -> np.ndarray:
    """[52, 4] float64: where each card lies as `view`'s seat knows it, per absolute seat.

    The seat's own hand is 1 at its seat, a played card 0 everywhere, and each unseen card gets
    its marginals under the constrained product model of the belief (the deals that
    `sample_belief` draws, calibrated toward the belief's own marginals when
    `calibrate_iterations` > 0): the exact hand sizes and voids are respected, so every other
    seat's column sums to its hand size. The input of the network player that reads marginals
    instead of sampled deals (nn/encoding.py encode_holders).

    Args:
        view: the viewing seat's information.
        probabilities: [52, 4] the belief, per card and absolute seat (the belief network's).
        calibrate_iterations: fitting passes toward the belief's marginals (0: its product).
        calibrate_above: fit only while more than this many cards are unseen (fitted_weights).
    """
    cards, sizes, others, weights = view_weights(view, probabilities)
    out = np.zeros((52, 4))
    out[[c for c in range(52) if view.hand >> c & 1], view.seat] = 1.0
    if len(cards):
        weights = fitted_weights(weights, sizes, calibrate_iterations, calibrate_above)
        out[np.ix_(cards, np.asarray(others))] = marginals(weights, sizes)
    return out


def sample_belief(view: InfoView, probabilities: np.ndarray, important: tuple[int, ...],
                  per_stratum: int, rng: np.random.Generator, calibrate_iterations: int = 20,
                  calibrate_above: int = 0
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Deals of `view`'s unseen cards from a belief: `per_stratum` deals in each placement of the
    `important` cards that the belief allows, each stratum weighted by its probability under the
    (calibrated) belief; with no important cards, `per_stratum` equally weighted draws. Never an
    inconsistent deal; ValueError when none is consistent.

    Args:
        view: the deciding seat's information.
        probabilities: [52, 4] belief over absolute seats (BeliefModel.probabilities).
        important: k unseen cards (card ids) to stratify on (sampling/stratified.py
            important_cards); empty for plain draws.
        per_stratum: deals drawn in each stratum, at least 1.
        rng: the random source of the draws.
        calibrate_iterations: fitting passes toward the belief's marginals under the exact hand
            sizes (`calibrate`; 0: the belief's product as it is).
        calibrate_above: fit only while more than this many cards are unseen (fitted_weights).

    Returns:
        (owners [D, 52] int8, weights [D] summing to 1, stratum [D], strata [S, k] absolute
        seat of each important card per stratum, stratum_prob [S]): the fields of a DealSample.
    """
    if per_stratum < 1:
        raise ValueError(f"per_stratum must be >= 1, got {per_stratum}")
    cards, sizes, others, weights = view_weights(view, probabilities)
    weights = fitted_weights(weights, sizes, calibrate_iterations, calibrate_above)
    important = tuple(important)
    where = np.searchsorted(cards, important).astype(np.int64)
    patterns: list[tuple[tuple[int, ...], np.ndarray]] = []
    log_zs: list[float] = []
    for combo in itertools.product(range(3), repeat=len(important)):
        pinned = weights.copy()
        for pos, seat in zip(where, combo):
            keep = pinned[pos, seat]
            pinned[pos] = 0.0
            pinned[pos, seat] = keep
        lz = log_partition(pinned, sizes)
        if np.isfinite(lz):
            patterns.append((combo, pinned))
            log_zs.append(lz)
    if not patterns:
        raise ValueError("no consistent deal: the view's voids and hand sizes allow none")
    log_z = np.array(log_zs)
    stratum_prob = np.exp(log_z - log_z.max())
    stratum_prob /= stratum_prob.sum()
    assign = np.concatenate([sample(pinned, sizes, per_stratum, rng) for _, pinned in patterns])
    stratum = np.repeat(np.arange(len(patterns)), per_stratum)
    weights_out = stratum_prob[stratum] / per_stratum
    seat_of = np.array(others, dtype=np.int8)
    strata = (seat_of[np.array([c for c, _ in patterns], dtype=np.int64)] if important
              else np.zeros((1, 0), np.int8))
    return (assignment_owners(view, cards, others, assign), weights_out / weights_out.sum(),
            stratum, strata, stratum_prob)
