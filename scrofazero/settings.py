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
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast, overload

from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import AfterValidator, Field, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

SettingsT = TypeVar("SettingsT", bound="DataclassInstance")

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


class SettingError(ValueError):
    """A ValueError naming a setting: '<setting> <problem>', the two parts kept as attributes."""

    setting: str
    problem: str


def setting_error(setting: str, problem: str) -> SettingError:
    """ValueError('<setting> <problem>') with the two parts kept as attributes."""
    err = SettingError(f"{setting} {problem}")
    err.setting, err.problem = setting, problem
    return err


def renamed(err: ValueError, spelled: dict[str, str]) -> ValueError:
    """`err` again with its setting named as in `spelled` (setting -> the user's name; a setting
    of a group, `sampling.method`, by its group's name); an error that names no setting, or one
    not in `spelled`, as it is."""
    setting = getattr(err, "setting", None)
    if not isinstance(setting, str) or not isinstance(err, SettingError):
        return err
    head, dot, rest = setting.partition(".")
    if setting in spelled:
        return setting_error(spelled[setting], err.problem)
    if dot and head in spelled:
        return setting_error(f"{spelled[head]}.{rest}", err.problem)
    return err


def at_most(bound: int, low: int = 1) -> Any:
    """An int setting in low..bound: sizes that would build or run until killed are refused."""
    return Annotated[int, Field(ge=low, le=bound)]


def choice(*choices: str | int) -> AfterValidator:
    """The check of a setting that must be one of `choices`, as the metadata of its Annotated
    type: `Annotated[str, choice("ucb", "puct")]` (a type checker reads the str)."""

    def check(value: str | int) -> str | int:
        if value not in choices:
            raise ValueError(f"choose {' or '.join(str(c) for c in choices)}")
        return value

    return AfterValidator(check)


def one_of(*choices: str | int) -> Any:
    """A setting (str or int, the type of the choices) that must be one of `choices`: the
    Annotated type of `choice` built by a call (the modules a type checker reads strictly spell
    `Annotated[str, choice(...)]` instead)."""
    return Annotated[type(choices[0]), choice(*choices)]


@overload
def check_bounds(settings: SettingsT, where: str) -> SettingsT: ...
@overload
def check_bounds(settings: Any, where: str) -> Any: ...


def check_bounds(settings: Any, where: str) -> Any:
    """`settings` (a dataclass instance) unchanged, or a ValueError naming the first bad setting
    as `where.path=value: reason`. Every float in it, declared or not, must be finite."""
    data = dataclasses.asdict(settings)
    _check_finite(data, where)
    cls: type = type(settings)  # (as type[Any], mypy would not see that it is hashable)
    try:
        _adapter(cls).validate_python(data)
    except ValidationError as err:
        raise ValueError(_describe(err.errors()[0], where)) from None
    return settings


@cache
def _adapter(cls: type) -> TypeAdapter[Any]:
    return TypeAdapter(cls)


def _check_finite(value: object, path: str) -> None:
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{path}={value}: must be a finite number")
    if isinstance(value, dict):
        for key, item in value.items():
            _check_finite(item, _join(path, key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_finite(item, f"{path}[{i}]")


def _describe(error: ErrorDetails, where: str) -> str:
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


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def settings_from_argv(cls: type[SettingsT], argv: list[str]) -> SettingsT:
    """A settings dataclass from `key=value` arguments, spelled as train.py's and evaluate.py's
    (`games=512`, `data=[a,b]`, `mix='greed:greed=1'`), then checked by its declared bounds:
    the command-line form of the module runners (`python -m scrofazero.train.hidden_games`).
    ValueError naming the first bad or unknown setting.

    Args:
        cls: the settings dataclass; fields without a default must be given.
        argv: the arguments after the module's name.
    """
    for arg in argv:
        if "=" not in arg:
            raise ValueError(f"argument {arg!r}: give settings as key=value (the settings are "
                             f"{', '.join(f.name for f in dataclasses.fields(cls))})")
    try:
        composed = OmegaConf.merge(OmegaConf.structured(cls), OmegaConf.from_dotlist(argv))
        # a structured config's object is an instance of its dataclass (OmegaConf's own type
        # is the union of everything a config may hold)
        settings = cast(SettingsT, OmegaConf.to_object(composed))
    except OmegaConfBaseException as err:
        raise ValueError(" ".join(str(err).split("\n")[0].split())) from None
    return check_bounds(settings, "")


def run_module(cls: type[SettingsT], job: Callable[[SettingsT], object],
               argv: list[str] | None = None) -> None:
    """A module runner's main: job(settings_from_argv(cls, argv)); a bad setting, a missing or
    damaged file ends the command with one line on stderr and exit status 2."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        job(settings_from_argv(cls, argv))
    except (ValueError, OSError) as err:
        print(f"error: {' '.join(str(err).split())}", file=sys.stderr)
        sys.exit(2)
