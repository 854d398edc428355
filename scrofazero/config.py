"""The entry points' configs composed from each component's own settings, and their checks.

Each settings type lives beside what it configures: the network's shape (nn/network.py
ModelConfig), the search (search/mcts.py MCTSConfig), the `train` group and Gongzhu's whole run
(train/config.py TrainConfig, GongzhuTrainConfig), the root every run has (runs.py
TrainRootConfig), Ray's (cluster.py RayConfig), evaluate.py's (eval/config.py EvaluateConfig,
with each player's settings class from agents/). The YAML files in configs/ build on these
schemas. This module composes them: a composed config is checked once, before any work
(check_train, check_evaluate: every field within its declared bounds, and the settings that
depend on each other), and the runners receive the checked dataclasses as they are. A key no
schema declares (`+key=value` adds one that hydra lets through and nothing reads) is refused,
naming the nearest declared key of its group (check_declared). Nothing here reads a config at
import time; scrofazero/entry.py registers the schemas.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterator
from difflib import SequenceMatcher
from typing import cast

import torch
from omegaconf import DictConfig, OmegaConf

from scrofazero.agents.raw_net import check_raw
from scrofazero.cluster import RayConfig
from scrofazero.eval.config import EvaluateConfig
from scrofazero.nn.network import ModelConfig, check_size
from scrofazero.runs import TrainRootConfig
from scrofazero.search.mcts import MCTSConfig, check_search
from scrofazero.settings import check_bounds, renamed
from scrofazero.train.config import GongzhuTrainConfig, TrainConfig
from scrofazero.train.schedule import PHASE_KEYS, check_schedule

__all__ = ["EvaluateConfig", "GongzhuTrainConfig", "MCTSConfig", "ModelConfig", "RayConfig",
           "TrainConfig", "TrainRootConfig", "check_declared", "check_evaluate", "check_train",
           "evaluate_settings"]

DEVICE_KINDS = ("cpu", "cuda", "mps")


def check_declared(cfg: DictConfig, free: Collection[str] = ()) -> None:
    """Refuse a key of the composed config that its group's schema does not declare (hydra
    refuses `key=value` for one, but `+key=value` adds it and nothing would read it): a
    ValueError naming the first and the nearest declared key. `free` names root keys that take
    any settings (evaluate.py's players without a schema group, `+NAME.SETTING=...`)."""
    for path, key, schema in _undeclared(cfg, "", free):
        raise ValueError(unknown_setting(path, key, schema))


def _undeclared(node: DictConfig, where: str, free: Collection[str] = ()
                ) -> Iterator[tuple[str, str, type]]:
    """(dotted path, key, schema) of every key below `node` that its dataclass schema lacks,
    but for the keys `free` of `node` itself."""
    schema = OmegaConf.get_type(node)
    declared = ({f.name for f in dataclasses.fields(schema)} if dataclasses.is_dataclass(schema)
                else None)
    for key, value in node.items_ex(resolve=False):
        path = f"{where}.{key!s}" if where else str(key)
        if declared is not None and key not in declared:
            if key not in free:
                assert schema is not None  # a dataclass: it declares keys
                yield _first_leaf(path, value), str(key), schema
        elif isinstance(value, DictConfig):
            yield from _undeclared(value, path)


def _first_leaf(path: str, value) -> str:
    """The path of the first setting within `value` (at `path`), as the user spelled it on the
    command line: +model.hidden=[8] adds `model` as {hidden: [8]}."""
    while isinstance(value, DictConfig) and len(value) > 0:
        key, value = next(iter(value.items_ex(resolve=False)))
        path = f"{path}.{key!s}"
    return path


def unknown_setting(path: str, key: str, schema: type) -> str:
    """What to say of setting `path`, whose `key` the dataclass `schema` (its group's) lacks:
    the nearest key the group has, or that the key belongs to Gongzhu's run only."""
    named = key in path.split(".")  # else a key inside a value, e.g. a schedule's phase
    message = f"{path} is not a setting" if named else f"{path}: {key} is not a setting"
    if schema is TrainRootConfig and key in _names(GongzhuTrainConfig):
        return f"{message} of this run ({key} is train.py game=gongzhu's)"
    near = nearest(key, _names(schema))
    if near is None:
        return message
    if named:  # the path with the key replaced: train.batch_size -> train.games_per_batch
        parts = path.split(".")
        parts[len(parts) - 1 - parts[::-1].index(key)] = near
        near = ".".join(parts)
    return f"{message}; the nearest is {near}"


def _names(schema: type) -> list[str]:
    return [f.name for f in dataclasses.fields(schema)]


def nearest(name: str, names: Collection[str]) -> str | None:
    """The one of `names` most like `name`: sharing the most words (parts between
    underscores: batch_size -> games_per_batch), then by difflib's similarity ratio; None when
    it shares no word and is not similar (ratio below difflib's default cutoff, 0.6)."""
    words = set(name.split("_"))

    def likeness(other: str) -> tuple[int, float]:
        return len(words & set(other.split("_"))), SequenceMatcher(None, name, other).ratio()

    best = max(names, key=likeness, default=None)
    if best is None:
        return None
    shared, ratio = likeness(best)
    return best if shared or ratio >= 0.6 else None


def check_device(name: str, where: str = "train.device") -> None:
    """Refuse a device torch does not know, or one this machine lacks, naming the setting."""
    if name == "auto":
        return
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        device = None
    if device is None or device.type not in DEVICE_KINDS:
        raise ValueError(f"{where}={name}: not a device; use auto, cpu, cuda, cuda:N or mps")
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (device.index or 0) >= count:
            raise ValueError(f"{where}={name}: this machine has {count} CUDA devices; use "
                             f"{where}=auto (cuda when there is one, else cpu) or cpu")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"{where}={name}: this machine has no MPS device; use {where}=auto or cpu")


