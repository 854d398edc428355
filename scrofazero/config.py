"""Structured configs (dataclasses) registered in hydra's ConfigStore.

The YAML files in configs/ build on these schemas; each component receives its own sub-config.
Nothing here reads a config at import time: `register_configs()` is called by the entry points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

GAMES = ("gongzhu", "tiny_crew", "fish")


@dataclass
class GameConfig:
    name: str = "gongzhu"  # which game: gongzhu | tiny_crew | fish
    leader: int = 0  # seat that leads the first trick when a game is created without a deal


@dataclass
class EvaluateConfig:
    game: GameConfig = field(default_factory=GameConfig)  # the game being evaluated
    mode: str = "matrix"  # matrix: every pair of `players`; wpg: `player` vs two Mr. Greeds
    players: list[str] = field(default_factory=lambda: ["random", "if", "greed"])  # matrix rows
    player: str = "greed"  # the player measured by mode=wpg
    deals: Optional[int] = None  # how many deals of the deal file to play (None: all)
    deals_file: Optional[str] = None  # deal file, one 52-code line per deal (None: the 1024 standard deals)
    seed: int = 0  # seeds every random decision (per deal, play and seat)
    workers: int = 0  # processes playing deals in parallel (0: one per CPU core)
    greed_samples: int = 20  # sampled deals per Mr. Greed decision (the doc's N)
    out: Optional[str] = None  # JSON file for the result (None: print only)
    progress: bool = True  # show a tqdm progress bar


def register_configs() -> None:
    """Register the schemas so the YAML files can extend them."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    store.store(name="evaluate_schema", node=EvaluateConfig)
    store.store(group="game", name="gongzhu_schema", node=GameConfig)
