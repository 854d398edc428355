"""Fish search player: determinized rollouts over the exact belief (issue 16, item 4).

`SearchPlayer` ("search" in fish/roster.py) is the logic player (fish/players.py, subclassed)
with another way of choosing its ask:

- calls are the logic player's: a set certainly with its team is called at once (at any time
  when the rules allow), and when it must call, or only certain misses are left while its team
  holds a whole set, the likeliest allocation;
- a certain hit is taken (the logic player's choice among certain hits);
- otherwise the candidates are the `candidates` asks likeliest to hit, in the logic player's
  order (likelier hit, a set already shown, the set its team holds most of, lowest seat and
  card), so candidate 0 is what `logic` would ask. It samples `samples` deals from its belief
  and plays every candidate out in every deal (the same deals and rollout random numbers for all
  candidates) for `depth` moves with a cheap default policy for every seat. A rollout's value
  for its team: sets won minus sets lost in the rollout plus, for each set still uncalled at the
  horizon, `leaf_weight` * (its team's cards of it - the other team's) / 6. A candidate's value
  is p * (mean over the deals where it hits) + (1 - p) * (mean where it misses), p its exact hit
  probability (`stratify`; the plain mean when one side has no deal). It asks the best candidate
  if that beats candidate 0 by more than `switch_z` standard errors of the paired per-deal
  differences, else candidate 0 (16 to 24 deals cannot tell small differences apart, and
  switching on noise loses hits);
- an ask it already made and missed is never repeated while the card has not moved (its hit
  probability is 0, so it is never a candidate; when every ask is a certain miss and the team
  holds no set, the candidates are one fresh ask per target).

Sampling (`sample_deals`) is exact: independent draws from the posterior the tracker counts,
uniform over the initial deals consistent with the public events (hard evidence only: soft
evidence and AskModel weights are not sampled). belief_evidence.compile_evidence pins the known
cards; every other ("free") card never moved, so it is where it was dealt, and may be with some
seats only (failed asks); a set's constraints (an asker held one of some cards, a wrong call's
"not all as named", a wrong call's public counts) couple only cards of that set, and the seats'
capacities (free cards dealt to each) couple everything. Free cards of unconstrained sets that
any seat may hold form an exchangeable pool. Two exact ways:

- set DP (`_SetDP`), the tracker's count with its backward pass kept: one item per constrained
  set (every assignment of its free cards enumerated, checked, grouped by per-seat count vector
  d) or per lone card with forbidden seats; a forward pass over the dense box of leftover
  capacities, then backward sampling (the leftover the pool fills in proportion to F_K(r)
  * multinomial(P; r), each item's d in proportion to w_d F_{k-1}(r + d), an assignment with
  that d uniformly, the pool as a uniform permutation). Cost: count vectors times box states;
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

Rollouts (`_World`): the rules of fish/rules.py (turn passing, forced calls) on bitmask hands of
the sampled deal; a rollout seat calls only on its own turn, which is legal under both call
rules. Every seat plays the same default policy from its own hand and the public record: where
transferred cards are, which seats are known to lack a card (failed asks), which seats asked in
which set (so hold a card of it): call a set its hand and its team's public cards cover; take a
card publicly with an opponent; else ask for the card of its sets it lacks whose likeliest
opponent holder is likeliest, by counting each seat's unaccounted cards, times (1 + `boost`) for
seats that asked in that set, over the seats not known to lack it (ties at random); when it must
call, the set it knows most of, the rest guessed with the teammate with most unaccounted cards.
Determinization treats the sampled deal as the truth; the policy uses only what that seat would
know in it.

All randomness comes from the generator seeded at construction (`seed`), so matches are
reproducible.
"""

from __future__ import annotations

import math
import random
import time

import numpy as np

from scrofazero.fish.belief import BeliefTracker
from scrofazero.fish.belief_evidence import OUT, compile_evidence
from scrofazero.fish.players import LogicPlayer
from scrofazero.games.fish.cards import (
    num_cards,
    set_cards,
    set_of,
    teammates,
)
from scrofazero.games.fish.events import Ask, Call
from scrofazero.games.fish.rules import AskMove, FishView, Move

_LOG_FACTORIALS = np.array([math.lgamma(k + 1.0) for k in range(65)])


def _log_factorial(r: np.ndarray) -> np.ndarray:
    """log(r!) of non-negative integer counts (at most 64: the deck's size)."""
    return _LOG_FACTORIALS[np.asarray(r, dtype=np.int64)]

