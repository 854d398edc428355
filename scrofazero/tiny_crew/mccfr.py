"""OpenSpiel policies -> our exact tables: read OpenSpiel's Python external-sampling MCCFR
solver back into a TabularPolicy so that tiny_crew/exact.py evaluates it over all deals."""

from __future__ import annotations

import numpy as np

from scrofazero.games.tiny_crew.rules import NUM_CARDS
from scrofazero.tiny_crew.exact import TabularPolicy, key_position


def legal_from_key(key: int) -> list[int]:
    """The mover's legal cards at the information state `key` (fast.info_key layout)."""
    hand, _, trick = key_position(key)
    cards = [c for c in range(NUM_CARDS) if hand >> c & 1]
    if trick:
        follow = [c for c in cards if c // 3 == trick[0] // 3]
        if follow:
            return follow
    return cards


def mccfr_to_tabular(solver) -> TabularPolicy:
    """The average policy of an open_spiel.python.algorithms.external_sampling_mccfr solver
    (its arrays are over the legal actions in ascending order)."""
    # Lazy: scrofazero.openspiel needs the optional open_spiel extra.
    from scrofazero.openspiel.tiny_crew import key_from_info_string

    keys, rows = [], []
    for text, (_, avg) in solver._infostates.items():
        if "dealt" in text:
            continue  # no decisions while dealing
        key = key_from_info_string(text)
        legal = legal_from_key(key)
        row = np.zeros(NUM_CARDS)
        total = float(np.sum(avg))
        row[legal] = np.asarray(avg) / total if total > 0 else 1.0 / len(legal)
        keys.append(key)
        rows.append(row)
    policy = TabularPolicy()
    if keys:
        policy.set_rows(keys, np.array(rows))
    return policy
