"""What the entry points run: one row per game (its config schema, its trainer, its evaluation
runner) and the registration of every hydra schema. train.py and evaluate.py pick the row of
`game.name`; the runners know nothing of each other. The settings are checked against their
dataclasses' declared bounds (config.check_train, config.check_evaluate) and evaluate.py's input
files are read and checked (the row's `inputs`) before any work. User errors (missing or corrupt
files, bad settings, a run folder in use) end the command with one line on stderr and exit status
2; the full traceback only with debug=true or HYDRA_FULL_ERROR=1.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Callable

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from scrofazero.atomic import check_writable, write_json_atomic
from scrofazero.config import (
    EvaluateConfig,
    GameConfig,
    ModelConfig,
    TrainConfig,
    TrainRootConfig,
    check_evaluate,
    check_train,
)
from scrofazero.eval.driver import run_evaluate as evaluate_gongzhu
from scrofazero.fish.config import FishConfig, check_fish_inputs
from scrofazero.fish.report import run_fish
from scrofazero.fish.train import run_fish_training
from scrofazero.search.mcts import MCTSConfig
from scrofazero.serve.config import PlayConfig
from scrofazero.settings import check_settings
from scrofazero.tiny_crew.config import TinyCrewConfig, check_tiny_crew_inputs
from scrofazero.tiny_crew.report import run_tiny_crew
from scrofazero.tiny_crew.train import run_tiny_crew_training
from scrofazero.train.distributed import run_training_ray
from scrofazero.train.loop import run_training as train_gongzhu
from scrofazero.run_lock import RunLocked

# What a user can cause and fix: bad values, missing/corrupt/unwritable files (CheckpointError,
# DealError, TranscriptError are ValueErrors), a run folder in use, a player that kills its
# worker process.
USER_ERRORS = (ValueError, OSError, RunLocked, BrokenProcessPool)


@dataclass(frozen=True)
class GameEntry:
    schema: type  # the game's config group schema (configs/game/<name>.yaml extends it)
    train: Callable  # train.py's runner (cfg) -> run
    evaluate: Callable  # evaluate.py's runner (cfg) -> result dict
    inputs: Callable = lambda cfg: None  # reads and checks evaluate.py's input files (cfg)


GAMES = {
    "gongzhu": GameEntry(GameConfig, train_gongzhu, evaluate_gongzhu),
    "tiny_crew": GameEntry(TinyCrewConfig, run_tiny_crew_training, run_tiny_crew,
                           check_tiny_crew_inputs),
    "fish": GameEntry(FishConfig, run_fish_training, run_fish, check_fish_inputs),
}


def register_configs() -> None:
    """Register the schemas in hydra's ConfigStore so the YAML files in configs/ can extend them."""
    store = ConfigStore.instance()
    store.store(name="evaluate_schema", node=EvaluateConfig)
    store.store(name="train_schema", node=TrainRootConfig)
    store.store(name="play_schema", node=PlayConfig)
    for name, entry in GAMES.items():
        store.store(group="game", name=f"{name}_schema", node=entry.schema)
    store.store(group="model", name="model_schema", node=ModelConfig)
    store.store(group="search", name="search_schema", node=MCTSConfig)
    store.store(group="train", name="train_schema", node=TrainConfig)


def game_entry(name: str) -> GameEntry:
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose from {', '.join(GAMES)}")
    return GAMES[name]


def reported(job: Callable, cfg):
    """job(cfg), with a user error turned into one line on stderr and exit status 2."""
    try:
        return job(cfg)
    except USER_ERRORS as err:
        if cfg.get("debug") or os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        message = " ".join(str(err).split()) or type(err).__name__
        print(f"error: {message} (debug=true shows the traceback)", file=sys.stderr)
        sys.exit(2)


def train(cfg):
    """train.py: the game's trainer."""
    return reported(_train, cfg)


def evaluate(cfg) -> dict:
    """evaluate.py: the game's evaluation runner; the result is written to cfg.out as JSON."""
    return reported(_evaluate, cfg)


def play(cfg) -> None:
    """play.py: serve tables to people and bots (needs the `[play]` extra)."""
    reported(_play, cfg)


def _play(cfg) -> None:
    settings = check_settings(OmegaConf.to_object(cfg), "")  # a PlayConfig
    try:
        from scrofazero.serve.app import serve
    except ImportError as err:
        raise ValueError(f"python play.py needs the web extra: pip install -e '.[play]' "
                         f"({err})") from None
    serve(settings)


def _train(cfg):
    entry = game_entry(cfg.game.name)
    check_train(OmegaConf.to_object(cfg))  # before any work: nothing is written on a bad setting
    if cfg.distributed == "ray":
        if cfg.game.name != "gongzhu":
            raise ValueError(f"distributed=ray trains game=gongzhu only, not {cfg.game.name!r}")
        return run_training_ray(cfg)
    return entry.train(cfg)


def _evaluate(cfg) -> dict:
    entry = game_entry(cfg.game.name)
    check_evaluate(OmegaConf.to_object(cfg))
    if cfg.get("predictor") and (cfg.game.name != "fish" or cfg.mode != "track"):
        raise ValueError(f"model={cfg.predictor} (a learned hand predictor) is read by game=fish "
                         f"mode=track only, not game={cfg.game.name} mode={cfg.mode}")
    if cfg.out:
        check_writable(cfg.out)  # before any work: a bad path must not cost the evaluation
    entry.inputs(cfg)  # a damaged input file is named before any work, too
    result = entry.evaluate(cfg)
    if cfg.out:
        print(f"wrote {write_json_atomic(cfg.out, result)}")
    return result