SET_MASKS = tuple(sum(1 << c for c in set_cards(k)) for k in range(9))


# ---------------------------------------------------------------- exact sampling of deals


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
        return (r * self.log_pi).sum(axis=-1) - _log_factorial(r).sum(axis=-1)

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
            ok[idx[~keep]] = False
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


_TABLES: dict = {}  # set tables by their inputs (shared: a table depends only on its key)
_TABLES_LIMIT = 256


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


class _SetDP:
    """Exact sampling by a dynamic programme over the sets (the tracker's count, rebuilt here
    with its backward pass kept). Items: the constrained free cards of a set with constraints,
    every assignment of them to allowed seats enumerated, checked against the set's constraints
    and grouped by count vector d (weight w_d = how many); a lone card with forbidden seats,
    one row per allowed seat. Forward over the dense box of leftover capacities r:
    F_k(r - d) += w_d F_{k-1}(r); the pool fills the last r in multinomial(P; r) ways.
    Backward: the last r in proportion to F_K(r) Mult(P; r), each item's d in proportion to
    w_d F_{k-1}(r + d), then one of the item's assignments with that d uniformly, then the pool
    as a uniform permutation into r: an exact draw."""

    def __init__(self, problem: _Problem):
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
        """Builds the items and runs the forward pass; False if no deal is consistent."""
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
            self.forward.append(F)
        r = np.indices(self.shape).reshape(len(self.shape), -1).T  # [box, A]
        log_mult = -_log_factorial(r).sum(axis=1)
        fill = r.sum(axis=1) == len(problem.pool)
        last = F.reshape(-1) * np.where(fill, np.exp(log_mult - log_mult[fill].max()), 0.0)
        if not last.sum() > 0:
            return False
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
    dp = _SetDP(problem)
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


def _dp_deals(dp: _SetDP, k: int, rng, stats: dict, how: str) -> np.ndarray:
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
    return _current(ev, deal)


def _current(ev, deal: np.ndarray) -> np.ndarray:
    now = np.array(deal, np.int64)
    for card, seat in ev.loc.items():
        now[card] = -1 if seat == OUT else seat
    for k in ev.called:
        now[list(set_cards(k))] = -1
    return now


# ---------------------------------------------------------------- rollouts


