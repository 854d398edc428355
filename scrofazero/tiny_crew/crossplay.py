"""Cross-play: a joint policy whose seats come from different policies (are conventions
brittle?). A key's seat follows from its first leader and plays (trick winners)."""

from __future__ import annotations

import numpy as np

from scrofazero.games.tiny_crew.rules import NUM_SEATS
from scrofazero.tiny_crew.exact import TabularPolicy, key_position


def seat_of_key(key: int) -> int:
    """The seat to move at information state `key` (fast.info_key layout)."""
    _, leader, trick = key_position(key)
    return (leader + len(trick)) % NUM_SEATS


def mix(policies) -> TabularPolicy:
    """Seat s plays policies[s] (3 TabularPolicy); returns the joint table."""
    if len(policies) != NUM_SEATS:
        raise ValueError(f"mix needs one policy per seat, got {len(policies)}")
    keys_out, rows_out = [], []
    for seat, policy in enumerate(policies):
        keys, probs = policy.to_arrays()
        mine = np.array([seat_of_key(k) == seat for k in keys.tolist()], dtype=bool)
        keys_out.append(keys[mine])
        rows_out.append(probs[mine])
    deals = {p.fallback_deals for p in policies}
    if len(deals) != 1:
        raise ValueError(f"mixed policies must share fallback_deals, got {sorted(deals)}")
    out = TabularPolicy(fallback_deals=deals.pop(),
                        salts=np.array([p.salts[s] for s, p in enumerate(policies)]))
    keys = np.concatenate(keys_out)
    if len(keys):
        out.set_rows(keys, np.concatenate(rows_out))
    return out
