"""What the full ScrofaZero player gains from its evaluation settings, as paired comparisons.

    python benchmarks/player_settings.py --checkpoint PATH [--deals 128] [--workers 1]
        [--json PATH] [--only NAME,NAME]

Plays `evaluate.py --wpg` (two copies of the player against two Mr. Greeds, duplicate
protocol) once per setting below, all on the same first --deals standard deals with the same
seed, so Mr. Greed's draws and the deals are shared and the per-deal values pair up. Reports
each setting's WPG and seconds per game, and its paired gain over the first row (the paper's
evaluation settings) with the standard error of the per-deal differences, which is much
smaller than either WPG's own. Only settings that keep the full player within its CPU budget,
under 1 s per game (the targets in README's results table), may be defaults.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.nn.checkpoint import file_sha256  # noqa: E402

# The paper's evaluation settings, spelled out (the shipped defaults differ: `shipped` below).
PAPER = [
    # 9 stratified deals (2 important cards)
    "scrofazero.sampling.method=stratified", "scrofazero.sampling.per_stratum=1",
    "scrofazero.sampling.num_deals=9", "scrofazero.weighting.enabled=true",  # IEC weights
    # UCB, 10 + 2 x legal cards simulations per root
    "scrofazero.search.budget_base=10", "scrofazero.search.budget_per_legal=2",
]


def _on_paper(*changes: str) -> list[str]:
    """The paper's settings with `changes` replacing (or adding) keys."""
    keys = {c.split("=", 1)[0] for c in changes}
    return [o for o in PAPER if o.split("=", 1)[0] not in keys] + list(changes)


# name -> evaluate.py overrides; the first row is the baseline every other row is paired with.
SETTINGS = {
    "paper": _on_paper(),  # IEC weights, UCB
    "shipped": [],  # the defaults of `evaluate.py --wpg` (18 deals, half the search per deal)
    "no_iec": _on_paper("scrofazero.weighting.enabled=false"),
    "uniform_9": _on_paper("scrofazero.sampling.method=uniform"),
    "deals_18": _on_paper("scrofazero.sampling.per_stratum=2"),
    "search_3x": _on_paper("scrofazero.search.budget_base=30",
                           "scrofazero.search.budget_per_legal=6"),
    "puct": _on_paper("scrofazero.search.selection=puct"),
    # More sampled deals against more search per deal, at about the paper's cost: which of the
    # two buys more strength for the same time.
    "deals_18_half_search": _on_paper("scrofazero.sampling.per_stratum=2",
                                      "scrofazero.search.budget_base=5",
                                      "scrofazero.search.budget_per_legal=1"),
    "deals_6_double_search": _on_paper("scrofazero.sampling.num_important=1",
                                       "scrofazero.sampling.per_stratum=2",
                                       "scrofazero.search.budget_base=20",
                                       "scrofazero.search.budget_per_legal=4"),
    "deals_27_third_search": _on_paper("scrofazero.sampling.per_stratum=3",
                                       "scrofazero.search.budget_base=3",
                                       "scrofazero.search.budget_per_legal=1"),
    "puct_c200": _on_paper("scrofazero.search.selection=puct", "scrofazero.search.c_puct=200"),
    "puct_c600": _on_paper("scrofazero.search.selection=puct", "scrofazero.search.c_puct=600"),
}


def measurement_key(overrides: list[str], args) -> str:
    """What a stored measurement must match to be reused: the network's bytes, the deals, the
    seed and the setting's overrides (not its name)."""
    what = json.dumps({"checkpoint": file_sha256(args.checkpoint), "deals": args.deals,
                       "seed": args.seed, "overrides": sorted(overrides)}, sort_keys=True)
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def run_setting(name: str, overrides: list[str], args) -> dict:
    out = Path(args.out_dir) / f"{name}_{measurement_key(overrides, args)}.json"
    if not out.is_file():  # measured once; the same network, deals, seed and overrides reuse it
        cmd = [sys.executable, str(ROOT / "evaluate.py"), "--wpg",
               f"checkpoint={args.checkpoint}", f"deals={args.deals}", f"workers={args.workers}",
               f"seed={args.seed}", "progress=false", f"out={out}", *overrides]
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def paired(values: list[float], base: list[float]) -> tuple[float, float]:
    """Mean and standard error of the per-deal differences."""
    if len(values) != len(base):
        raise ValueError(f"paired comparison of {len(values)} and {len(base)} deals")
    diffs = [v - b for v, b in zip(values, base)]
    n = len(diffs)
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1) if n > 1 else float("nan")
    return mean, math.sqrt(var / n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--deals", type=int, default=128)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", default="results/player_settings",
                        help="per-setting evaluate.py JSON (reused when present)")
    parser.add_argument("--only", type=lambda s: s.split(","), default=None,
                        help="comma-separated subset of the settings (the baseline always runs)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    names = list(SETTINGS)
    if args.only:
        unknown = [n for n in args.only if n not in SETTINGS]
        if unknown:
            parser.error(f"unknown settings {unknown}; choose from {', '.join(SETTINGS)}")
        names = [names[0], *[n for n in names[1:] if n in args.only]]
    Path(args.out_dir).mkdir(parents=True, exist_ok=True)
    rows = []
    base = None
    for name in names:
        result = run_setting(name, SETTINGS[name], args)
        if base is None:
            base = result["values"]
        gain, gain_se = paired(result["values"], base)
        rows.append({"name": name, "overrides": SETTINGS[name], "wpg": result["wpg"],
                     "stderr": result["stderr"], "gain": gain, "gain_stderr": gain_se,
                     "seconds_per_game": result["seconds_per_game"]})
        print(f"{name:>10}  WPG {result['wpg']:+7.1f} ({result['stderr']:.1f})  gain "
              f"{gain:+6.1f} ({gain_se:.1f})  {result['seconds_per_game']:.2f} s/game", flush=True)
    if args.json:
        payload = {"checkpoint": args.checkpoint, "deals": args.deals, "seed": args.seed,
                   "workers": args.workers, "rows": rows}
        print(f"wrote {write_json_atomic(args.json, payload)}")


if __name__ == "__main__":
    main()
