"""Every Fish player by name: its builder, its settings dataclass and what it is, in one table
(the match runner, evaluate.py game=fish and the trainers build players through it, so the
players' modules never import each other's siblings).

A player's settings are a dataclass whose fields are its builder's keyword arguments (the
`game.player.<name>` part of FishConfig); besides them a builder takes `seed` and the runtime
objects its spec names (the learned player's scorer `model`, its `checkpoint` file and the
shared call `stats`). Adding a player: its module (the class, implementing
players/protocol.FishPlayer, and its settings) and one line in FISH_PLAYERS.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from scrofazero.fish.players.learned import LearnedPlayer, LearnedSettings
from scrofazero.fish.players.logic import LogicPlayer, LogicSettings, RandomPlayer, RandomSettings
from scrofazero.fish.players.protocol import FishPlayer
from scrofazero.fish.players.search import SearchPlayer, SearchSettings

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


@dataclass(frozen=True)
class FishPlayerSpec:
    """One player. Invariant: make(seed, settings, **runtime) is
    build(seed=seed, **fixed, **fields of settings, **runtime), runtime only of the names in
    `runtime`."""

    name: str  # evaluate.py game=fish mode=match players=[...]
    build: Callable[..., FishPlayer]  # the player class
    settings: type[DataclassInstance]  # dataclass of build's keyword arguments, all defaulted
    about: str  # one line: what it is
    fixed: tuple = ()  # (argument, value) pairs the name itself sets
    runtime: tuple = ()  # other keyword arguments build takes (objects, not settings)

    def make(self, seed: int = 0, settings=None, **runtime) -> FishPlayer:
        settings = self.settings() if settings is None else settings
        if not isinstance(settings, self.settings):
            raise TypeError(f"Fish player {self.name!r} takes {self.settings.__name__}, got "
                            f"{type(settings).__name__}")
        unknown = sorted(set(runtime) - set(self.runtime))
        if unknown:
            raise ValueError(f"{unknown[0]} is not an argument of Fish player {self.name!r} "
                             f"(it takes: {', '.join(self.runtime) or 'none'})")
        return self.build(seed=seed, **dict(self.fixed), **dataclasses.asdict(settings),
                          **runtime)


FISH_PLAYERS: dict[str, FishPlayerSpec] = {spec.name: spec for spec in (
    FishPlayerSpec("random", RandomPlayer, RandomSettings,
                   "asks uniformly among its legal asks, now and then calls a random set"),
    FishPlayerSpec("logic", LogicPlayer, LogicSettings,
                   "the exact belief's likeliest hit, hiding in sets already shown; calls "
                   "certain sets at once", fixed=(("hide", True),)),
    FishPlayerSpec("logic_open", LogicPlayer, LogicSettings,
                   "the logic player without hiding (to measure what hiding is worth)",
                   fixed=(("hide", False),)),
    FishPlayerSpec("search", SearchPlayer, SearchSettings,
                   "logic's calls and certain hits, else rollouts on deals sampled exactly "
                   "from its belief"),
    FishPlayerSpec("learned", LearnedPlayer, LearnedSettings,
                   "the self-play trained scorer over the exact belief's features "
                   "(checkpoint=PATH, default models/fish_learned.pt)",
                   runtime=("checkpoint", "model", "stats")),
)}


def make_fish_player(name: str, seed: int = 0, settings=None, **kwargs) -> FishPlayer:
    """The player `name` with `settings` (its spec's dataclass; None: the defaults) changed by
    the keyword arguments that are settings fields; the other keyword arguments are the
    runtime objects its spec names. An unknown name or argument raises ValueError naming it."""
    spec = FISH_PLAYERS.get(name)
    if spec is None:
        raise ValueError(f"unknown Fish player {name!r}; choose from {tuple(FISH_PLAYERS)}")
    settings = spec.settings() if settings is None else settings
    fields = {f.name for f in dataclasses.fields(spec.settings)}
    given = {k: v for k, v in kwargs.items() if k in fields}
    return spec.make(seed, dataclasses.replace(settings, **given),
                     **{k: v for k, v in kwargs.items() if k not in fields})
