"""Mr. Greed speed on one core: the numba agent against the pure-Python reference.

Plays Mr. Greed (seats 0, 2) against Mr. Random (1, 3) on the same seeded deals with the fast
agent (scrofazero/agents/mr_greed.py), the same agent with numba switched off (its kernel run by
the Python interpreter, in a subprocess) and the plain reference (tests/helpers/greed_reference.py,
loaded by path); reports games/s of each, the ratios to the fast agent and to the original's 10
games/s, and whether all played the very same cards on the shared games (they must).
Usage: python benchmarks/greed.py --json PATH [--games 300] [--ref-games 4] [--no-jit-games 20]
       [--samples 20] [--no-pin]
"""

from __future__ import annotations

import os

from single_core import pin_one_core  # sets the thread variables before numpy is imported

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402

from scrofazero.agents.mr_greed import MrGreed  # noqa: E402
from scrofazero.agents.random_agent import RandomAgent  # noqa: E402
from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.games.gongzhu.rules import GongzhuState  # noqa: E402

ORIGINAL_GAMES_PER_S = 10.0  # the original Mr. Greed (docs/rules.md section 15)
TARGET_RATIO = 5.0  # project target: at least 5x the original
REFERENCE_PATH = Path(__file__).resolve().parents[1] / "tests" / "helpers" / "greed_reference.py"


def load_reference():
    """The tests/helpers/greed_reference.py module, imported by path (tests/ is not a package)."""
    spec = importlib.util.spec_from_file_location("greed_reference", REFERENCE_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def play(greed, game: int) -> tuple[list[tuple[int, int]], int]:
    """One seeded game, Greed at seats 0 and 2: (history, greed decisions taken)."""
    state = GongzhuState(seed=game, leader=game % 4)
    agents = [greed, RandomAgent(), greed, RandomAgent()]
    rngs = [np.random.default_rng([game, seat]) for seat in range(4)]
    decisions = 0
    while not state.is_terminal():
        seat = state.current_player
        state.apply(agents[seat].act(state.view(seat), rngs[seat]))
        decisions += seat % 2 == 0
    return state.history, decisions


def measure(greed, games: int) -> dict:
    """Games/s over `games` seeded games; histories kept to compare agents."""
    start = time.perf_counter()
    histories, decisions = [], 0
    for game in range(games):
        history, n = play(greed, game)
        histories.append(history)
        decisions += n
    seconds = time.perf_counter() - start
    return {"games": games, "seconds": seconds, "games_per_s": games / seconds,
            "ms_per_greed_decision": 1000 * seconds / decisions, "histories": histories}


def measure_without_jit(games: int, samples: int) -> dict:
    """The fast agent's exact code with NUMBA_DISABLE_JIT=1, in a fresh interpreter."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    out = subprocess.run(
        [sys.executable, __file__, "--interpreted-only", "--games", str(games),
         "--samples", str(samples), "--no-pin"],
        env=env, check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures to this JSON file")
    parser.add_argument("--games", type=int, default=300, help="games for the fast agent")
    parser.add_argument("--ref-games", type=int, default=4, help="games for the reference")
    parser.add_argument("--no-jit-games", type=int, default=20,
                        help="games for the agent with numba disabled")
    parser.add_argument("--samples", type=int, default=20, help="sampled deals per decision")
    parser.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    parser.add_argument("--interpreted-only", action="store_true",
                        help="internal: print one JSON measurement (run with numba disabled)")
    args = parser.parse_args()
    if min(args.games, args.ref_games, args.no_jit_games, args.samples) < 1:
        parser.error("--games, --ref-games, --no-jit-games and --samples must be positive")
    cpu = None if args.no_pin else pin_one_core()
    if args.interpreted_only:
        print(json.dumps(measure(MrGreed(args.samples), args.games)))
        return

    start = time.perf_counter()
    play(MrGreed(args.samples), 10**6)  # numba compile or cache load, not timed below
    warmup_s = time.perf_counter() - start
    fast = measure(MrGreed(args.samples), args.games)
    reference = measure(load_reference().ReferenceGreed(args.samples), args.ref_games)
    no_jit = measure_without_jit(args.no_jit_games, args.samples)
    shared = min(args.games, args.ref_games, args.no_jit_games)
    as_lists = [[list(move) for move in h] for h in fast["histories"][:shared]]
    same = (fast["histories"][:shared] == reference["histories"][:shared]
            and as_lists == no_jit["histories"][:shared])
    for result in (fast, reference, no_jit):
        del result["histories"]

    report = {
        "fast": fast,
        "reference": reference,
        "no_jit": no_jit,
        "fast_over_reference": fast["games_per_s"] / reference["games_per_s"],
        "fast_over_no_jit": fast["games_per_s"] / no_jit["games_per_s"],
        "original_games_per_s": ORIGINAL_GAMES_PER_S,
        "fast_vs_original": fast["games_per_s"] / ORIGINAL_GAMES_PER_S,
        "reference_vs_original": reference["games_per_s"] / ORIGINAL_GAMES_PER_S,
        "no_jit_vs_original": no_jit["games_per_s"] / ORIGINAL_GAMES_PER_S,
        "target_vs_original": TARGET_RATIO,
        "meets_target": fast["games_per_s"] >= TARGET_RATIO * ORIGINAL_GAMES_PER_S,
        "same_moves_on_shared_games": same,
        "shared_games": shared,
        "warmup_s": warmup_s,
        "num_samples": args.samples,
        "machine": {"python": sys.version.split()[0], "numpy": np.__version__,
                    "numba": numba.__version__, "cpu_count": os.cpu_count(),
                    "pinned_cpu": cpu, "processor": platform.processor() or platform.machine()},
    }
    print(f"Mr. Greed vs Mr. Random, {args.samples} samples, one core (pinned to {cpu}):")
    for name in ("fast", "no_jit", "reference"):
        r = report[name]
        print(f"  {name:9s} {r['games_per_s']:9.2f} games/s  {r['ms_per_greed_decision']:8.3f} "
              f"ms/decision  ({r['games']} games, {r['seconds']:.1f} s)  "
              f"{r['games_per_s'] / ORIGINAL_GAMES_PER_S:6.2f}x the original 10 games/s")
    print(f"  fast / no_jit = {report['fast_over_no_jit']:.0f}x, fast / reference = "
          f"{report['fast_over_reference']:.0f}x; target "
          f">= {TARGET_RATIO:.0f}x original: {'met' if report['meets_target'] else 'NOT met'}; "
          f"same moves on {shared} shared games: {same}; warm-up {warmup_s:.1f} s")
    if args.json:
        write_json_atomic(args.json, report)
    if not same:
        sys.exit("fast and reference agents played different cards")


if __name__ == "__main__":
    main()
