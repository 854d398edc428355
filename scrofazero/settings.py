"""What a setting may hold, declared in the settings dataclasses' field types, and the check that
refuses a bad one in one line naming it (`train.lr=inf: must be a finite number`).

The types below are Annotated aliases: hydra and OmegaConf see the plain type (float, int, str,
a list of them), pydantic reads the bounds. `check_bounds` validates a settings dataclass
instance, nested ones included, and also refuses a NaN or infinite float anywhere in it, so a
float setting is finite unless a field says otherwise. Nothing else of the package is imported
here, so every layer may declare its settings with these types; `GameConfig`, the `game`
group every game's options extend, is here for the same reason.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from functools import cache
from typing import Annotated

from pydantic import AfterValidator, Field, TypeAdapter, ValidationError

Finite = Annotated[float, Field(allow_inf_nan=False)]
Positive = Annotated[float, Field(gt=0, allow_inf_nan=False)]
NonNegative = Annotated[float, Field(ge=0, allow_inf_nan=False)]
Fraction = Annotated[float, Field(ge=0, le=1, allow_inf_nan=False)]  # a weight or probability
Share = Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]  # a fraction in (0, 1]
Count = Annotated[int, Field(ge=1)]
NonNegativeInt = Annotated[int, Field(ge=0)]
Seed = Annotated[int, Field(ge=0, lt=2**32)]  # numpy and torch take it, with room for offsets


def _plain_folder_name(name: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        raise ValueError("a run name is a plain folder name, not empty or a path")
    return name


# A run's name: one folder under checkpoint_dir and log_dir, never a path out of them.
RunName = Annotated[str, AfterValidator(_plain_folder_name)]


@dataclass
class GameConfig:
    """The `game` group: which game; each game's options extend it (Gongzhu has none). It lives
    here, below every game, so that a side game's options need none of the Gongzhu stack."""

    name: str = "gongzhu"  # which game: gongzhu | tiny_crew | fish


def at_most(bound: int, low: int = 1):
    """An int setting in low..bound: sizes that would build or run until killed are refused."""
    return Annotated[int, Field(ge=low, le=bound)]


def one_of(*choices):
    """A setting (str or int, the type of the choices) that must be one of `choices`."""

    def check(value):
        if value not in choices:
            raise ValueError(f"choose {' or '.join(str(c) for c in choices)}")
        return value

    return Annotated[type(choices[0]), AfterValidator(check)]


def check_bounds(settings, where: str):
    """`settings` (a dataclass instance) unchanged, or a ValueError naming the first bad setting
    as `where.path=value: reason`. Every float in it, declared or not, must be finite."""
    data = dataclasses.asdict(settings)
    _check_finite(data, where)
    try:
        _adapter(type(settings)).validate_python(data)
    except ValidationError as err:
        raise ValueError(_describe(err.errors()[0], where)) from None
    return settings


@cache
def _adapter(cls) -> TypeAdapter:
    return TypeAdapter(cls)


def _check_finite(value, path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{path}={value}: must be a finite number")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, _join(path, key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_finite(item, f"{path}[{i}]")


def _describe(error: dict, where: str) -> str:
    """One line of a pydantic error: the setting's dotted path, its value, what it must be."""
    path = where
    for part in error["loc"]:
        path = f"{path}[{part}]" if isinstance(part, int) else _join(path, part)
    if error["type"] == "value_error":  # a validator's or a __post_init__'s own message
        message = str(error["ctx"]["error"])
        if isinstance(error["input"], dict):  # a whole dataclass: its message names the setting
            return f"{path}: {message}"
    else:
        message = re.sub(r"^\w+ should", "must", error["msg"]).replace(" after validation", "")
    shown = repr(error["input"]) if isinstance(error["input"], str) else error["input"]
    return f"{path}={shown}: {message}"


def _join(path: str, key) -> str:
    return f"{path}.{key}" if path else str(key)
