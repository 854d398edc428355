"""Gongzhu players behind one protocol (`Agent.act(view, rng) -> card`), built by name."""

from __future__ import annotations

from scrofazero.agents.base import Agent
from scrofazero.agents.mr_greed import MrGreed
from scrofazero.agents.mr_if import MrIf
from scrofazero.agents.random_agent import RandomAgent
from scrofazero.agents.raw_net import RawNetworkAgent
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent

PLAYERS = {
    "random": RandomAgent,
    "if": MrIf,  # Mr. If
    "greed": MrGreed,  # Mr. Greed
    "raw": RawNetworkAgent,  # the network with a 1-ply value search over sampled deals
    "scrofazero": ScrofaZeroAgent,  # the full player: sampled deals, IEC weights, batched MCTS
}
AGENT_NAMES = tuple(PLAYERS)


def make_agent(name: str, **kwargs) -> Agent:
    """Build a player by its registry name (a key of PLAYERS) with its keyword arguments."""
    if name not in PLAYERS:
        raise ValueError(f"unknown player {name!r}; choose from {', '.join(AGENT_NAMES)}")
    return PLAYERS[name](**kwargs)


__all__ = ["AGENT_NAMES", "PLAYERS", "Agent", "make_agent"]
