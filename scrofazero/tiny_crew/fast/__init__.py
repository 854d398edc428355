"""Compiled (numba) Tiny Crew core over all 34,650 deals, one module per algorithm: the state
row every algorithm steps (state), the open-hand bound (bound), the determinized search player
(search), the exact value of a tabular policy (policy), chance-sampled CFR (cfr), the exact best
response of one seat (best_response) and the key -> row tables they share (tables). Its callers
(exact.py, cfr.py) and the tests name the functions as `fast.NAME`, whichever module holds them.
"""

from scrofazero.tiny_crew.fast.best_response import best_cards, br_level
from scrofazero.tiny_crew.fast.bound import open_hand_values, open_win
from scrofazero.tiny_crew.fast.cfr import cfr_run
from scrofazero.tiny_crew.fast.policy import fallback_card, policy_values
from scrofazero.tiny_crew.fast.search import search_choice
from scrofazero.tiny_crew.fast.state import (
    MAX_DEPTH,
    ROW,
    info_key,
    is_terminal,
    legal_mask,
    mover,
    popcount,
    start_row,
    step,
    won,
)
from scrofazero.tiny_crew.fast.tables import (
    append_index,
    copy_index,
    count_missing,
    merge_onehot,
    new_index,
)

__all__ = [
    "MAX_DEPTH", "ROW", "append_index", "best_cards", "br_level", "cfr_run", "copy_index",
    "count_missing", "fallback_card", "info_key", "is_terminal", "legal_mask", "merge_onehot",
    "mover", "new_index", "open_hand_values", "open_win", "policy_values", "popcount",
    "search_choice", "start_row", "step", "won",
]
