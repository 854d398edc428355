"""Tiny Crew learners at a bounded budget, evaluated exactly over all 34,650 deals.

Chance-sampled CFR+ (tiny_crew/cfr.py) for --cfr-iterations sampled deals and OpenSpiel's
Python external-sampling MCCFR for --mccfr-iterations iterations, against uniform random play
and the open-hand bound, in one run. Reports each policy's exact win rate (average and, for CFR,
current policy), the number of information states it stored and the seconds it took; the
growth of the CFR tables is why these budgets are small (see docs/tiny_crew.md).
Usage: python benchmarks/tiny_crew_learning.py --json PATH [--cfr-iterations 3000]
       [--mccfr-iterations 2000]
"""

from __future__ import annotations

import argparse
import time

from scrofazero.atomic import write_json_atomic
from scrofazero.tiny_crew.cfr import CFRTrainer
from scrofazero.tiny_crew.exact import Setting, TabularPolicy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True)
    parser.add_argument("--cfr-iterations", type=int, default=3000)
    parser.add_argument("--mccfr-iterations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    setting = Setting()
    result = {"deals": len(setting.deals), "random": setting.evaluate(TabularPolicy()),
              "open_hand_bound": setting.open_hand_bound()}

    trainer = CFRTrainer(setting, seed=args.seed, capacity=1 << 23)
    started = time.perf_counter()
    trainer.run(args.cfr_iterations)
    seconds = time.perf_counter() - started
    result["cfr"] = {"iterations": trainer.iterations, "states": len(trainer.index),
                     "seconds": seconds,
                     "average_policy": setting.evaluate(trainer.average_policy()),
                     "current_policy": setting.evaluate(trainer.current_policy())}
    del trainer
    print(f"CFR+ ({args.cfr_iterations} sampled deals, {result['cfr']['states']:,} states, "
          f"{seconds:.0f} s): average {result['cfr']['average_policy']:.4f}, current "
          f"{result['cfr']['current_policy']:.4f}")

    import pyspiel
    from open_spiel.python.algorithms import external_sampling_mccfr as es

    import scrofazero.openspiel  # noqa: F401  (registers python_tiny_crew)
    from scrofazero.tiny_crew.mccfr import mccfr_to_tabular

    solver = es.ExternalSamplingSolver(pyspiel.load_game("python_tiny_crew"),
                                       es.AverageType.SIMPLE)
    started = time.perf_counter()
    for _ in range(args.mccfr_iterations):
        solver.iteration()
    seconds = time.perf_counter() - started
    policy = mccfr_to_tabular(solver)
    result["mccfr"] = {"iterations": args.mccfr_iterations, "states": len(policy),
                       "seconds": seconds, "average_policy": setting.evaluate(policy)}
    print(f"OpenSpiel ES-MCCFR ({args.mccfr_iterations} iterations, {len(policy):,} states, "
          f"{seconds:.0f} s): average {result['mccfr']['average_policy']:.4f}")
    print(f"random {result['random']:.4f}, open-hand bound {result['open_hand_bound']:.4f}")
    print(f"wrote {write_json_atomic(args.json, result)}")


if __name__ == "__main__":
    main()
