"""Exact sampling of initial Fish deals from one seat's belief (`sample_deals`), for the search
player (fish/players/search.py).

Sampling (`sample_deals`) is exact: independent draws from the posterior the tracker counts,
uniform over the initial deals consistent with the public events (hard evidence only: soft
evidence and AskModel weights are not sampled). evidence.compile_evidence pins the known
cards; every other ("free") card never moved, so it is where it was dealt, and may be with some
seats only (failed asks); a set's constraints (an asker held one of some cards, a wrong call's
"not all as named", a wrong call's public counts) couple only cards of that set, and the seats'
capacities (free cards dealt to each) couple everything. Free cards of unconstrained sets that
any seat may hold form an exchangeable pool. Two exact ways:

- set DP (`SetDP`, fish/belief/set_dp.py), the tracker's count with its backward pass kept: one
  item per constrained set (every assignment of its free cards enumerated, checked, grouped by
  per-seat count vector d) or per lone card with forbidden seats; a forward pass over the dense
  box of leftover capacities, then backward sampling (the leftover the pool fills in proportion
  to F_K(r) * multinomial(P; r), each item's d in proportion to w_d F_{k-1}(r + d), an
  assignment with that d uniformly, the pool as a uniform permutation). Cost: count vectors
  times box states;
- rejection (`_Problem.propose`), for early positions whose box is large but whose free cards are
  mostly in the pool: every constrained card drawn independently, card c at seat a with
  probability proportional to pi_a over c's allowed seats (pi fitted so the expected counts
  match the capacities); since the proposal of a deal is then proportional to
  prod_a pi_a^-r_a (r the leftover capacities), accepting a draw that meets the set constraints
  and r >= 0 with probability Mult(r; P, pi) / max Mult(.; P, pi) and dealing the pool as a
  uniform permutation into r leaves every consistent deal equally likely.

"auto" takes the DP when its cost is at most `dp_cost` (2e7), else rejection while it is on
course (at most `max_tries` proposals), else the DP anyway. The tests check both against
brute-force enumeration (every consistent deal drawn equally often) and replay every sampled
deal through the rules. A last-resort approximate sampler (each free card from the tracker's
marginal, restricted to seats with room, kept if consistent: marginals, not the joint) exists
for a box over 2M states where rejection finds nothing; `stats["approximate"]` counts its uses.
"""

from __future__ import annotations

import numpy as np

from scrofazero.fish.belief.evidence import OUT, compile_evidence
from scrofazero.fish.belief.set_dp import SetDP, log_factorial
from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.games.fish.cards import num_cards, set_cards, set_of


