"""`python evaluate.py game=tiny_crew`: exact win rates over all 34,650 deals of one setting.

Random play, the determinized search player, the search player improved by exact best
responses over the seats, and the open-hand bound; every figure is exact (no sampling error).
`cfr` and `mccfr` are reported as null until those learners are trained (issue 5 is open).
"""

from __future__ import annotations

import time

import numpy as np

from ..games.tiny_crew import fast
from ..games.tiny_crew.exact import Setting, TabularPolicy
from ..games.tiny_crew.rules import Params


def run_tiny_crew(cfg) -> dict:
    game = cfg.game
    if game.search_deals < 1:
        raise ValueError(f"game.search_deals must be >= 1, got {game.search_deals}")
    if game.deal_stride < 1:
        raise ValueError(f"game.deal_stride must be >= 1, got {game.deal_stride}")
    params = Params(leader=str(game.leader), t1_seat=int(game.t1), t2_seat=int(game.t2))
    setting = Setting(params, deals=None if game.deal_stride == 1
                      else np.arange(0, 34650, game.deal_stride))
    timings = {}

    def timed(name, fn):
        started = time.perf_counter()
        value = fn()
        timings[name] = time.perf_counter() - started
        if cfg.progress:
            print(f"  {name}: {value:.4f} ({timings[name]:.1f} s)", flush=True)
        return value

    result = {"deals": len(setting.deals), "deal_stride": game.deal_stride,
              "setting": {"leader": params.leader, "t1": params.t1_seat, "t2": params.t2_seat}}
    result["random"] = timed("random", lambda: setting.evaluate(TabularPolicy()))
    cache = fast.new_index()
    result["search"] = timed(
        "search", lambda: float(setting.search_values(game.search_deals, cache).mean()))
    search_policy = TabularPolicy(fast.new_index(), np.zeros((len(cache), 12)))
    fast.merge_onehot(search_policy.index, search_policy.probs, cache, np.arange(12), 0)
    steps = []
    improved = timed("search_improved", lambda: setting.improve(
        search_policy, max_rounds=game.improve_rounds,
        log=lambda seat, v: steps.append({"seat": seat, "win_rate": v}))[1][-1])
    result["search_improved"] = improved
    result["improvement_steps"] = steps
    result["open_hand_bound"] = timed("open_hand_bound", setting.open_hand_bound)
    result["cfr"] = None
    result["mccfr"] = None
    result["gap_to_bound"] = result["open_hand_bound"] - max(result["search"], improved)
    result["seconds"] = timings
    print(f"Tiny Crew, leader {params.leader}, T1 -> seat {params.t1_seat}, T2 -> seat "
          f"{params.t2_seat}: exact win rates over all {result['deals']} deals")
    for name in ("random", "search", "search_improved", "open_hand_bound"):
        print(f"  {name:16} {result[name]:.4f}")
    print("  cfr, mccfr       not trained yet (null)")
    return result
