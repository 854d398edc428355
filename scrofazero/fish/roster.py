"""Every Fish player by name: the one place that knows them all (match.py and report.py build
players through it, so the players' modules never import each other's siblings)."""

from __future__ import annotations

from scrofazero.fish.learned import LearnedPlayer
from scrofazero.fish.players import LogicPlayer, RandomPlayer
from scrofazero.fish.search_player import SearchPlayer

FISH_PLAYERS = ("random", "logic", "logic_open", "search", "learned")


def make_fish_player(name: str, **kwargs):
    """'random', 'logic', 'logic_open' (logic without hiding), 'search' (determinized
    rollouts, fish/search_player.py) or 'learned' (the self-play trained scorer,
    fish/learned.py; `checkpoint=PATH`, default models/fish_learned.pt); keyword arguments go
    to the player."""
    if name == "random":
        return RandomPlayer(**kwargs)
    if name in ("logic", "logic_open"):
        return LogicPlayer(**{**kwargs, "hide": name == "logic"})
    if name == "search":
        return SearchPlayer(**kwargs)
    if name == "learned":
        return LearnedPlayer(**kwargs)
    raise ValueError(f"unknown Fish player {name!r}; choose from {FISH_PLAYERS}")
