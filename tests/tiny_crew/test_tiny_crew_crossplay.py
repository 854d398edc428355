"""Cross-play of Tiny Crew policies (scrofazero/tiny_crew/crossplay.py) and the search
fallback of tabular policies (exact.TabularPolicy).

Invariants: the seat of an information-state key is recovered from its plays; a mix that takes
every seat from the same policy has that policy's value; mixing a best-response-improved table
(seats 0, 2) with a differently seeded search player (seat 1) gives exactly the value of a slow
game-by-game replay that asks each seat's own table or search; the search fallback makes
policies total (a seat reaching a state its table lacks plays the search player, not
uniformly); mixes with different fallback sizes are refused.
"""

import numpy as np
import pytest

from scrofazero.games.tiny_crew.rules import Params, TinyCrewState
from scrofazero.tiny_crew import fast
from scrofazero.tiny_crew.crossplay import mix, seat_of_key
from scrofazero.tiny_crew.exact import Setting


def replay_value(setting, seat_policy):
    """Slow reference: seat_policy(seat) -> (table dict key -> card, salt, deals)."""
    wins = 0.0
    for owners in setting.deals:
        s = TinyCrewState(owners)
        row = np.zeros(fast.ROW, dtype=np.int64)
        fast.start_row(owners, 0, 0, 1, row)
        while not s.is_terminal():
            legal = s.legal_actions()
            table, salt, deals = seat_policy(s.current_player)
            key = int(fast.info_key(row))
            if len(legal) == 1:
                c = legal[0]
            elif key in table:
                c = table[key]
            else:
                c = int(fast.search_choice(row, deals, (key + salt * 1000003) % 2147483647))
            s.apply(c)
            nxt = np.zeros_like(row)
            fast.step(row, c, nxt)
            row = nxt
        wins += s.returns()[0]
    return wins / len(setting.deals)


def test_seat_of_key_matches_replay():
    rng = np.random.default_rng(0)
    for owners in Setting().deals[::5000]:
        s = TinyCrewState(owners)
        row = np.zeros(fast.ROW, dtype=np.int64)
        fast.start_row(owners, 0, 0, 1, row)
        while not s.is_terminal():
            assert seat_of_key(int(fast.info_key(row))) == s.current_player
            c = int(rng.choice(s.legal_actions()))
            s.apply(c)
            nxt = np.zeros_like(row)
            fast.step(row, c, nxt)
            row = nxt


def test_mixed_values_match_slow_replay():
    setting = Setting(Params(), deals=np.arange(0, 34650, 900))
    a = setting.search_policy(6, seed=0)
    b = setting.search_policy(6, seed=1)
    assert setting.evaluate(mix([a, a, a])) == pytest.approx(setting.evaluate(a))
    improved = setting.best_response(a, 0)
    keys, probs = improved.to_arrays()
    table = dict(zip(keys.tolist(), probs.argmax(axis=1).tolist()))
    assert table  # the best response wrote rows for seat 0
    want = replay_value(setting, lambda seat: ({}, 1, 6) if seat == 1 else (table, 0, 6))
    assert setting.evaluate(mix([improved, b, improved])) == pytest.approx(want)
    # Same seeds everywhere: the search player alone.
    assert setting.evaluate(a) == pytest.approx(replay_value(setting, lambda s: ({}, 0, 6)))
    with pytest.raises(ValueError, match="fallback"):
        mix([a, setting.search_policy(4), a])