class _Problem:
    """The free cards of one tracker state and their constraints, in arrays for the sampler."""

    def __init__(self, tracker: BeliefTracker):
        n = tracker.num_players
        ev = compile_evidence(n, tracker.observer, tracker.hand, tracker.events, tracker.rules)
        self.num_players, self.ev = n, ev
        self.deck = num_cards(n)
        self.seats = [s for s in range(n) if s != tracker.observer and ev.capacity[s] > 0]
        pos = {s: i for i, s in enumerate(self.seats)}
        A = len(self.seats)
        self.cap = np.array([ev.capacity[s] for s in self.seats], np.int64)  # [A]
        self.base = np.full(self.deck, -1, np.int64)  # known initial holders
        for card, seat in ev.init.items():
            self.base[card] = seat
        free = [c for c in range(self.deck) if c not in ev.init]
        constrained_sets = {k for k, sev in enumerate(ev.sets)
                            if sev.atleast or sev.not_named or sev.exact is not None}
        self.pool = [c for c in free if set_of(c) not in constrained_sets and not ev.forbid.get(c)]
        pool = set(self.pool)
        self.cards = [c for c in free if c not in pool]  # sampled one by one: Q
        col = {c: j for j, c in enumerate(self.cards)}
        allowed = np.ones((len(self.cards), A), bool)  # [Q, A]
        for j, c in enumerate(self.cards):
            for seat in ev.forbid.get(c, ()):
                if seat in pos:
                    allowed[j, pos[seat]] = False
        self.allowed = allowed
        self.impossible = bool(len(self.cards)) and not allowed.any(axis=1).all()
        # set constraints as (columns, seat index) lists
        self.atleast, self.not_named, self.exact = [], [], []
        for k, sev in enumerate(ev.sets):
            for seat, cards in sev.atleast:
                cols = [col[c] for c in cards if c in col]
                if seat not in pos or not cols:
                    self.impossible = True
                    continue
                self.atleast.append((np.array(cols), pos[seat]))
            for named in sev.not_named:
                if any(seat not in pos for seat in named.values()) or \
                        any(c not in col for c in named):
                    continue  # can never be all as named
                self.not_named.append((np.array([col[c] for c in named]),
                                       np.array([pos[s] for s in named.values()])))
            if sev.exact is not None:
                cols = np.array([col[c] for c in set_cards(k) if c in col], np.int64)
                want = np.zeros(A, np.int64)
                for seat, count in enumerate(sev.exact):
                    if count and seat not in pos:
                        self.impossible = True
                    elif count:
                        want[pos[seat]] = count
                self.exact.append((cols, want))
        self.pi = self._fit_pi()
        self.log_pi = np.log(self.pi)
        self.log_max = self._log_mult_max()

    def _fit_pi(self) -> np.ndarray:
        """Seat weights whose proposal expects each seat's capacity (iterative scaling; any
        positive weights keep the sampler exact, good ones make it accept more)."""
        A = len(self.seats)
        pi = np.maximum(self.cap.astype(float), 0.5) / max(self.cap.sum(), 1)
        if not A:
            return pi
        allowed, pool = self.allowed.astype(float), len(self.pool)
        for _ in range(50):
            q = allowed * pi  # [Q, A]
            q /= np.maximum(q.sum(axis=1, keepdims=True), 1e-300)
            expected = q.sum(axis=0) + pool * pi / pi.sum()
            pi = pi * np.maximum(self.cap, 0.5) / np.maximum(expected, 1e-12)
            pi /= pi.sum()
        return pi

    def _log_mult(self, r: np.ndarray) -> np.ndarray:
        """log Mult(r; P, pi) up to the constant log P!: rows of r [..., A]."""
        return (r * self.log_pi).sum(axis=-1) - log_factorial(r).sum(axis=-1)

    def _log_mult_max(self) -> float:
        """max over 0 <= r <= cap, sum r = P of log Mult(r; P, pi) (without log P!): greedy on
        the separable concave terms is exact."""
        r = np.zeros(len(self.seats), np.int64)
        for _ in range(len(self.pool)):
            gain = np.where(r < self.cap, self.log_pi - np.log(r + 1.0), -np.inf)
            r[int(np.argmax(gain))] += 1
        return float(self._log_mult(r)) if len(self.seats) else 0.0

    def propose(self, rng: np.random.Generator, batch: int) -> np.ndarray:
        """[k, deck] accepted initial deals (seat per card) out of `batch` proposals."""
        Q, A = len(self.cards), len(self.seats)
        if Q:
            q = self.allowed * self.pi
            cum = np.cumsum(q / q.sum(axis=1, keepdims=True), axis=1)  # [Q, A]
            u = rng.random((batch, Q))
            x = (u[:, :, None] >= cum[None, :, :-1]).sum(axis=2)  # [B, Q] seat index
            counts = np.zeros((batch, A), np.int64)
            for a in range(A):
                counts[:, a] = (x == a).sum(axis=1)
        else:
            x = np.zeros((batch, 0), np.int64)
            counts = np.zeros((batch, A), np.int64)
        r = self.cap[None, :] - counts  # [B, A]
        ok = (r >= 0).all(axis=1)
        for cols, a in self.atleast:
            ok &= (x[:, cols] == a).any(axis=1)
        for cols, seats in self.not_named:
            ok &= ~(x[:, cols] == seats[None, :]).all(axis=1)
        for cols, want in self.exact:
            for a in range(A):
                ok &= (x[:, cols] == a).sum(axis=1) == want[a]
        if self.pool and ok.any():
            idx = np.flatnonzero(ok)
            keep = rng.random(len(idx)) < np.exp(self._log_mult(r[idx]) - self.log_max)
            ok[idx[~keep]] = False  # type: ignore[index]  # numpy: all(axis=1) may be a scalar
        out = []
        seats = np.array(self.seats, np.int64)
        pool = np.array(self.pool, np.int64)
        for b in np.flatnonzero(ok):
            deal = self.base.copy()
            if Q:
                deal[np.array(self.cards)] = seats[x[b]]
            if len(pool):
                deal[rng.permutation(pool)] = np.repeat(seats, r[b])
            out.append(deal)
        return np.array(out, np.int64).reshape(len(out), self.deck)

    def consistent(self, deal: np.ndarray) -> bool:
        """Whether an initial deal (seat per card) meets every constraint of the evidence."""
        n = self.num_players
        counts = np.bincount(deal[deal >= 0], minlength=n)
        if (deal < 0).any() or (counts != counts[0]).any():
            return False
        pos = {s: i for i, s in enumerate(self.seats)}
        x = np.array([pos.get(int(deal[c]), -1) for c in self.cards], np.int64)
        if (x < 0).any() or not all(self.allowed[j, x[j]] for j in range(len(x))):
            return False
        if any(int(deal[c]) not in pos for c in self.pool):
            return False
        ok = all((x[cols] == a).any() for cols, a in self.atleast)
        ok = ok and not any((x[cols] == seats).all() for cols, seats in self.not_named)
        return ok and all(((x[cols] == a).sum() == want[a]) for cols, want in self.exact
                          for a in range(len(self.seats)))


