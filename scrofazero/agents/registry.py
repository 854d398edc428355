"""Every Gongzhu player by name: its builder, its settings schema and what it is, in one table.

All that builds a player by name reads PLAYERS: evaluate.py (eval/runner.py and the arena's
worker processes), the training-time evaluation (train/loop.py) and the table server's seat kinds
and lobby (serve/). A player's settings are a dataclass whose fields are exactly its builder's
keyword arguments besides the network, so the names a user gives are the names the builder
receives. Adding a player: its module (the agent class and its settings dataclass) and one line
in PLAYERS.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scrofazero.agents.base import Agent
from scrofazero.agents.mr_greed import GreedSettings, MrGreed
from scrofazero.agents.mr_if import MrIf
from scrofazero.agents.random_agent import RandomAgent
from scrofazero.agents.raw_net import RawNetworkAgent, RawSettings, check_raw
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent, ScrofaZeroSettings
from scrofazero.settings import check_bounds, setting_error


@dataclass
class NoSettings:
    """The settings of a player that has none."""


@dataclass(frozen=True)
class PlayerSpec:
    """One player. Invariant: build(**arguments(settings)) builds it, where the keyword
    arguments are the fields of `settings` and, for a network player, checkpoint= or model=."""

    name: str  # evaluate.py's players=[...] / player=..., a seat kind of the table server
    build: Callable[..., Agent]  # the agent class (or a function) taking those arguments
    settings: type[Any]  # dataclass of build's other keyword arguments, every one with a default
    title: str  # how a table names it
    about: str  # one line: what it is (the page's lobby, docs)
    network: bool = False  # build also takes the network: checkpoint=PATH or model=MODULE
    # checks its settings (settings, where) -> settings: the declared types (check_bounds), and
    # what they cannot say
    check: Callable = check_bounds

    def settings_from(self, given: Mapping) -> object:
        """The player's settings from the values a user gave, checked by their declared types
        (settings.check_bounds); a field the player does not have or a bad value raises a
        ValueError naming it as `NAME.FIELD`.

        Args:
            given: field name -> value; fields not given keep their defaults.

        Returns:
            An instance of self.settings.
        """
        known = [f.name for f in dataclasses.fields(self.settings)]
        for key in given:
            if key not in known:
                raise setting_error(f"{self.name}.{key}", f"is not a setting of player "
                                    f"{self.name!r} (it has: {', '.join(known) or 'none'})")
        return self.check(self.settings(**given), self.name)

    def arguments(self, settings=None, checkpoint: str | None = None, model=None) -> dict:
        """build's keyword arguments: the fields of `settings`, and the network for a network
        player.

        Args:
            settings: an instance of self.settings (None: the defaults).
            checkpoint: a network player's network file (network players take it or `model`).
            model: an already loaded network instead of a file.

        Returns:
            keyword name -> value, ready for build(**...).
        """
        if settings is None:
            settings = self.settings()
        if not isinstance(settings, self.settings):
            raise TypeError(f"player {self.name!r} takes {self.settings.__name__}, got "
                            f"{type(settings).__name__}")
        kwargs = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
        if self.network:
            kwargs.update({"checkpoint": checkpoint} if checkpoint is not None else {})
            kwargs.update({"model": model} if model is not None else {})
        elif checkpoint is not None or model is not None:
            raise ValueError(f"player {self.name!r} plays without a network")
        return kwargs

    def make(self, settings=None, checkpoint: str | None = None, model=None) -> Agent:
        """A new agent of this player, built from the same arguments as `arguments` takes."""
        return self.build(**self.arguments(settings, checkpoint, model))


PLAYERS: dict[str, PlayerSpec] = {spec.name: spec for spec in (
    PlayerSpec("scrofazero", ScrofaZeroAgent, ScrofaZeroSettings, "ScrofaZero",
               "our full player: sampled deals weighed by belief, then tree search on each",
               network=True),
    PlayerSpec("raw", RawNetworkAgent, RawSettings, "ScrofaZero (raw network)",
               "the trained network looking one card ahead, without tree search", network=True,
               check=check_raw),
    PlayerSpec("greed", MrGreed, GreedSettings, "Mr. Greed",
               "samples the hidden hands and plays the current trick greedily"),
    PlayerSpec("if", MrIf, NoSettings, "Mr. If", "hand-written rules: safe leads, fixed discards"),
    PlayerSpec("random", RandomAgent, NoSettings, "Mr. Random", "a uniformly random legal card"),
)}


def player_names() -> tuple[str, ...]:
    """The registered players' names, in PLAYERS's order."""
    return tuple(PLAYERS)


def player_spec(name: str) -> PlayerSpec:
    """The spec of a registered player; ValueError naming the choices for an unknown name.

    Args:
        name: the player's registry name, e.g. "scrofazero", "raw", "greed", "if", "random".
    """
    if name not in PLAYERS:
        raise ValueError(f"unknown player {name!r}; choose from {', '.join(PLAYERS)}")
    return PLAYERS[name]


def make_agent(name: str, **kwargs) -> Agent:
    """Build a player by its registry name.

    Args:
        name: the player's registry name (player_spec).
        **kwargs: its builder's keyword arguments: its settings' fields, and checkpoint= or
            model= for a network player.
    """
    return player_spec(name).build(**kwargs)
