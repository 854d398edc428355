"""What every Fish player is to the match runner (fish/match.py) and the trainers: a
`FishPlayer`. A player sees only its own view (FishState.view: its hand, the public hand
counts, its legal asks) and the public events it is told about; it never touches the engine."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from scrofazero.games.fish.events import Event
from scrofazero.games.fish.rules import CallMove, FishView, Move


@runtime_checkable
class FishPlayer(Protocol):
    """One seat's player. Invariants: `reset` starts every game (before any other call);
    `observe` is told every public event in order, the player's own included; `call_now` may be
    asked between any two moves under calls=any_time and returns a call or None; `act` is asked
    on the player's turn and returns a legal move of `view` (a call when view.must_call);
    `belief` is what it believes now: [seats, cards] P(seat holds card), None for a player that
    keeps no belief (what the table server reveals of a bot at the end of a game)."""

    def reset(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
              ask_needs_other: bool = True) -> None: ...

    def observe(self, event: Event) -> None: ...

    def call_now(self, view: FishView) -> CallMove | None: ...

    def act(self, view: FishView) -> Move: ...

    def belief(self) -> np.ndarray | None: ...
