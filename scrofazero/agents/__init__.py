"""Gongzhu players behind one protocol (`Agent.act(view, rng) -> card`), built by name."""

from __future__ import annotations

from .base import Agent

AGENT_NAMES = ("random", "if", "greed", "raw", "scrofazero")


def make_agent(name: str, **kwargs) -> Agent:
    """Build a player by its registry name: 'random', 'if' (Mr. If) or 'greed' (Mr. Greed)
    or 'raw' (the network with a 1-ply value search over sampled deals; needs a checkpoint)
    or 'scrofazero' (the full player: sampled deals, IEC weights, batched MCTS)."""
    if name == "random":
        from .random_agent import RandomAgent

        return RandomAgent(**kwargs)
    if name == "if":
        from .mr_if import MrIf

        return MrIf(**kwargs)
    if name == "greed":
        from .mr_greed import MrGreed

        return MrGreed(**kwargs)
    if name == "raw":
        from .raw_net import RawNetworkAgent

        return RawNetworkAgent(**kwargs)
    if name == "scrofazero":
        from .scrofazero_agent import ScrofaZeroAgent

        return ScrofaZeroAgent(**kwargs)
    raise ValueError(f"unknown player {name!r}; choose from {', '.join(AGENT_NAMES)}")


__all__ = ["AGENT_NAMES", "Agent", "make_agent"]
