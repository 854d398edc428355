"""Fish search player: determinized rollouts over the exact belief.

`SearchPlayer` ("search" in fish/players/roster.py) is the logic player (fish/players/logic.py)
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

Deals come from fish/belief/sampling.py (exact: uniform over the initial deals consistent with
the public events, hard evidence only); rollouts from fish/players/rollout.py. All randomness
comes from the generator seeded at construction (`seed`), so matches are reproducible.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass

import numpy as np

from scrofazero.fish.belief.evidence import compile_evidence
from scrofazero.fish.belief.sampling import current_from_evidence, sample_deals
from scrofazero.fish.players.logic import LogicPlayer
from scrofazero.fish.players.rollout import PublicRecord, World
from scrofazero.games.fish.cards import set_cards, set_of, teammates
from scrofazero.games.fish.events import Ask
from scrofazero.games.fish.rules import AskMove, CallMove, FishView, Move
from scrofazero.settings import Count, Finite, NonNegative, NonNegativeInt


@dataclass
class SearchSettings:
    """The search player's settings (`game.player.search`; SearchPlayer's docstring)."""

    samples: Count = 24  # deals sampled per decision
    candidates: Count = 4  # asks evaluated (the likeliest hits)
    depth: NonNegativeInt = 10  # rollout moves after the candidate (0: to the end of the game)
    leaf_weight: Finite = 1.0  # weight of the card balance of sets uncalled at the horizon
    max_tries: Count = 200_000  # proposals of the exact sampler per decision
    stratify: bool = True  # weigh the hit and miss deals by the exact hit probability
    boost: NonNegative = 2.0  # the rollout policy's weight on seats that asked in a set
    switch_z: Finite = 2.0  # standard errors by which another candidate must beat logic's ask


class SearchPlayer:
    """The logic player's calls and certain hits (a LogicPlayer it holds, `logic`), and
    determinized rollouts over the exact belief for every other ask (module docstring).
    samples: deals sampled per decision; candidates: asks evaluated (the likeliest hits); depth:
    rollout moves after the candidate (0: to the end of the game); leaf_weight: weight of the
    card balance of sets still uncalled at the horizon; max_tries: proposals of the exact
    sampler per decision; stratify: weigh the hit and miss deals by the exact hit probability;
    boost: the rollout policy's weight on seats that asked in a set; switch_z: standard errors
    by which another candidate must beat the logic player's ask; other keyword arguments go to
    the logic player. `stats` counts decisions, searches, switches away from the logic player's
    ask, the sampling ways, and seconds spent in act."""

    def __init__(self, seed: int = 0, samples: int = 24, candidates: int = 4, depth: int = 10,
                 leaf_weight: float = 1.0, max_tries: int = 200_000, stratify: bool = True,
                 boost: float = 2.0, switch_z: float = 2.0, **logic):
        self.logic = LogicPlayer(seed=seed, **logic)
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

    @property
    def tracker(self):
        """The exact belief of this seat (the logic player's tracker)."""
        return self.logic.tracker

    def belief(self) -> np.ndarray:
        return self.logic.belief()

    def reset(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
              ask_needs_other: bool = True) -> None:
        self.logic.reset(num_players, seat, hand, ask_held_allowed=ask_held_allowed,
                         ask_needs_other=ask_needs_other)
        self.seat, self.num_players = seat, num_players
        self.ask_held_allowed = bool(ask_held_allowed)
        self.failed: dict[tuple[int, int], int] = {}  # (target, card) -> index of the event
        self.moved_at: dict[int, int] = {}  # card -> index of its last transfer

    def observe(self, event) -> None:
        self.logic.observe(event)
        index = len(self.tracker.events) - 1
        if isinstance(event, Ask):
            if event.success:
                self.moved_at[event.card] = index
            elif event.asker == self.seat:
                self.failed[(event.target, event.card)] = index

    def call_now(self, view: FishView) -> CallMove | None:
        return self.logic.call_now(view)

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
        call = self.logic.first_call(view, probs)
        if call is not None:
            return call
        asks = list(view.legal_asks)
        hits = np.array([probs[t, c] for t, c in asks])
        if hits.max() >= 1.0 - self.logic.tie:
            return self.logic.choose_ask(view, probs)  # a certain hit, as the logic player picks it
        if hits.max() <= self.logic.tie:
            if self.logic.team_holds_a_set(view, probs):
                return self.logic.likeliest_call(view, probs)
            fresh = [a for a in asks if not self._repeats(*a)] or asks
            per_target: dict[int, tuple[int, int]] = {}
            for a in sorted(fresh, key=lambda a: self._preference(a, probs, view)):
                per_target.setdefault(a[0], a)
            candidates = list(per_target.values())[:self.candidates]
        else:
            live = [a for a, h in zip(asks, hits) if h > self.logic.tie]
            candidates = sorted(live, key=lambda a: self._preference(a, probs, view))
            candidates = candidates[:self.candidates]
        if len(candidates) == 1:
            return AskMove(*candidates[0])
        return AskMove(*self._search(view, candidates))

    def _preference(self, ask, probs, view) -> tuple:
        """The logic player's order: likelier hit, then a set already shown (when hiding), then
        the set its team holds most of, then the lowest (target, card)."""
        target, card = ask
        revealing = self.logic.hide and not any(
            c in self.logic.public_holdings and set_of(c) == set_of(card) for c in view.hand)
        team = list(teammates(self.seat, self.num_players))
        team_mass = probs[team][:, list(set_cards(set_of(card)))].sum()
        return (-round(probs[target, card] / self.logic.tie), revealing, -team_mass, target, card)

    def _search(self, view: FishView, candidates: list) -> tuple[int, int]:
        self.stats["searches"] += 1
        deals = sample_deals(self.tracker, self.samples, self.rng, max_tries=self.max_tries,
                             stats=self.stats)
        ev = compile_evidence(self.num_players, self.seat, self.tracker.hand,
                              self.tracker.events, self.tracker.rules)
        public = PublicRecord(self.num_players, self.tracker.events, self.ask_held_allowed)
        team = self.seat & 1
        probs = self.tracker.probabilities()
        values = np.zeros((len(deals), len(candidates)))  # [K, N]
        hit = np.zeros((len(deals), len(candidates)), bool)
        for i, deal in enumerate(deals):
            holders = current_from_evidence(ev, deal)
            root = World.start(self.num_players, holders, public, self.seat,
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
