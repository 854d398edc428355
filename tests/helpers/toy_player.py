"""A toy Gongzhu player, the whole of what a new player is besides its registry line: the agent
class and its settings dataclass (tests/test_player_registry.py registers and plays it)."""

from __future__ import annotations

from dataclasses import dataclass

from scrofazero.agents.base import Explanation
from scrofazero.settings import check_bounds, one_of

ENDS = ("lowest", "highest")


@dataclass
class ToySettings:
    end: one_of(*ENDS) = "lowest"  # which end of its legal cards (by index) it plays


class ToyPlayer:
    """Plays the lowest (or highest) legal card and explains it: each legal card's value is its
    rank among the legal cards from the chosen end, negated (the played card is worth 0)."""

    name = "toy"

    def __init__(self, end: str = "lowest"):
        self.end = check_bounds(ToySettings(end), "toy").end

    def act(self, view, rng) -> int:
        return self.decide(view, rng)[0]

    def decide(self, view, rng) -> tuple[int, Explanation]:
        legal = view.legal_actions()
        order = legal if self.end == "lowest" else legal[::-1]
        values = tuple(-float(order.index(c)) for c in legal)
        return order[0], Explanation(values=values, forced=len(legal) == 1)
