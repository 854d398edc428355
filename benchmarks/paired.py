"""Paired comparison of two `evaluate.py --wpg ... out=PATH` results on the same deals.

    python benchmarks/paired.py A.json B.json [--first N] [--json PATH]
    python benchmarks/paired.py FILE.json:ROW ...  (one row of a file of rows, {"rows": {...}},
                                                    as docs/figures/inference_*.json)

Both must have played the same deals with the same seed (so Mr. Greed's draws and the deals
pair up); prints each WPG and B - A with the standard error of the per-deal differences, far
smaller than either WPG's own when the players are alike. --first N compares the first N deals
of both (the standard deals are played in order, so a 128-deal run pairs with the first 128
deals of a 1024-deal one), each WPG recomputed on them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from player_settings import paired  # noqa: E402

from scrofazero.atomic import write_json_atomic  # noqa: E402


def compare(a: dict, b: dict, names=("A", "B")) -> dict:
    """B - A per deal: {"a", "b", "diff", "diff_stderr", "deals"}; ValueError when the two did
    not play the same deals with the same seed."""
    for key in ("deals", "seed"):
        if a.get(key) != b.get(key):
            raise ValueError(f"{names[0]} and {names[1]} differ in {key}: {a.get(key)!r} vs "
                             f"{b.get(key)!r}; a paired comparison needs the same deals and seed")
    diff, se = paired(b["values"], a["values"])
    return {"a": a["wpg"], "a_stderr": a["stderr"], "b": b["wpg"], "b_stderr": b["stderr"],
            "diff": diff, "diff_stderr": se, "deals": a["deals"]}


def first(result: dict, n: int) -> dict:
    """The result on its first `n` deals: values cut, WPG and standard error recomputed; a
    ValueError when it has fewer."""
    values = result["values"]
    if not 1 <= n <= len(values):
        raise ValueError(f"--first {n}: the result has {len(values)} deals")
    values = values[:n]
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else float("nan")
    return {**result, "values": values, "deals": n, "wpg": mean, "stderr": math.sqrt(var / n)}


def load(spec: str) -> dict:
    """An evaluate.py result: the file `spec`, or row ROW of the rows file FILE for FILE:ROW."""
    path, _, row = spec.rpartition(":") if not Path(spec).is_file() else (spec, "", "")
    if not path:
        raise ValueError(f"{spec}: no such file")
    data = json.loads(Path(path).read_text("utf-8-sig"))  # a BOM is skipped
    if not row:
        return data
    rows = data.get("rows", {})
    if row not in rows:
        raise ValueError(f"{path} has no row {row!r}; it has {', '.join(rows)}")
    return rows[row]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="a result file, or FILE:ROW")
    parser.add_argument("b", help="a result file, or FILE:ROW")
    parser.add_argument("--first", type=int, help="compare the first N deals of both")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    a, b = load(args.a), load(args.b)
    if args.first:
        a, b = first(a, args.first), first(b, args.first)
    result = compare(a, b, (str(args.a), str(args.b)))
    result.update(a_file=str(args.a), b_file=str(args.b))
    print(f"A {result['a']:+.1f} ({result['a_stderr']:.1f})  B {result['b']:+.1f} "
          f"({result['b_stderr']:.1f})  B - A {result['diff']:+.1f} ({result['diff_stderr']:.1f}) "
          f"on {result['deals']} deals x 2")
    if args.json:
        write_json_atomic(args.json, result)


if __name__ == "__main__":
    main()
