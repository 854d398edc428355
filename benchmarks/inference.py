"""How much of the hidden-hand game is lost to inference, and how much each method recovers.

    python benchmarks/inference.py [--checkpoint models/scrofazero.pt] [--deals 16]
        [--workers 1] [--json PATH] [--png PATH] [--only raw|full]

Plays `evaluate.py --wpg` (two copies of the player against two Mr. Greeds, duplicate protocol)
for the raw network and the full player with each way of guessing the hidden hands, all on the
same first --deals standard deals with the same seed, so the per-deal values pair up:

- uniform: deals exactly uniform over those consistent with the view;
- stratified: stratified on two important cards, strata weighted by counting (full player);
- stratified_iec: that with the paper's Bayesian weights (the full player's default before the
  belief network);
- belief: deals drawn from the card-location network (models/belief.pt; 5 for the raw player,
  18 for the full player: the defaults now); belief_stratified: stratified, strata weighted by
  the belief; belief_iec: belief with the IEC weights on top; belief_plain: the belief's
  deals from the constrained product of its probabilities as they are, not fitted to its
  per-card marginals (`calibrate=0`); belief_fit_early: fitted only while more than 15 cards
  are unseen, the plain product from trick 9 on (`calibrate_above=15`);
- policy: worlds proposed by the belief, weighed by the behaviour network's probability of every
  play seen (models/behaviour.pt; sampling/particles.py), the deals drawn from them;
- posterior: the same weighed by Mr. Greed's own program, the opponents' true play
  probabilities (the posterior ceiling: evaluation only);
- oracle_important: the holders of SQ, DJ, C10, AH, KH, QH, JH told, the rest uniform;
- oracle: the true deal alone (the ceiling; evaluation only).

For each row: WPG, its standard error, seconds per game, the paired differences from `uniform`,
from the family's default before the belief network and from `belief` (today's default) with
standard errors, and the share of each ceiling's headroom recovered = (row - uniform) /
(oracle - uniform) and (row - uniform) / (posterior - uniform). Measurements are stored per row
in --out-dir and reused when the network, the belief and behaviour files (rows that use them),
the deals, the seed and the overrides are the same.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from player_settings import paired

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import subprocess  # noqa: E402
from dataclasses import asdict  # noqa: E402

from scrofazero.agents.raw_net import RawSettings  # noqa: E402
from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero import shipped  # noqa: E402
from scrofazero.nn.checkpoint import file_sha256  # noqa: E402
from scrofazero.sampling.sampler import SamplingConfig  # noqa: E402

FULL_DEALS = "scrofazero.sampling.num_deals=18"  # the default's 18 deals for the unstratified rows
NO_IEC = "scrofazero.weighting.enabled=false"
IEC = "scrofazero.weighting.enabled=true"
# The posterior's estimate of each Mr. Greed play from 32 deals, not the default 128: a quarter
# of the cost (8 s per game for the raw player on this CPU, not 16), the figures measured so
POSTERIOR_DRAWS = "%s.sampling.greed_draws=32"
ROWS = {
    "raw": {
        "uniform": ["player=raw", "raw.sampling.method=uniform"],
        "belief": ["player=raw", "raw.sampling.method=belief"],
        "belief_plain": ["player=raw", "raw.sampling.method=belief",
                         "raw.sampling.calibrate=0"],
        "belief_fit_early": ["player=raw", "raw.sampling.method=belief",
                             "raw.sampling.calibrate_above=15"],
        "policy": ["player=raw", "raw.sampling.method=policy"],
        "posterior": ["player=raw", "raw.sampling.method=posterior", POSTERIOR_DRAWS % "raw"],
        "oracle_important": ["player=raw", "raw.sampling.method=oracle_important"],
        "oracle": ["player=raw", "raw.sampling.method=oracle", "raw.sampling.num_deals=1"],
    },
    "full": {
        "uniform": ["scrofazero.sampling.method=uniform", FULL_DEALS, NO_IEC],
        "stratified": ["scrofazero.sampling.method=stratified", NO_IEC],
        "stratified_iec": ["scrofazero.sampling.method=stratified", IEC],
        "belief": ["scrofazero.sampling.method=belief", FULL_DEALS, NO_IEC],
        "belief_plain": ["scrofazero.sampling.method=belief", FULL_DEALS, NO_IEC,
                         "scrofazero.sampling.calibrate=0"],
        "belief_fit_early": ["scrofazero.sampling.method=belief", FULL_DEALS, NO_IEC,
                             "scrofazero.sampling.calibrate_above=15"],
        "belief_stratified": ["scrofazero.sampling.method=belief_stratified", NO_IEC],
        "belief_iec": ["scrofazero.sampling.method=belief", FULL_DEALS, IEC],
        "policy": ["scrofazero.sampling.method=policy", FULL_DEALS, NO_IEC],
        "posterior": ["scrofazero.sampling.method=posterior", FULL_DEALS, NO_IEC,
                      POSTERIOR_DRAWS % "scrofazero"],
        "oracle_important": ["scrofazero.sampling.method=oracle_important", FULL_DEALS, NO_IEC],
        "oracle": ["scrofazero.sampling.method=oracle", "scrofazero.sampling.num_deals=1",
                   NO_IEC],
    },
}
BASELINE = {"raw": "uniform", "full": "stratified_iec"}  # the defaults before the belief network


def measurement_key(overrides: list[str], args) -> str:
    """What a stored row must match to be reused: the network's bytes, the belief file's bytes
    (rows that use it), the deals, the seed, the overrides and the players' defaults (a row
    measured before a default changed is measured again)."""
    weighed = any(m in o for o in overrides for m in ("policy", "posterior"))
    uses_belief = weighed or any("belief" in o for o in overrides)
    beliefs = file_sha256(args.beliefs) if uses_belief and Path(args.beliefs).is_file() else None
    uses_behaviour = any("policy" in o for o in overrides)
    behaviour = (file_sha256(args.behaviour) if uses_behaviour and Path(args.behaviour).is_file()
                 else None)
    what = json.dumps({"checkpoint": file_sha256(args.checkpoint), "beliefs": beliefs,
                       "behaviour": behaviour,
                       "deals": args.deals, "seed": args.seed,
                       "overrides": sorted(overrides),
                       "defaults": {"raw": asdict(RawSettings()),
                                    "sampling": asdict(SamplingConfig())}}, sort_keys=True)
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def run_row(family: str, name: str, overrides: list[str], args) -> dict:
    out = Path(args.out_dir) / f"{family}_{name}_{measurement_key(overrides, args)}.json"
    if not out.is_file():
        beliefs = [f"{p}.sampling.{k}={v}" for p in ("scrofazero", "raw")
                   for k, v in (("beliefs", args.beliefs), ("behaviour", args.behaviour))]
        cmd = [sys.executable, str(ROOT / "evaluate.py"), "--wpg",
               f"checkpoint={args.checkpoint}", f"deals={args.deals}", f"workers={args.workers}",
               f"seed={args.seed}", "progress=false", f"out={out}", *beliefs, *overrides]
        subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def table(family: str, results: dict) -> list[dict]:
    base = results["uniform"]["values"]
    rows = []
    for name, res in results.items():
        gain, gain_se = paired(res["values"], base)
        prev = results.get(BASELINE[family])
        vs_prev, vs_prev_se = paired(res["values"], prev["values"]) if prev else (None, None)
        belief = results.get("belief")
        vs_belief, vs_belief_se = (paired(res["values"], belief["values"]) if belief
                                   else (None, None))
        shares = {}
        for top in ("oracle", "posterior"):  # the share of each ceiling's headroom recovered
            head = (results[top]["wpg"] - results["uniform"]["wpg"] if top in results
                    else None)
            shares[top] = gain / head if head else None
        rows.append({"family": family, "name": name, "wpg": res["wpg"], "stderr": res["stderr"],
                     "seconds_per_game": res["seconds_per_game"], "gain_over_uniform": gain,
                     "gain_stderr": gain_se, "vs_default": vs_prev, "vs_default_stderr":
                     vs_prev_se, "vs_belief": vs_belief, "vs_belief_stderr": vs_belief_se,
                     "headroom_share": shares["oracle"],
                     "posterior_headroom_share": shares["posterior"],
                     "settings": res.get("settings")})
    return rows


def _num(x) -> str:
    """A standard error for printing: one decimal, or '-' when there is none (one deal)."""
    return "-" if x is None or x != x else f"{x:.1f}"


def plot(rows: list[dict], path: Path, deals: int) -> None:
    import matplotlib  # noqa: PLC0415 - only for --png
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    fig, ax = plt.subplots(figsize=(9, 4))
    labels = [f"{r['family']}\n{r['name']}" for r in rows]
    ax.bar(range(len(rows)), [r["wpg"] for r in rows],
           yerr=[r["stderr"] if r["stderr"] is not None else 0.0 for r in rows],
           color=["tab:blue" if r["family"] == "raw" else "tab:orange" for r in rows])
    ax.set_xticks(range(len(rows)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("WPG against two Mr. Greeds")
    ax.set_title(f"Inference: guessed hands against the true deal ({deals} deals x 2)")
    ax.axhline(0, color="black", linewidth=0.5)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default=str(ROOT / "models" / "scrofazero.pt"))
    parser.add_argument("--beliefs", default=str(shipped.BELIEF))
    parser.add_argument("--behaviour", default=str(shipped.BEHAVIOUR))
    parser.add_argument("--deals", type=int, default=16)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out-dir", default="results/inference")
    parser.add_argument("--only", choices=("raw", "full"), default=None)
    parser.add_argument("--rows", type=lambda s: s.split(","), default=None,
                        help="comma-separated row names (uniform always runs; oracle for the "
                             "share)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--png", type=Path)
    args = parser.parse_args()
    Path(args.out_dir).mkdir(parents=True, exist_ok=True)
    rows = []
    for family, names in ROWS.items():
        if args.only and family != args.only:
            continue
        results = {}
        for name, overrides in names.items():
            if args.rows and name not in args.rows and name != "uniform":
                continue
            results[name] = run_row(family, name, overrides, args)
            r = results[name]
            print(f"{family:>4} {name:>16}  WPG {r['wpg']:+7.1f} ({_num(r['stderr'])})  "
                  f"{r['seconds_per_game']:.2f} s/game", flush=True)
        rows += table(family, results)
    print()
    for r in rows:
        share, post = (f"{r[k]:.2f}" if r[k] is not None else "-"
                       for k in ("headroom_share", "posterior_headroom_share"))
        vs, vs_b = (f"{r[k]:+6.1f} ({_num(r[k + '_stderr'])})" if r[k] is not None else "-"
                    for k in ("vs_default", "vs_belief"))
        print(f"{r['family']:>4} {r['name']:>16}  WPG {r['wpg']:+7.1f} ({_num(r['stderr'])})  "
              f"over uniform {r['gain_over_uniform']:+6.1f} ({_num(r['gain_stderr'])})  "
              f"vs old default {vs}  vs belief {vs_b}  share of oracle {share}, of posterior "
              f"{post}  {r['seconds_per_game']:.2f} s/game")
    payload = {"checkpoint": args.checkpoint, "beliefs": args.beliefs,
               "behaviour": args.behaviour, "deals": args.deals,
               "seed": args.seed, "workers": args.workers, "rows": rows}
    if args.json:
        print(f"wrote {write_json_atomic(args.json, payload)}")
    if args.png:
        plot(rows, args.png, args.deals)
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
