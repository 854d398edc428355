"""Random-play speed of the Gongzhu engines against OpenSpiel Hearts, on one core.

Games per second for: our single-game GongzhuState, the batched LockstepRandomGames, OpenSpiel
Hearts from a Python loop and from its C++ evaluate_bots loop, and Mr. Greed (seats 0, 2) against
Mr. Random (1, 3). Writes ratios against the targets (single >= 1x OpenSpiel Python, batched
>= 10x OpenSpiel C++, Mr. Greed >= 5x the original's 10 games/s).
Usage: python benchmarks/engine.py --json PATH [--seconds 3] [--batch 16384] [--no-pin]
"""

from __future__ import annotations

import os

from single_core import pin_one_core  # sets the thread variables before numpy is imported

import argparse  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.games.gongzhu.rules import GongzhuState  # noqa: E402

from lockstep_random import LockstepRandomGames  # noqa: E402  (beside this script)

ORIGINAL_GREED_GAMES_PER_S = 10.0  # the original Mr. Greed (anchor from the project brief)
TARGETS = {"single_vs_openspiel_python": 1.0, "batched_vs_openspiel_cpp": 10.0,
           "greed_vs_original_10_per_s": 5.0}


def rate(play: Callable[[int], int], seconds: float) -> float:
    """Games per second: call play(i) (returns games played) until `seconds` have passed."""
    games, i, start = 0, 0, time.perf_counter()
    while True:
        games += play(i)
        i += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return games / elapsed


def single_games(seconds: float) -> float:
    rng = random.Random(0)

    def play(i: int) -> int:
        state = GongzhuState(seed=i)  # a fresh random deal each game
        while not state.is_terminal():
            state.apply(rng.choice(state.legal_actions()))
        return 1

    return rate(play, seconds)


def batched_games(seconds: float, batch: int) -> float:
    rng = np.random.default_rng(0)

    def play(i: int) -> int:
        games = LockstepRandomGames.random(batch, rng)  # deal generation is included in the time
        for _ in range(52):
            games.apply(games.random_actions(rng))
        return batch

    play(0)  # warm-up: first-touch allocations
    return rate(play, seconds)


def openspiel_python_games(pyspiel, seconds: float) -> float:
    game = pyspiel.load_game("hearts")
    rng = random.Random(0)

    def play(i: int) -> int:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
        return 1

    return rate(play, seconds)


def openspiel_cpp_games(pyspiel, seconds: float, reuse_bots: bool) -> float:
    """evaluate_bots per game; bots built per game (the brief's loop) or once (reuse_bots)."""
    game = pyspiel.load_game("hearts")
    bots = [pyspiel.make_uniform_random_bot(p, 1) for p in range(4)]

    def play(i: int) -> int:
        players = bots if reuse_bots else [pyspiel.make_uniform_random_bot(p, i) for p in range(4)]
        pyspiel.evaluate_bots(game.new_initial_state(), players, i)
        return 1

    return rate(play, seconds)


def greed_games(seconds: float) -> float:
    from scrofazero.agents import make_agent

    greed, rand = make_agent("greed"), make_agent("random")
    seats = [greed, rand, greed, rand]
    rng = np.random.default_rng(0)

    def play(i: int) -> int:
        state = GongzhuState(seed=i)
        while not state.is_terminal():
            seat = state.current_player
            state.apply(seats[seat].act(state.view(seat), rng))
        return 1

    play(10**6)  # warm-up on another deal: numba compilation and table caches
    return rate(play, seconds)



def guarded(results: dict, notes: dict, key: str, measure: Callable[[], float]) -> None:
    try:
        results[key] = measure()
    except Exception as err:  # record why a figure is missing instead of stopping the run
        results[key] = None
        notes[key] = f"{type(err).__name__}: {err}"
        print(f"{key}: not measured ({notes[key]})", file=sys.stderr)
        traceback.print_exc()


def ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the results to this path")
    parser.add_argument("--seconds", type=float, default=3.0, help="timing per measurement")
    parser.add_argument("--batch", type=int, default=16384, help="games per LockstepRandomGames")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    args = parser.parse_args()
    cpu = None if args.no_pin else pin_one_core()
    results: dict = {}
    notes: dict = {}
    secs = args.seconds
    guarded(results, notes, "single_games_per_s", lambda: single_games(secs))
    guarded(results, notes, "batched_games_per_s", lambda: batched_games(secs, args.batch))
    try:
        import pyspiel
    except ImportError as err:
        pyspiel = None
        notes["openspiel"] = f"open_spiel is not installed: {err}"
        print(notes["openspiel"], file=sys.stderr)
    os_keys = ("openspiel_hearts_python_games_per_s", "openspiel_hearts_cpp_games_per_s",
               "openspiel_hearts_cpp_reused_bots_games_per_s")
    if pyspiel is None:
        results.update(dict.fromkeys(os_keys))
    else:
        guarded(results, notes, os_keys[0], lambda: openspiel_python_games(pyspiel, secs))
        guarded(results, notes, os_keys[1], lambda: openspiel_cpp_games(pyspiel, secs, False))
        guarded(results, notes, os_keys[2], lambda: openspiel_cpp_games(pyspiel, secs, True))
    guarded(results, notes, "greed_games_per_s", lambda: greed_games(secs))
    ratios = {
        "single_vs_openspiel_python": ratio(results["single_games_per_s"], results[os_keys[0]]),
        "batched_vs_openspiel_cpp": ratio(results["batched_games_per_s"], results[os_keys[1]]),
        "batched_vs_openspiel_cpp_reused_bots": ratio(results["batched_games_per_s"],
                                                      results[os_keys[2]]),
        "greed_vs_original_10_per_s": ratio(results["greed_games_per_s"],
                                            ORIGINAL_GREED_GAMES_PER_S),
    }
    report = {
        **results, **ratios,
        "targets": TARGETS,
        "meets_targets": {k: (ratios[k] >= v if ratios[k] is not None else None)
                          for k, v in TARGETS.items()},
        "batched_batch_size": args.batch,
        "batched_includes_deal_generation": True,
        "seconds_per_measurement": secs,
        "notes": notes,
        "machine": machine_info(cpu),
    }
    print_table(report)
    if args.json:
        write_json_atomic(args.json, report)
        print(f"wrote {args.json}")


def machine_info(cpu: int | None) -> dict:
    info = {
        "python": platform.python_version(), "numpy": np.__version__,
        "cpu_count": os.cpu_count(), "pinned_cpu": cpu, "processor": platform.processor(),
        "platform": platform.platform(),
    }
    try:
        from importlib.metadata import version

        info["open_spiel"] = version("open_spiel")
    except Exception:
        info["open_spiel"] = None
    return info


def print_table(report: dict) -> None:
    def fmt(x, spec):
        return format(x, spec) if x is not None else "n/a"

    rows = [
        ("single GongzhuState", "single_games_per_s", "single_vs_openspiel_python", "OS python"),
        ("batched LockstepRandomGames", "batched_games_per_s", "batched_vs_openspiel_cpp",
         "OS C++"),
        ("OpenSpiel Hearts, Python loop", "openspiel_hearts_python_games_per_s", None, ""),
        ("OpenSpiel Hearts, evaluate_bots", "openspiel_hearts_cpp_games_per_s", None, ""),
        ("  same, bots built once", "openspiel_hearts_cpp_reused_bots_games_per_s",
         "batched_vs_openspiel_cpp_reused_bots", "batched"),
        ("Mr. Greed vs Mr. Random", "greed_games_per_s", "greed_vs_original_10_per_s", "orig 10/s"),
    ]
    print(f"{'engine':34s} {'games/s':>12} {'ratio':>9}  {'vs':10s} {'target':>7}")
    for label, key, rkey, versus in rows:
        r = report.get(rkey) if rkey else None
        target = TARGETS.get(rkey, "")
        print(f"{label:34s} {fmt(report[key], '12,.0f')} {fmt(r, '9.1f') if rkey else '':>9}"
              f"  {versus:10s} {target!s:>7}")
    m = report["machine"]
    print(f"python {m['python']}, numpy {m['numpy']}, {m['cpu_count']} CPUs, pinned to "
          f"{m['pinned_cpu']}; batch {report['batched_batch_size']} (deals included)")


if __name__ == "__main__":
    main()
