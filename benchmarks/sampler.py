"""Speed of the uniform hidden-hand sampler (scrofazero/sampling/uniform.py), single core.

Times sample_owners in ms per deal for batches of 20 (Mr. Greed's N) and 1000 on mid-game views
with and without voids among the other seats, next to the original's 0.18 ms per deal.
"cold" clears the table cache before every call (a new position each decision), "warm" does not.
Usage: python benchmarks/sampler.py [--json PATH] [--views 40] [--repeats 5]
"""

from __future__ import annotations

import single_core  # noqa: F401  sets the thread variables before numpy is imported

import argparse  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.games.gongzhu.rules import GongzhuState  # noqa: E402
from scrofazero.sampling import uniform  # noqa: E402

ORIGINAL_MS_PER_DEAL = 0.18  # original ScrofaZero sampler (anchor from the task brief)


def mid_game_views(want_voids: bool, count: int, seed: int = 0) -> list:
    """`count` views of the player to move after 12-28 random plays, whose other seats show
    at least one void (want_voids) or none at all."""
    rng = np.random.default_rng(seed)
    views = []
    while len(views) < count:
        state = GongzhuState(seed=int(rng.integers(2**31)))
        depth = int(rng.integers(12, 29))
        for _ in range(depth):
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
        view = state.view(state.current_player)
        others_void = any(view.voids[(view.seat + j) % 4] for j in (1, 2, 3))
        if others_void == want_voids:
            views.append(view)
    return views


def time_per_deal(views, batch: int, repeats: int, cold: bool) -> float:
    """Best-of-`repeats` mean ms per deal over one sample_owners call per view."""
    rng = np.random.default_rng(1)
    best = float("inf")
    for _ in range(repeats):
        elapsed = 0.0
        for view in views:
            if cold:
                uniform._tables.cache_clear()
            start = time.perf_counter()
            uniform.sample_owners(view, batch, rng)
            elapsed += time.perf_counter() - start
        best = min(best, elapsed / (len(views) * batch) * 1e3)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="write the results to this path")
    parser.add_argument("--views", type=int, default=40, help="distinct views per setting")
    parser.add_argument("--repeats", type=int, default=5, help="best of this many passes")
    args = parser.parse_args()
    rows = []
    for voids in (False, True):
        views = mid_game_views(voids, args.views, seed=int(voids))
        for batch in (20, 1000):
            for cold in (True, False):
                ms = time_per_deal(views, batch, args.repeats, cold)
                rows.append({
                    "voids": voids, "batch": batch, "cache": "cold" if cold else "warm",
                    "ms_per_deal": ms, "original_ms_per_deal": ORIGINAL_MS_PER_DEAL,
                    "speedup_vs_original": ORIGINAL_MS_PER_DEAL / ms,
                })
    print(f"{'voids':>6} {'batch':>6} {'cache':>6} {'ms/deal':>10} {'original':>9} {'speedup':>8}")
    for r in rows:
        print(f"{str(r['voids']):>6} {r['batch']:>6} {r['cache']:>6} {r['ms_per_deal']:>10.5f} "
              f"{r['original_ms_per_deal']:>9.2f} {r['speedup_vs_original']:>7.1f}x")
    if args.json:
        write_json_atomic(args.json, {"benchmark": "sampler", "single_core": True, "results": rows})


if __name__ == "__main__":
    main()
