"""Tiny Crew's options: the `game=tiny_crew` config group of train.py and evaluate.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from scrofazero.config import GameConfig


@dataclass
class TinyCrewConfig(GameConfig):
    name: str = "tiny_crew"
    leader: Any = "seat0"  # who leads the first trick: seat0 | captain (the holder of S3)
    t1: int = 0  # seat owning T1 "win the red 3"
    t2: int = 1  # seat owning T2 "win exactly one blue card"
    search_deals: int = 20  # consistent deals the search player solves per decision (all when fewer)
    improve_rounds: int = 3  # rounds of exact best responses over the seats applied to the search policy
    deal_stride: int = 1  # evaluate every k-th deal only (quick checks and tests; exact figures need 1)
    crossplay: bool = False  # also train a second seed's improved search policy and cross-play the two
    all_bounds: bool = False  # also the open-hand bound for every task assignment and both leader rules
    method: str = "cfr"  # train.py game=tiny_crew: cfr (chance-sampled CFR+) | mccfr (OpenSpiel's external sampling)
    iterations: int = 3000  # train.py: sampled deals (cfr) or iterations (mccfr)
    eval_every: int = 1000  # train.py: exact evaluation and policy checkpoint every this many iterations
    max_states: int = 16777216  # train.py cfr: stop with a clear error beyond this many information states
    cfr_policy: Optional[str] = None  # evaluate.py: a policy.npz written by train.py game.method=cfr
    mccfr_policy: Optional[str] = None  # evaluate.py: a policy.npz written by train.py game.method=mccfr
    improve_learned: int = 0  # evaluate.py: rounds of exact best responses applied to each learned policy (slow: minutes per seat)
