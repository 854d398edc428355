"""`python evaluate.py game=tiny_crew`: exact win rates over all 34,650 deals of one setting.

Random play, the determinized search player, the search player improved by exact best
responses over the seats, and the open-hand bound; every figure is exact (no sampling error).
`cfr` and `mccfr` evaluate the policy files given as game.cfr_policy / game.mccfr_policy
(written by `python train.py game=tiny_crew game.method=...`), null without them.
"""

from __future__ import annotations

import time

from scrofazero.tiny_crew.crossplay import mix
from scrofazero.tiny_crew.exact import Setting, TabularPolicy, setting_from_config
from scrofazero.tiny_crew.policy_file import load_policy


def evaluate_tiny_crew(cfg) -> dict:
    game = cfg.game
    if game.search_deals < 1:
        raise ValueError(f"game.search_deals must be >= 1, got {game.search_deals}")
    setting = setting_from_config(game)
    params = setting.params
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
    search_policy = setting.search_policy(game.search_deals)
    result["search"] = timed("search", lambda: setting.evaluate(search_policy))
    steps = []
    made = {}

    def improve() -> float:
        made["policy"], history = setting.improve(
            search_policy, max_rounds=game.improve_rounds,
            log=lambda seat, v: steps.append({"seat": seat, "win_rate": v}))
        return history[-1]

    improved = timed("search_improved", improve)
    improved_policy = made["policy"]
    result["search_improved"] = improved
    result["improvement_steps"] = steps
    if game.crossplay:
        result["crossplay"] = _crossplay(setting, game, search_policy, improved_policy, timed)
    result["open_hand_bound"] = timed("open_hand_bound", setting.open_hand_bound)
    if game.all_bounds:
        result["open_hand_bounds"] = {
            f"{leader} T1->{t1} T2->{t2}":
                setting_from_config(game, leader=leader, t1=t1, t2=t2).open_hand_bound()
            for leader in ("seat0", "captain") for t1 in range(3) for t2 in range(3)
        }
    for name in ("cfr", "mccfr"):
        path = getattr(game, f"{name}_policy")
        if path:
            policy = load_policy(path)
            result[name] = timed(name, lambda p=policy: setting.evaluate(p))
            if game.improve_learned > 0:
                steps = result[f"{name}_improvement_steps"] = []
                result[f"{name}_improved"] = timed(
                    f"{name}_improved",
                    lambda p=policy, s=steps: _improved(setting, p, game.improve_learned, s))
        else:
            result[name] = None
    result["gap_to_bound"] = result["open_hand_bound"] - max(result["search"], improved)
    result["seconds"] = timings
    _print_report(result, params)
    return result


def _print_report(result: dict, params) -> None:
    print(f"Tiny Crew, leader {params.leader}, T1 -> seat {params.t1_seat}, T2 -> seat "
          f"{params.t2_seat}: exact win rates over all {result['deals']} deals")
    for name in ("random", "search", "search_improved", "open_hand_bound"):
        print(f"  {name:16} {result[name]:.4f}")
    cross = result.get("crossplay")
    if cross:
        print(f"  search, seed 1   {cross['search_seed1']:.4f}")
        print("  cross-play of the improved policies A (seed 0) and B (seed 1), seat s playing "
              "pattern[s]:")
        print("    " + ", ".join(f"{k} {v:.4f}" for k, v in cross.items() if k != "search_seed1"))
    for name, value in result.get("open_hand_bounds", {}).items():
        print(f"  open-hand bound, {name}: {value:.4f}")
    for name in ("cfr", "mccfr"):
        shown = f"{result[name]:.4f}" if result[name] is not None else \
            f"null (train: python train.py game=tiny_crew game.method={name})"
        print(f"  {name:16} {shown}")
        if f"{name}_improved" in result:
            print(f"  {name + '_improved':16} {result[name + '_improved']:.4f}")


def _improved(setting: Setting, policy: TabularPolicy, rounds: int, steps: list) -> float:
    """Exact best responses over the seats applied to a learned policy, the same improvement
    the search player gets, so that the two compare on equal terms; appends each accepted step
    to `steps`."""
    _, history = setting.improve(policy, max_rounds=rounds,
                                 log=lambda seat, v: steps.append({"seat": seat, "win_rate": v}))
    return history[-1]


def _crossplay(setting: Setting, game, search_a, improved_a, timed) -> dict:
    """Seed 1's search player, improved the same way, cross-played with seed 0's: every
    assignment of the two improved policies to the three seats (are conventions brittle?)."""

    search_b = setting.search_policy(game.search_deals, seed=1)
    improved_b, _ = setting.improve(search_b, max_rounds=game.improve_rounds)
    pair = {"A": improved_a, "B": improved_b}
    out = {"search_seed1": setting.evaluate(search_b)}
    for pattern in ("AAA", "BBB", "ABB", "BAB", "BBA", "BAA", "ABA", "AAB"):
        out[pattern] = timed(f"crossplay {pattern}",
                             lambda p=pattern: setting.evaluate(mix([pair[c] for c in p])))
    return out
