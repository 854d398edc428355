"""Exact Tiny Crew tools over all 34,650 deals (the compiled core is fast/).

- `TabularPolicy`: a joint policy as a table information-state key -> probabilities over the
  12 cards (states missing from the table play uniformly over their legal cards).
- `Setting`: the deals and first leaders of one parameter setting, with `evaluate(policy)`
  (the team's exact win rate), `open_hand_bound()` (best joint play with every hand open),
  `best_response(policy, seat)` (exact, deterministic) and `improve(policy)` (best responses
  iterated over the seats until none helps), `search_policy()` (determinized open-hand vote).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scrofazero.games.tiny_crew.rules import NUM_SEATS, S3, Params, all_deals, trick_winner
from scrofazero.tiny_crew import fast

_DEALS = None


def deals_table() -> np.ndarray:
    """All deals once, [34650, 12] int64 owners (cached)."""
    global _DEALS
    if _DEALS is None:
        _DEALS = all_deals().astype(np.int64)
        _DEALS.setflags(write=False)
    return _DEALS


def key_position(key: int) -> tuple[int, int, list[int]]:
    """Decode an information-state key (fast.info_key layout): the mover's current hand (its
    initial hand minus the cards played), the current trick's leader (from trick winners) and
    the current trick's cards."""
    hand, leader, n = key & 0xFFF, (key >> 12) & 3, (key >> 14) & 15
    trick: list[int] = []
    for j in range(n):
        card = (key >> (18 + 4 * j)) & 15
        hand &= ~(1 << card)  # only the mover's own plays are in its hand
        trick.append(card)
        if len(trick) == NUM_SEATS:
            leader, trick = trick_winner(trick, leader), []
    return hand, leader, trick


def setting_from_config(game, **override) -> Setting:
    """The Setting of a `game=tiny_crew` config (leader, t1, t2, deal_stride); `override`
    replaces any of leader, t1, t2."""
    if game.deal_stride < 1:
        raise ValueError(f"game.deal_stride must be >= 1, got {game.deal_stride}")
    pick = {k: override.get(k, getattr(game, k)) for k in ("leader", "t1", "t2")}
    params = Params(leader=str(pick["leader"]), t1_seat=int(pick["t1"]), t2_seat=int(pick["t2"]))
    return Setting(params, deals=None if game.deal_stride == 1
                   else np.arange(0, len(deals_table()), game.deal_stride))