def sample_deals(tracker: BeliefTracker, k: int, rng: np.random.Generator,
                 max_tries: int = 200_000, batch: int = 4096, dp_cost: float = 2e7,
                 method: str = "auto", stats: dict | None = None) -> np.ndarray:
    """[k, num_cards] initial deals (seat per card) drawn independently from the tracker's
    hard-evidence posterior (module docstring), both ways exact. method="auto": by the set DP
    when its cost (count vectors times states, an upper bound) is at most `dp_cost`, else by
    rejection while it is on course to find k deals within `max_tries` proposals, else by the
    DP after all when its box has at most 2M states; only if all that fails, fewer deals, or
    with none the approximate sampler (stats["approximate"]). "dp" / "rejection": that way
    only (for tests; rejection may then return fewer than k deals). With no constrained card
    the pool alone is dealt (a uniform permutation, exact). stats counts the ways."""
    if method not in ("auto", "dp", "rejection"):
        raise ValueError(f"method must be auto, dp or rejection, got {method!r}")
    problem = _Problem(tracker)
    if problem.impossible:
        raise ValueError("the tracker's evidence admits no deal")
    stats = stats if stats is not None else {}
    dp = SetDP(problem)
    if problem.cards and (method == "dp" or (method == "auto" and dp.cost <= dp_cost)):
        return _dp_deals(dp, k, rng, stats, "dp")
    found, tries, got = [], 0, 0
    while got < k and tries < max_tries:
        size = batch if problem.cards else k
        found.append(problem.propose(rng, size))
        tries += size
        got += len(found[-1])
        if method == "auto" and got < k and (got == 0 or tries * k / got > max_tries) \
                and dp.box <= 2_000_000:
            break  # off course: the DP instead
    stats["proposals"] = stats.get("proposals", 0) + tries
    deals = np.concatenate(found) if found else np.zeros((0, problem.deck), np.int64)
    if len(deals) >= k or method == "rejection":
        stats["rejection"] = stats.get("rejection", 0) + 1
        return deals[:k]
    if dp.box <= 2_000_000:
        return _dp_deals(dp, k, rng, stats, "dp_after_rejection")
    if len(deals):
        stats["short"] = stats.get("short", 0) + 1
        return deals
    stats["approximate"] = stats.get("approximate", 0) + 1
    return _approximate_deals(tracker, problem, k, rng)


def _dp_deals(dp: SetDP, k: int, rng, stats: dict, how: str) -> np.ndarray:
    if not dp.run():
        raise ValueError("the tracker's evidence admits no deal")
    stats[how] = stats.get(how, 0) + 1
    return np.array([dp.draw(rng) for _ in range(k)], np.int64)


def _approximate_deals(tracker, problem: _Problem, k: int, rng, tries: int = 20_000):
    """Fallback: free cards one at a time in random order, each from the tracker's marginal of
    its initial holder restricted to seats with room left; kept if consistent (marginals, not the
    joint: approximate). The last draw is kept even if inconsistent only when nothing else was
    found, so a decision always gets a deal."""
    probs = tracker.initial_probabilities()
    free = problem.cards + problem.pool
    out, last = [], None
    for _ in range(tries):
        deal = problem.base.copy()
        room = {s: int(c) for s, c in zip(problem.seats, problem.cap)}
        for c in rng.permutation(free):
            w = np.array([probs[s, c] if room[s] > 0 else 0.0 for s in problem.seats])
            if w.sum() <= 0:
                w = np.array([1.0 if room[s] > 0 else 0.0 for s in problem.seats])
            seat = problem.seats[int(rng.choice(len(w), p=w / w.sum()))]
            deal[c] = seat
            room[seat] -= 1
        last = deal
        if problem.consistent(deal):
            out.append(deal)
            if len(out) >= k:
                break
    return np.array(out if out else [last], np.int64)


def current_holders(tracker: BeliefTracker, deal: np.ndarray) -> np.ndarray:
    """[num_cards] where each card is now (-1: its set was called) if the initial deal is
    `deal`: known cards where the public record put them, free cards where they were dealt."""
    ev = compile_evidence(tracker.num_players, tracker.observer, tracker.hand, tracker.events,
                          tracker.rules)
    return current_from_evidence(ev, deal)


def current_from_evidence(ev, deal: np.ndarray) -> np.ndarray:
    now = np.array(deal, np.int64)
    for card, seat in ev.loc.items():
        now[card] = -1 if seat == OUT else seat
    for k in ev.called:
        now[list(set_cards(k))] = -1
    return now
