"""What tree search needs from a game and from a leaf evaluator, as typing protocols.

Search (mcts.py) talks to a game only through `BatchedGame` (pure functions over a batch of
states, e.g. games.gongzhu.batch.GongzhuRules) and to a network only through `Evaluator`
(e.g. nn.evaluator.NetworkEvaluator), so it is tested with cheap hand-written evaluators.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

State = Any  # a batch of B states (e.g. StateBatch); opaque to search


@runtime_checkable
class BatchedGame(Protocol):
    """A perfect-information game over batches of states; every function is pure.

    The methods take `s`, a batch of B states (opaque to search); those that return arrays give
    one row per state, in the batch's order.
    """

    num_actions: int  # A
    num_players: int  # P
    teams: np.ndarray  # [P] seat -> team

    def current_player(self, s: State) -> np.ndarray:
        """[B] seat to move."""

    def is_terminal(self, s: State) -> np.ndarray:
        """[B] bool."""

    def legal_mask(self, s: State) -> np.ndarray:
        """[B, A] bool legal actions of the player to move."""

    def returns(self, s: State) -> np.ndarray:
        """[B, P] value per seat (exact at terminal states)."""

    def step(self, s: State, actions: np.ndarray) -> State:
        """New batch after playing actions [B] (legal, unchecked); `s` is left untouched.

        Args:
            s: a batch of B non-terminal states.
            actions: [B] int, the action played in each row.
        """

    def take(self, s: State, idx: np.ndarray) -> State:
        """Rows `idx` of `s` as a new batch.

        Args:
            s: a batch of states.
            idx: [n] int row indices, in the order wanted.
        """

    def concat(self, batches: Sequence[State]) -> State:
        """Batches stacked in order.

        Args:
            batches: batches of the same game, each any number of rows.
        """


@runtime_checkable
class Evaluator(Protocol):
    """Leaf evaluation for search."""

    def __call__(self, states: State, /) -> tuple[np.ndarray, np.ndarray]:
        """Evaluate a batch of states for search (positional: an evaluator names it as it likes).

        Args:
            states: a batch of B states (search sends only non-terminal ones).

        Returns:
            (logits [B, A] float32, raw and unmasked; values [B, P] float32): values are the
            expected FINAL returns per seat, in points.
        """
