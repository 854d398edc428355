"""Checks shared by the players' settings classes. A bad setting raises the error that names it
(scrofazero/settings.py setting_error), so that a caller can name the setting as its user
spelled it (`renamed`).
"""

from __future__ import annotations

import numbers

from scrofazero.settings import renamed, setting_error

__all__ = ["check_choice", "check_positive", "renamed", "setting_error"]


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