@dataclass
class TabularPolicy:
    """index: numba dict key -> row; probs [M, 12] (rows sum to 1 over legal cards).

    States missing from the table play uniformly when fallback_deals == 0, else as the
    determinized search player with that many deals and salts[seat] as its seed (a total
    policy: what search-derived and best-response tables need when other seats deviate);
    `cache` memoises the search player's choices for these salts."""

    index: Any = field(default_factory=fast.new_index)  # a numba typed Dict
    probs: np.ndarray = field(default_factory=lambda: np.zeros((0, 12)))
    fallback_deals: int = 0
    salts: np.ndarray = field(default_factory=lambda: np.zeros(3, dtype=np.int64))
    cache: Any = field(default_factory=fast.new_index)

    def fb(self) -> tuple:
        return (int(self.fallback_deals), np.asarray(self.salts, dtype=np.int64), self.cache)

    def with_table(self, index, probs) -> TabularPolicy:
        """Another table with the same fallback (and its cache)."""
        return TabularPolicy(index, probs, self.fallback_deals, self.salts, self.cache)

    def __len__(self) -> int:
        return len(self.index)

    def set_rows(self, keys, rows: np.ndarray) -> None:
        """Set (or add) the distributions of information states `keys` to `rows` [K, 12]."""
        keys = np.asarray(keys, dtype=np.int64)
        new = [k for k in keys.tolist() if k not in self.index]
        if new:
            start = len(self.probs)
            self.probs = np.concatenate([self.probs, np.zeros((len(new), 12))])
            for j, k in enumerate(new):
                self.index[k] = start + j
        target = np.array([self.index[k] for k in keys.tolist()], dtype=np.int64)
        self.probs[target] = rows

    def copy(self) -> TabularPolicy:
        return self.with_table(fast.copy_index(self.index), self.probs.copy())

    def to_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(keys [M] int64, probs [M, 12]) in row order, for checkpoints."""
        keys = np.zeros(len(self.index), dtype=np.int64)
        for k, v in self.index.items():
            keys[v] = k
        return keys, self.probs[: len(keys)].copy()

    @staticmethod
    def from_arrays(keys, probs) -> TabularPolicy:
        out = TabularPolicy()
        for j, k in enumerate(np.asarray(keys, dtype=np.int64).tolist()):
            out.index[k] = j
        out.probs = np.asarray(probs, dtype=np.float64).copy()
        return out


class Setting:
    """All deals of one parameter setting (leader rule, task owners)."""

    def __init__(self, params: Params = Params(), deals=None):  # noqa: B008 (frozen)
        """deals: indices into the full deal table to restrict to (tests); None for all."""
        self.params = params
        self.deals = deals_table() if deals is None else deals_table()[np.asarray(deals)]
        if params.leader == "captain":
            self.first_leaders = self.deals[:, S3].copy()
        else:
            self.first_leaders = np.zeros(len(self.deals), dtype=np.int64)

    def _args(self) -> tuple[np.ndarray, np.ndarray, int, int]:
        return self.deals, self.first_leaders, self.params.t1_seat, self.params.t2_seat

    def deal_values(self, policy: TabularPolicy) -> np.ndarray:
        """[34650] exact win probability of each deal under `policy`."""
        probs = policy.probs if len(policy.probs) else np.zeros((1, 12))
        return fast.policy_values(*self._args(), policy.index, probs, policy.fb())

    def evaluate(self, policy: TabularPolicy) -> float:
        """The team's exact win rate over all deals (deals equally likely)."""
        return float(self.deal_values(policy).mean())

    def open_hand_bound(self) -> float:
        """Best possible win rate with every hand open (an upper bound on any policy)."""
        return float(fast.open_hand_values(*self._args()).mean())

    def search_policy(self, max_deals: int = 20, seed: int = 0) -> TabularPolicy:
        """The determinized search player (fast.search_choice with max_deals deals, drawn with
        `seed` mixed into each information state's seed) as a policy: an empty table whose
        fallback is the search."""
        if max_deals < 1:
            raise ValueError(f"max_deals must be >= 1, got {max_deals}")
        return TabularPolicy(fallback_deals=int(max_deals),
                             salts=np.full(3, int(seed), dtype=np.int64))

    def best_response(self, policy: TabularPolicy, seat: int) -> TabularPolicy:
        """`policy` with seat's play replaced by an exact best response to the other seats
        (deterministic; ties go to the lowest card). Levels (the seat's 4 decisions) are solved
        from the last to the first, so later choices are already optimal."""
        if not 0 <= seat < NUM_SEATS:
            raise ValueError(f"seat must be 0..2, got {seat}")
        probs = policy.probs if len(policy.probs) else np.zeros((1, 12))
        br_index, br_card = fast.new_index(), np.zeros(0, dtype=np.int64)
        capacity = 1 << 16
        for level in (3, 2, 1, 0):
            while True:
                q_index = fast.new_index()
                q = np.zeros((capacity, 12))
                q_legal = np.zeros(capacity, dtype=np.int64)
                overflow = np.zeros(1, dtype=np.int64)
                fast.br_level(*self._args(), seat, level, policy.index, probs, br_index,
                              br_card, q_index, q, q_legal, overflow, policy.fb())
                if not overflow[0]:
                    break
                capacity *= 4
            choice = fast.best_cards(q, q_legal, len(q_index))
            fast.append_index(br_index, q_index, len(br_card))
            br_card = np.concatenate([br_card, choice])
        out = policy.with_table(fast.copy_index(policy.index), policy.probs)
        missing = fast.count_missing(out.index, br_index)
        start = len(policy.probs)
        out.probs = np.concatenate([policy.probs, np.zeros((missing, 12))])
        fast.merge_onehot(out.index, out.probs, br_index, br_card, start)
        return out

    def improve(self, policy: TabularPolicy, max_rounds: int = 10, log=None
                ) -> tuple[TabularPolicy, list[float]]:
        """Coordinate ascent: best responses for seats 0, 1, 2, 0, ... kept while they raise
        the exact win rate, until a full round over the seats gains nothing (or max_rounds).
        Returns the improved policy and the win rate after each accepted step."""
        value = self.evaluate(policy)
        history = [value]
        for _ in range(max_rounds):
            gained = False
            for seat in range(NUM_SEATS):
                candidate = self.best_response(policy, seat)
                v = self.evaluate(candidate)
                if v > value + 1e-12:
                    policy, value, gained = candidate, v, True
                    history.append(v)
                    if log:
                        log(seat, v)
            if not gained:
                break
        return policy, history
