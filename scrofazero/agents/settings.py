"""Checks shared by the players' settings classes, and the error that names a bad setting.

A bad setting raises a plain ValueError (what the players raised before the registry, so callers
and worker processes see the same error) that also carries `setting` (its name) and `problem`,
so that a caller can name the setting as its user spelled it (`renamed`).
"""

from __future__ import annotations

import numbers


def setting_error(setting: str, problem: str) -> ValueError:
    """ValueError('<setting> <problem>') with the two parts kept as attributes."""
    err = ValueError(f"{setting} {problem}")
    err.setting, err.problem = setting, problem
    return err


def renamed(err: ValueError, spelled: dict[str, str]) -> ValueError:
    """`err` again with its setting named as in `spelled` (setting -> the user's name); an error
    that names no setting, or one not in `spelled`, as it is."""
    setting = getattr(err, "setting", None)
    if setting not in spelled:
        return err
    return setting_error(spelled[setting], err.problem)


def check_positive(setting: str, value) -> int:
    """`value` as an int; a setting error unless it is an integer >= 1 (a bool is not)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise setting_error(setting, f"must be a positive integer, got {value!r}")
    return int(value)


def check_choice(setting: str, value, choices: tuple[str, ...]) -> str:
    """`value`; a setting error unless it is one of `choices`."""
    if value not in choices:
        raise setting_error(setting, f"must be one of {', '.join(choices)}, got {value!r}")
    return value
