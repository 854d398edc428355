"""Gongzhu players behind one protocol (`Agent.act(view, rng) -> card`, `decide` for the card
with its explanation), built by name from the registry (agents/registry.py)."""

from __future__ import annotations

from scrofazero.agents.base import Agent, Explanation, check_real_game, decide
from scrofazero.agents.registry import PLAYERS, PlayerSpec, make_agent, player_names, player_spec

__all__ = ["PLAYERS", "Agent", "Explanation", "PlayerSpec", "check_real_game", "decide",
           "make_agent", "player_names", "player_spec"]