def check_train(settings: TrainRootConfig) -> TrainRootConfig:
    """train.py's settings (OmegaConf.to_object of the composed config), or a ValueError naming
    the first bad one: each field within its declared bounds, every float finite and, for
    Gongzhu, a network that can be built and a device this machine has. Nothing is read or
    written."""
    check_bounds(settings, "")
    check_bounds(settings.game, "game")  # by the game's own schema
    if isinstance(settings, GongzhuTrainConfig):
        check_gongzhu_train(settings)
    return settings


def check_gongzhu_train(settings: GongzhuTrainConfig) -> None:
    """Gongzhu's groups beyond their declared bounds: the network and every shape the schedule
    grows it to can be built, the schedule's phases follow each other, the search is sound, the
    device exists, and the settings that depend on each other agree."""
    model, t = settings.model, settings.train
    check_size(model.hidden, model.num_blocks, model.aux, "model.")
    for i, phase in enumerate(t.schedule):  # the shapes the schedule grows to
        check_size(model.hidden if phase.hidden is None else phase.hidden,
                   model.num_blocks if phase.num_blocks is None else phase.num_blocks,
                   model.aux, f"train.schedule[{i}].")
    check_schedule(t.schedule, {k: getattr(t, k) for k in PHASE_KEYS},
                   {"hidden": model.hidden, "num_blocks": model.num_blocks})
    check_search(settings.search, "search")
    check_device(t.device)
    if t.eval_every > 0 and t.eval_deals < 1:
        raise ValueError(f"train.eval_deals={t.eval_deals}: must be >= 1 while train.eval_every"
                         f"={t.eval_every} (train.eval_every=0 turns the evaluation off)")
    if settings.resume_from and settings.resume:
        raise ValueError("resume=true and resume_from=PATH: resume continues this run's folder, "
                         "resume_from a state file in a new folder; choose one")
    if settings.distributed == "ray" and t.actors not in ("0", "1", "auto"):
        raise ValueError(f"train.actors={t.actors} with distributed=ray: Ray has its own "
                         "self-play actors (ray.actors); choose one")
    if settings.resume_from and t.init_from:
        raise ValueError("train.init_from and resume_from: a continued run keeps its network; "
                         "choose one")


# evaluate.py's groups named after a player, each that player's settings class.
PLAYER_GROUPS = ("scrofazero", "raw", "greed")


def evaluate_settings(cfg) -> EvaluateConfig:
    """evaluate.py's composed config as an EvaluateConfig. A player's settings class checks its
    own values as it is built: a bad one raises its ValueError with the setting named as the
    user spells it (`raw.num_deals must be a positive integer, got 0`)."""
    for name in PLAYER_GROUPS:
        try:
            OmegaConf.to_object(cfg[name])
        except ValueError as err:
            raise renamed(err, {key: f"{name}.{key}" for key in cfg[name]}) from None
    return cast(EvaluateConfig, OmegaConf.to_object(cfg))


def check_evaluate(settings: EvaluateConfig) -> EvaluateConfig:
    """evaluate.py's settings (evaluate_settings of the composed config), or a ValueError naming
    the first bad one (as check_train); the players' own settings are checked by their settings
    classes (evaluate_settings), here only for finite numbers and declared bounds."""
    check_bounds(settings, "")
    check_bounds(settings.game, "game")
    check_raw(settings.raw)  # what its types cannot say: a sampling method the raw player has
    return settings