class _Public:
    """What the whole table knows from the public record: where transferred cards are (until
    they move or their set is called) and which seats are known to lack which card."""

    def __init__(self, num_players: int, events, held_allowed: bool):
        deck = num_cards(num_players)
        self.loc = [-1] * deck
        self.lacks = [0] * deck
        self.shown = [0] * num_players  # bit k: the seat asked in set k (held a card of it)
        for e in events:
            if isinstance(e, Ask):
                self.shown[e.asker] |= 1 << (e.card // 6)
                if e.success:
                    self.loc[e.card], self.lacks[e.card] = e.asker, 0
                else:
                    self.lacks[e.card] |= 1 << e.target
                    if not held_allowed:
                        self.lacks[e.card] |= 1 << e.asker
            elif isinstance(e, Call):
                for c in set_cards(e.set_id):
                    self.loc[c], self.lacks[c] = -1, 0
                self.shown = [m & ~(1 << e.set_id) for m in self.shown]


class _World:
    """A determinized game: the rules of fish/rules.py on bitmask hands, played by the default
    policy (module docstring). Scores count only sets called inside the rollout."""

    __slots__ = (
        "boost",
        "count",
        "current",
        "hand",
        "held_allowed",
        "holder",
        "lacks",
        "n",
        "pub",
        "pub_count",
        "pub_team",
        "score",
        "shown",
        "uncalled",
    )

    @classmethod
    def start(cls, num_players, holders, public: _Public, current, uncalled,
              held_allowed, boost: float = 2.0) -> _World:
        w = cls.__new__(cls)
        w.shown, w.boost = list(public.shown), float(boost)
        w.n = num_players
        w.holder = [int(h) for h in holders]
        w.hand = [0] * num_players
        for c, h in enumerate(w.holder):
            if h >= 0:
                w.hand[h] |= 1 << c
        w.count = [m.bit_count() for m in w.hand]
        w.pub = [p if w.holder[c] >= 0 else -1 for c, p in enumerate(public.loc)]
        w.lacks = list(public.lacks)
        w.pub_team = [0, 0]
        w.pub_count = [0] * num_players
        for c, p in enumerate(w.pub):
            if p >= 0:
                w.pub_team[p & 1] |= 1 << c
                w.pub_count[p] += 1
        w.uncalled = list(uncalled)
        w.score = [0, 0]
        w.current = current
        w.held_allowed = held_allowed
        return w

    def copy(self) -> _World:
        w = _World.__new__(_World)
        w.n, w.holder, w.hand, w.count = self.n, self.holder[:], self.hand[:], self.count[:]
        w.pub, w.lacks, w.pub_team = self.pub[:], self.lacks[:], self.pub_team[:]
        w.pub_count, w.uncalled, w.score = self.pub_count[:], self.uncalled[:], self.score[:]
        w.current, w.held_allowed = self.current, self.held_allowed
        w.shown, w.boost = self.shown[:], self.boost
        return w

    @property
    def done(self) -> bool:
        return not self.uncalled

    def value(self, team: int, leaf_weight: float) -> float:
        v = float(self.score[team] - self.score[1 - team])
        if leaf_weight and self.uncalled:
            mine = theirs = 0
            for s in range(self.n):
                if s & 1 == team:
                    mine |= self.hand[s]
                else:
                    theirs |= self.hand[s]
            for k in self.uncalled:
                m = SET_MASKS[k]
                v += leaf_weight * ((mine & m).bit_count() - (theirs & m).bit_count()) / 6.0
        return v

    # -- moves: ("ask", target, card) or ("call", caller, set, seats named for its 6 cards)

    def play(self, move: tuple) -> None:
        if move[0] == "ask":
            self.ask(move[1], move[2])
        else:
            _, caller, k, named = move
            self.call(caller, k, all(self.holder[c] == seat
                                     for c, seat in zip(set_cards(k), named)))

    def ask(self, target: int, card: int) -> None:
        s, bit = self.current, 1 << card
        self.shown[s] |= 1 << (card // 6)
        if self.holder[card] == target:
            self.hand[target] ^= bit
            self.hand[s] |= bit
            self.count[target] -= 1
            self.count[s] += 1
            self.holder[card] = s
            old = self.pub[card]
            if old >= 0:
                self.pub_count[old] -= 1
                self.pub_team[old & 1] &= ~bit
            self.pub[card] = s
            self.pub_count[s] += 1
            self.pub_team[s & 1] |= bit
            self.lacks[card] = 0
        else:
            self.lacks[card] |= (1 << target) | (0 if self.held_allowed else 1 << s)
            self.current = target
        self._pass_turn()

    def call(self, caller: int, k: int, correct: bool) -> None:
        for c in set_cards(k):
            h, bit = self.holder[c], 1 << c
            self.hand[h] &= ~bit
            self.count[h] -= 1
            self.holder[c] = -1
            p = self.pub[c]
            if p >= 0:
                self.pub_count[p] -= 1
                self.pub_team[p & 1] &= ~bit
                self.pub[c] = -1
        self.uncalled.remove(k)
        for seat in range(self.n):
            self.shown[seat] &= ~(1 << k)
        self.score[(caller & 1) if correct else 1 - (caller & 1)] += 1
        self._pass_turn()

    def _pass_turn(self) -> None:
        me, n = self.current, self.n
        if not self.uncalled or self.count[me]:
            return
        for k in list(range(2, n, 2)) + list(range(1, n, 2)):
            if self.count[(me + k) % n]:
                self.current = (me + k) % n
                return

    # -- the default policy

    def step(self, rng: random.Random) -> None:
        self.play(self.policy(rng))

    def policy(self, rng: random.Random) -> tuple:
        """The move of the player to move (module docstring): legal under either call rule
        (it only calls on its own turn)."""
        s = self.current
        team = s & 1
        hand = self.hand[s]
        known = hand | self.pub_team[team]
        for k in self.uncalled:  # a set it can place for certain
            m = SET_MASKS[k]
            if known & m == m:
                return ("call", s, k, tuple(self.holder[c] for c in set_cards(k)))
        opponents = [t for t in range(1 - team, self.n, 2) if self.count[t]]
        wanted = 0
        for k in self.uncalled:
            m = SET_MASKS[k]
            if hand & m:
                wanted |= m & ~hand
        if not opponents or not wanted:
            return self._forced_call()
        slots = [self.count[u] - self.pub_count[u] for u in range(self.n)]
        others = [u for u in range(self.n) if u != s and slots[u] > 0]
        boost, shown = self.boost, self.shown
        best, picks = -1.0, []
        w = wanted
        while w:
            low = w & -w
            c = low.bit_length() - 1
            w ^= low
            p = self.pub[c]
            if p >= 0:
                if p & 1 != team:
                    return ("ask", p, c)  # a card publicly with an opponent
                continue  # publicly with a teammate
            lacks, kbit = self.lacks[c], 1 << (c // 6)
            denom, top, top_t = 0.0, 0.0, -1
            for u in others:
                if lacks >> u & 1:
                    continue
                weight = slots[u] * (1.0 + boost) if shown[u] & kbit else float(slots[u])
                denom += weight
                if u & 1 != team and weight > top:
                    top, top_t = weight, u
            if top_t < 0:
                continue
            score = top / denom
            if score > best + 1e-12:
                best, picks = score, [(top_t, c)]
            elif score > best - 1e-12:
                picks.append((top_t, c))
        if not picks:  # only certain misses by counting: any legal ask
            cards = []
            w = wanted
            while w:
                low = w & -w
                cards.append(low.bit_length() - 1)
                w ^= low
            picks = [(t, c) for t in opponents for c in cards]
        t, c = picks[rng.randrange(len(picks))] if len(picks) > 1 else picks[0]
        return ("ask", t, c)

    def _forced_call(self) -> tuple:
        """The set it knows most of: the cards it knows where they are, the rest guessed with
        the teammate (itself included) holding the most unaccounted cards."""
        s = self.current
        team = s & 1
        known = self.hand[s] | self.pub_team[team]
        k = max(self.uncalled, key=lambda k: (known & SET_MASKS[k]).bit_count())
        mates = [u for u in range(team, self.n, 2) if self.count[u]] or [s]
        guess = max(mates, key=lambda u: self.count[u] - self.pub_count[u])
        return ("call", s, k, tuple(self.holder[c] if known >> c & 1 else guess
                                    for c in set_cards(k)))


# ---------------------------------------------------------------- the player


class SearchPlayer(LogicPlayer):
    """The logic player's calls and certain hits, and determinized rollouts over the exact
    belief for every other ask (module docstring). samples: deals sampled per decision;
    candidates: asks evaluated (the likeliest hits); depth: rollout moves after the candidate
    (0: to the end of the game); leaf_weight: weight of the card balance of sets still
    uncalled at the horizon; max_tries: proposals of the exact sampler per decision;
    stratify: weigh the hit and miss deals by the exact hit probability; boost: the rollout
    policy's weight on seats that asked in a set; switch_z: standard errors by which another
    candidate must beat the logic player's ask. `stats` counts decisions, searches, switches
    away from the logic player's ask, the sampling ways, and seconds spent in act."""

    def __init__(self, seed: int = 0, samples: int = 24, candidates: int = 4, depth: int = 10,
                 leaf_weight: float = 1.0, max_tries: int = 200_000, stratify: bool = True,
                 boost: float = 2.0, switch_z: float = 2.0, **kwargs):
        super().__init__(seed=seed, **kwargs)
        if samples < 1 or candidates < 1 or depth < 0 or max_tries < 1:
            raise ValueError(f"search settings must be positive (depth >= 0), got samples="
                             f"{samples}, candidates={candidates}, depth={depth}, "
                             f"max_tries={max_tries}")
        self.rng = np.random.default_rng(seed)
        self.samples, self.candidates, self.depth = int(samples), int(candidates), int(depth)
        self.leaf_weight, self.max_tries = float(leaf_weight), int(max_tries)
        self.stratify, self.boost = bool(stratify), float(boost)
        self.switch_z = float(switch_z)
        self.stats = {"decisions": 0, "searches": 0, "seconds": 0.0}

    def reset(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
              ask_needs_other: bool = True) -> None:
        super().reset(num_players, seat, hand, ask_held_allowed=ask_held_allowed,
                      ask_needs_other=ask_needs_other)
        self.ask_held_allowed = bool(ask_held_allowed)
        self.failed: dict[tuple[int, int], int] = {}  # (target, card) -> index of the event
        self.moved_at: dict[int, int] = {}  # card -> index of its last transfer

    def observe(self, event) -> None:
        super().observe(event)
        index = len(self.tracker.events) - 1
        if isinstance(event, Ask):
            if event.success:
                self.moved_at[event.card] = index
            elif event.asker == self.seat:
                self.failed[(event.target, event.card)] = index

    def _repeats(self, target: int, card: int) -> bool:
        """Whether asking `target` for `card` repeats this seat's failed ask with nothing
        changed since (the card has not moved)."""
        at = self.failed.get((target, card))
        return at is not None and self.moved_at.get(card, -1) < at

    def act(self, view: FishView) -> Move:
        started = time.perf_counter()
        self.stats["decisions"] += 1
        try:
            return self._act(view)
        finally:
            self.stats["seconds"] += time.perf_counter() - started

    def _act(self, view: FishView) -> Move:
        probs = self.tracker.probabilities()  # [P, C]
        call = self._call_first(view, probs)
        if call is not None:
            return call
        asks = list(view.legal_asks)
        hits = np.array([probs[t, c] for t, c in asks])
        if hits.max() >= 1.0 - self.tie:
            return self._logic_ask(view, probs)  # a certain hit, as the logic player picks it
        if hits.max() <= self.tie:
            if self._team_holds_a_set(view, probs):
                return self._likeliest_call(view, probs)
            fresh = [a for a in asks if not self._repeats(*a)] or asks
            per_target: dict[int, tuple[int, int]] = {}
            for a in sorted(fresh, key=lambda a: self._preference(a, probs, view)):
                per_target.setdefault(a[0], a)
            candidates = list(per_target.values())[:self.candidates]
        else:
            live = [a for a, h in zip(asks, hits) if h > self.tie]
            candidates = sorted(live, key=lambda a: self._preference(a, probs, view))
            candidates = candidates[:self.candidates]
        if len(candidates) == 1:
            return AskMove(*candidates[0])
        return AskMove(*self._search(view, candidates))

    def _preference(self, ask, probs, view) -> tuple:
        """The logic player's order: likelier hit, then a set already shown (when hiding), then
        the set its team holds most of, then the lowest (target, card)."""
        target, card = ask
        revealing = self.hide and not any(
            c in self.public_holdings and set_of(c) == set_of(card) for c in view.hand)
        team = list(teammates(self.seat, self.num_players))
        team_mass = probs[team][:, list(set_cards(set_of(card)))].sum()
        return (-round(probs[target, card] / self.tie), revealing, -team_mass, target, card)

    def _search(self, view: FishView, candidates: list) -> tuple[int, int]:
        self.stats["searches"] += 1
        deals = sample_deals(self.tracker, self.samples, self.rng, max_tries=self.max_tries,
                             stats=self.stats)
        ev = compile_evidence(self.num_players, self.seat, self.tracker.hand,
                              self.tracker.events, self.tracker.rules)
        public = _Public(self.num_players, self.tracker.events, self.ask_held_allowed)
        team = self.seat & 1
        probs = self.tracker.probabilities()
        values = np.zeros((len(deals), len(candidates)))  # [K, N]
        hit = np.zeros((len(deals), len(candidates)), bool)
        for i, deal in enumerate(deals):
            holders = _current(ev, deal)
            root = _World.start(self.num_players, holders, public, self.seat,
                                view.uncalled_sets, self.ask_held_allowed, self.boost)
            seed = int(self.rng.integers(2 ** 62))
            for j, (target, card) in enumerate(candidates):
                world = root.copy()
                rng = random.Random(seed)  # common random numbers across candidates
                hit[i, j] = holders[card] == target
                world.ask(target, card)
                moves = 0
                while not world.done and (self.depth == 0 or moves < self.depth):
                    world.step(rng)
                    moves += 1
                values[i, j] = world.value(team, self.leaf_weight)
        means = np.array([self._estimate(values[:, j], hit[:, j], probs[t, c])
                          for j, (t, c) in enumerate(candidates)])
        # the logic player's ask (candidate 0) unless another is better by more than switch_z
        # standard errors of the paired per-deal differences
        gain = means - means[0]
        if len(deals) > 1:
            se = (values - values[:, :1]).std(axis=0, ddof=1) / math.sqrt(len(deals))
        else:
            se = np.zeros(len(candidates))
        clear = (gain > 1e-9) & (gain > self.switch_z * se)
        best = int(np.argmax(np.where(clear, gain, -np.inf))) if clear.any() else 0
        self.stats["switches"] = self.stats.get("switches", 0) + int(best != 0)
        return candidates[best]

    def _estimate(self, values: np.ndarray, hit: np.ndarray, p: float) -> float:
        """Mean value of an ask: with `stratify`, p * (mean over the deals where it hits) +
        (1 - p) * (mean where it misses), p the exact hit probability (the plain mean when one
        side has no deal)."""
        if self.stratify and hit.any() and (~hit).any():
            return p * values[hit].mean() + (1 - p) * values[~hit].mean()
        return float(values.mean())
