"""The gap table of issue 57: what stands between the full player and its ceiling, part by part,
each part a paired comparison of two players on the same standard deals against two Mr. Greeds.

    python benchmarks/gap.py --json PATH [--deals 64] [--workers 0] [--runs DIR]
                             [--only PART,...]

Each row is one `python evaluate.py --wpg deals=N ...` (its result kept in --runs, default
checkpoints/gap, and reused when there: a run stopped half way resumes by the rows done); each
part is B - A per deal with its standard error (benchmarks/paired.py):

  seeing the cards      the default, and the same player told the true deal (sampling oracle)
  search error 9-13     the endgame from trick 9 (the default), and MCTS to the end (trick=0)
  search error 8        the endgame from trick 8, and from trick 9
  strategy fusion       the player's next decision shared across the worlds it cannot tell
                        apart, the others by the behaviour network (endgame.shared=1), and its
                        twin with each world's own best next card (endgame.fused=true): the
                        same lookahead and model, so the difference is what fusion costs
  the others' model     that twin against PIMC: the others' plays until the player's next
                        decision by the behaviour network instead of minimax
  the ceiling's sharing the shared search with Mr. Greed's own program at the opponents' seats
                        (endgame.others=greed: the ceiling against Mr. Greeds), and PIMC
  inference             the worlds weighed by Mr. Greed's own program (sampling posterior, the
                        exact posterior's ceiling), and by the behaviour network (the default)

Printed as a table and written to --json with every row's result.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(ROOT))

from paired import compare  # noqa: E402

from scrofazero.atomic import write_json_atomic  # noqa: E402

# row name -> the evaluate.py settings beside the defaults
ROWS = {
    "default": [],
    "oracle": ["scrofazero.sampling.method=oracle"],
    "mcts_to_the_end": ["scrofazero.endgame.trick=0"],
    "endgame8": ["scrofazero.endgame.trick=8"],
    "shared1": ["scrofazero.endgame.shared=1"],
    "shared1_fused": ["scrofazero.endgame.shared=1", "scrofazero.endgame.fused=true"],
    "shared1_greed": ["scrofazero.endgame.shared=1", "scrofazero.endgame.others=greed"],
    "posterior": ["scrofazero.sampling.method=posterior"],
}
# part -> (row A, row B): the part is B - A
PARTS = {
    "seeing the cards": ("default", "oracle"),
    "search error, tricks 9-13": ("mcts_to_the_end", "default"),
    "search error, trick 8": ("default", "endgame8"),
    "strategy fusion, the next decision": ("shared1_fused", "shared1"),
    "the others by the behaviour network": ("default", "shared1_fused"),
    "shared, opponents by Mr. Greed's program": ("default", "shared1_greed"),
    "inference": ("default", "posterior"),
}


def run_row(name: str, deals: int, workers: int, runs: Path) -> dict:
    """The row's evaluate.py result, played now unless --runs already holds it for these deals."""
    out = runs / f"{name}_{deals}.json"
    if not out.is_file():
        command = [sys.executable, str(ROOT / "evaluate.py"), "--wpg", f"deals={deals}",
                   f"workers={workers}", "progress=false", f"out={out}", *ROWS[name]]
        subprocess.run(command, check=True, cwd=ROOT)
    return json.loads(out.read_text())


def table(results: dict[str, dict], parts=PARTS) -> dict[str, dict]:
    """Each part whose two rows were played: its rows [A, B] and B - A per deal
    (paired.compare: a, b, their standard errors, diff, diff_stderr, deals)."""
    return {part: {"rows": [a, b], **compare(results[a], results[b], (a, b))}
            for part, (a, b) in parts.items() if a in results and b in results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--deals", type=int, default=64)
    parser.add_argument("--workers", type=int, default=0, help="0: one per core")
    parser.add_argument("--runs", type=Path, default=ROOT / "checkpoints" / "gap")
    parser.add_argument("--only", default="", help="parts, comma-separated (default: all)")
    args = parser.parse_args()
    parts = PARTS
    if args.only:
        wanted = [p.strip() for p in args.only.split(",")]
        unknown = [p for p in wanted if p not in PARTS]
        if unknown:
            parser.error(f"--only: no part {unknown[0]!r}; the parts: {', '.join(PARTS)}")
        parts = {p: PARTS[p] for p in wanted}
    args.runs.mkdir(parents=True, exist_ok=True)
    names = sorted({row for pair in parts.values() for row in pair}, key=list(ROWS).index)
    results = {name: run_row(name, args.deals, args.workers, args.runs) for name in names}
    gaps = table(results, parts)
    print(f"the gap table, {args.deals} standard deals x 2 against two Mr. Greeds:")
    for part, g in gaps.items():
        (a, b) = g["rows"]
        print(f"  {part:42s} {g['diff']:+7.1f} ({g['diff_stderr']:.1f})   {b} {g['b']:+.1f}, "
              f"{a} {g['a']:+.1f}")
    write_json_atomic(args.json, {"deals": args.deals, "parts": gaps, "rows": results,
                                  "settings": {name: ROWS[name] for name in names}})
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
