"""The agent protocol: choose a card for one seat's information view.

Agents see only an `InfoView` (never another seat's hand) and draw any randomness from the
generator the caller passes, so a game is reproducible from its seed whatever the process.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from scrofazero.games.gongzhu.rules import InfoView


@runtime_checkable
class Agent(Protocol):
    """A Gongzhu player."""

    name: str

    def act(self, view: InfoView, rng: np.random.Generator) -> int:
        """Return a legal card index for `view.seat`, which is the player to move."""
        ...
