"""docs/play.md's tables of settings against the config.

Invariant: every setting a table row of docs/play.md names with a number or a boolean as its
default (a row that begins | `key` | `value` |) has that default in PlayConfig.
"""

from __future__ import annotations

import re
from pathlib import Path

from scrofazero.serve.common.config import PlayConfig

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| `([a-z_]+)` \| `([^`]+)` \|", re.MULTILINE)


def test_the_documented_defaults_are_the_configs():
    defaults = vars(PlayConfig())
    checked = 0
    for key, shown in ROW.findall((ROOT / "docs" / "play.md").read_text()):
        if key not in defaults or isinstance(defaults[key], (list, str)):
            continue
        value = defaults[key]
        documented = shown == "true" if isinstance(value, bool) else float(shown)
        assert documented == value, (key, shown, value)
        checked += 1
    assert checked >= 20  # the Options and Limits tables
