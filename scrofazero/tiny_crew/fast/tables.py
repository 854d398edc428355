"""Tables from information-state key to row, kept in compiled code: policies hold millions of
information states."""

from __future__ import annotations

from numba import njit, types
from numba.typed import Dict


def new_index():
    """An empty numba dict from information-state key to table row."""
    return Dict.empty(key_type=types.int64, value_type=types.int64)


@njit(cache=True)
def append_index(target, source, start):
    """target[key] = start + row for every (key, row) of source."""
    for k, v in source.items():
        target[k] = start + v


@njit(cache=True)
def count_missing(index, other):
    n = 0
    for k in other.keys():  # noqa: SIM118 (numba-compiled)
        if k not in index:
            n += 1
    return n


@njit(cache=True)
def merge_onehot(index, probs, br_index, br_card, start):
    """Set the rows of br_index's keys in (index, probs) to one-hot br_card, adding missing
    keys at rows start, start + 1, ... (probs must already have room)."""
    nxt = start
    for k, v in br_index.items():
        if k in index:
            row = index[k]
        else:
            row = nxt
            index[k] = row
            nxt += 1
        probs[row, :] = 0.0
        probs[row, br_card[v]] = 1.0


@njit(cache=True)
def copy_index(index):
    out = Dict.empty(key_type=types.int64, value_type=types.int64)
    for k, v in index.items():
        out[k] = v
    return out
