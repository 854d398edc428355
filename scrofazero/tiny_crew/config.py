"""Tiny Crew's options: the `game=tiny_crew` config group of train.py and evaluate.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrofazero.games.tiny_crew.rules import LEADERS, NUM_SEATS
from scrofazero.settings import Count, GameConfig, NonNegativeInt, at_most, one_of
from scrofazero.tiny_crew.policy_file import load_policy
from scrofazero.tiny_crew.train import METHODS

if TYPE_CHECKING:  # the plain type (mypy takes no call in a type)
    Seat = int
else:
    Seat = at_most(NUM_SEATS - 1, low=0)


@dataclass
class TinyCrewConfig(GameConfig):
    name: str = "tiny_crew"
    # who leads the first trick: seat0 | captain (the holder of S3)
    leader: one_of(*LEADERS) = "seat0"  # type: ignore[valid-type]
    t1: Seat = 0  # seat owning T1 "win the red 3"
    t2: Seat = 1  # seat owning T2 "win exactly one blue card"
    # consistent deals the search player solves per decision (all when fewer)
    search_deals: Count = 20
    # rounds of exact best responses over the seats applied to the search policy
    improve_rounds: NonNegativeInt = 3
    # evaluate every k-th deal only (quick checks and tests; exact figures need 1)
    deal_stride: Count = 1
    # also train a second seed's improved search policy and cross-play the two
    crossplay: bool = False
    # also the open-hand bound for every task assignment and both leader rules
    all_bounds: bool = False
    # train.py game=tiny_crew: cfr (chance-sampled CFR+) | mccfr (OpenSpiel's external sampling)
    method: one_of(*METHODS) = "cfr"  # type: ignore[valid-type]
    iterations: Count = 3000  # train.py: sampled deals (cfr) or iterations (mccfr)
    # train.py: exact evaluation and policy checkpoint every this many iterations
    eval_every: Count = 1000
    # train.py cfr: stop with a clear error beyond this many information states
    max_states: Count = 16777216
    # evaluate.py: a policy.npz written by train.py game.method=cfr
    cfr_policy: str | None = None
    # evaluate.py: a policy.npz written by train.py game.method=mccfr
    mccfr_policy: str | None = None
    # evaluate.py: rounds of exact best responses applied to each learned policy (slow: minutes per
    # seat)
    improve_learned: NonNegativeInt = 0


def check_tiny_crew_inputs(cfg) -> None:
    """evaluate.py game=tiny_crew: the learned policy files are read and checked before the
    exact evaluation starts (minutes), so a damaged one costs nothing."""
    for key in ("cfr_policy", "mccfr_policy"):
        if getattr(cfg.game, key):
            load_policy(getattr(cfg.game, key))
