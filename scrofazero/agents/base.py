"""The agent protocol: choose a card for one seat's information view, and say why if it can.

Agents see only an `InfoView` (never another seat's hand) and draw any randomness from the
generator the caller passes, so a game is reproducible from its seed whatever the process.
`act` is all a player must have (the arena calls only it); a player that can explain its moves
also has `decide`, which returns the card `act` would with an `Explanation`. `decide(agent, ...)`
asks any agent for both, so callers never look at an agent's class.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Explanation:
    """What a player weighed for one move.

    values[i]: the value of view.legal_actions()[i]: the mover's team's expected final team
    difference, its points minus the other team's at the end of the hand (None: not
    valued). belief: [52, 4], the probability that each seat holds each card over the deals the
    player weighed (None when it weighed none); rows of cards the mover can see say nothing.
    deals: deals weighed; ess: their effective sample size. forced: only one card was legal, so
    nothing was weighed."""

    values: tuple[float | None, ...]
    belief: np.ndarray | None = None
    deals: int = 0
    ess: float = 0.0
    forced: bool = False


class ExplainingAgent(Agent, Protocol):
    """A player that can say why it chose its card."""

    def decide(self, view: InfoView, rng: np.random.Generator
               ) -> tuple[int, Explanation | None]:
        """The card `act` would play from the same rng, and what was weighed (None: nothing to
        tell)."""
        ...


class ObservingAgent(Agent, Protocol):
    """A player set for evaluation only, which the evaluation arena tells what a real game would
    not: the true hands when its `needs_deal` (an oracle sampling), the players at every seat
    when its `needs_players` (the posterior)."""

    needs_deal: bool
    needs_players: bool

    def observe_deal(self, hands: Iterable[int]) -> None:
        """The true current hands (4 masks), before each of its moves."""
        ...

    def observe_players(self, agents: Sequence[Agent]) -> None:
        """The players at every seat, once before the game."""
        ...


def decide(agent: Agent, view: InfoView, rng: np.random.Generator
           ) -> tuple[int, Explanation | None]:
    """`agent`'s card for `view` and its explanation: agent.decide when it has one, else
    (agent.act, None)."""
    explained = getattr(agent, "decide", None)
    if explained is None:
        return int(agent.act(view, rng)), None
    card, why = explained(view, rng)
    return int(card), why


def check_real_game(agent: Agent, where: str = "a real game") -> None:
    """Refuse a player set for evaluation only (it would see the true deal, or use its
    opponents' own program: its `evaluation_only` says why) in `where`: a table, the protocol,
    an environment."""
    why = getattr(agent, "evaluation_only", None)
    if why:
        name = getattr(agent, "name", type(agent).__name__)
        raise ValueError(f"player {name!r} is set so that it {why}: that is for evaluation "
                         f"only and is refused in {where}")
