"""Learning speed: raw-network WPG against two Mr. Greeds at fixed self-play game counts.

    python benchmarks/learning.py --run NAME [--preset cpu] [--games 2560,5120,10240,20480,40960]
        [--deals 256] [--json PATH] [--png PATH] [--compare JSON ...] [--parent JSON]
        [--measure-only] [--earlier JSON] [-- train.py overrides ...]

Trains `python train.py experiment=PRESET run=NAME` (resuming the run when it exists) until the
largest game count, keeping a copy of the network at each count (train.milestone_games), then
measures each copy as the paper's benchmark does: the raw network with a 1-ply value search over
5 uniform deals (`evaluate.py --wpg player=raw`) on the first --deals standard deals x 2.
A measurement is kept beside its copy (wpg_raw_games_<N>_deals_<D>.json) with the inputs that
decide it ("inputs": the copy's sha256, the deals, the seed, the evaluate.py settings) and is
reused only while they all match; otherwise it is measured anew and overwritten.
Writes JSON {"preset", "run", "games", "minutes", "wpg", "stderr", "deals", "overrides",
"settings", "measurements", "original", "warm_start"} (settings: the run's full resolved config
as its newest measured copy stores it; measurements: the inputs of each point; warm_start: the
summary of train.warm_start, whose time the minutes include and whose Greed games the game
counts do not, or null) and a PNG of WPG against games and against training minutes, with the
original's logged curve beside ours (anchor: -265 at 0 games, -106 at 5,120, -62 at 20,480,
-25 at 46,080, about 0 at ~92k games after 17 GPU-hours, +7 at ~164k where its first run levelled
off, then its fine-tuning with 128 games per batch and replay of the latest batch: +26 after
10,240 more games, +36 after 61,440, +37.3 after 92,160, about 46 GPU-hours in all).

A run that started from another run's network (train.init_from) is one phase of a lineage:
--parent names the parent's result JSON of this benchmark (repeatable, oldest first, for a
longer lineage); the run's games and minutes then continue from the parent's last point, the
JSON gets "lineage" (each phase: run, offsets, deals) and the PNG draws the phases as one
curve (the deals of each phase's measurement in its label).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.nn.checkpoint import file_sha256, load_checkpoint  # noqa: E402

# The original's raw-network curve (games, WPG), its fine-tuning from ~164k games on, and its
# pace: ~92k games in 17 GPU-hours, ~256k in about 46.
ORIGINAL = {"games": [0, 5120, 20480, 46080, 92160, 164000, 174240, 225440, 256160],
            "wpg": [-265, -106, -62, -25, 0, 7, 26, 36, 37.3],
            "finetune_from_games": 164000}
ORIGINAL_MINUTES_PER_GAME = 17 * 60 / 92160
SEED = 0  # evaluate.py's seed of every measurement
# The evaluate.py settings that, with the network, the deals and the seed, decide a measurement
# (the paper's raw-network benchmark against Mr. Greed); passed explicitly, so a changed default
# cannot make an old measurement look current.
EVALUATE = {"player": "raw", "raw_mode": "value", "raw_deals": 5, "greed_samples": 20}
# evaluate.py's names of those settings today (the recorded "inputs" keep the names above, so
# that measurements made before the rename are still recognised as the same)
SETTING_NAMES = {"raw_mode": "raw.mode", "raw_deals": "raw.sampling.num_deals",
                 "greed_samples": "greed.num_samples"}


def train_arguments(args, overrides: list[str]) -> list[str]:
    """train.py's arguments that train (or resume) the run until the largest game count."""
    per_batch = args.games_per_batch
    batches = -(-max(args.games) // per_batch)  # ceil
    arguments = [f"experiment={args.preset}", f"run={args.run}",
                 f"checkpoint_dir={args.checkpoint_dir}", f"log_dir={args.log_dir}",
                 f"train.games_per_batch={per_batch}", f"train.max_batches={batches}",
                 f"train.milestone_games=[{','.join(str(g) for g in [0, *args.games])}]",
                 "progress=false", *overrides]
    if (Path(args.checkpoint_dir) / args.run / "latest.pt").is_file():
        arguments.append("resume=true")
    return arguments


def train(args, overrides: list[str]) -> Path:
    """Run (or resume) train.py until the largest game count; returns the run folder."""
    cmd = [sys.executable, str(ROOT / "train.py"), *train_arguments(args, overrides)]
    print(" ".join(cmd[1:]), flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)
    return Path(args.checkpoint_dir) / args.run


def measurement_inputs(path: Path, deals: int) -> dict:
    """What decides the WPG measurement of the network file `path`: its bytes (sha256), the
    number of standard deals, the seed and the evaluate.py settings."""
    return {"checkpoint_sha256": file_sha256(path), "deals": int(deals), "seed": SEED,
            "evaluate": dict(EVALUATE)}


def run_evaluate(cmd: list[str]) -> None:
    """Run an evaluate.py command line (its output is not shown)."""
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def evaluate_arguments(path: Path, inputs: dict, out: Path, workers: int) -> list[str]:
    """evaluate.py's arguments that measure network `path` as `inputs` says, into `out`."""
    return ["--wpg", *(f"{SETTING_NAMES.get(key, key)}={value}"
                       for key, value in inputs["evaluate"].items()),
            f"checkpoint={path}", f"deals={inputs['deals']}", f"seed={inputs['seed']}",
            f"workers={workers}", "progress=false", f"out={out}",
            # the paper's uniform deals, as every recorded point was measured (the raw player's
            # default is the belief network's deals, which would not compare)
            "raw.sampling.method=uniform"]


def measured(path: Path, inputs: dict, out: Path, workers: int) -> tuple[dict, bool]:
    """(the WPG result of network `path`, whether it was reused). The result in `out` is reused
    when it records exactly `inputs`; otherwise evaluate.py measures anew and `out` is
    overwritten with its result plus "inputs"."""
    if out.is_file():
        try:
            kept = json.loads(out.read_text())
        except json.JSONDecodeError:
            kept = None  # a torn or foreign file: measured again
        if isinstance(kept, dict) and kept.get("inputs") == inputs:
            return kept, True
    fresh = out.with_name(f".{out.name}.evaluate.json")
    run_evaluate([sys.executable, str(ROOT / "evaluate.py"),
                  *evaluate_arguments(path, inputs, fresh, workers)])
    result = {**json.loads(fresh.read_text()), "inputs": inputs}
    write_json_atomic(out, result)
    fresh.unlink()
    return result, False


def earlier_points(earlier: dict | None, deals: int) -> dict[int, dict]:
    """The points of an earlier result of this benchmark (--earlier), by game count: each point's
    games, minutes, wpg, stderr and recorded measurement inputs, for the copies that a later
    sitting on another machine no longer has."""
    if not earlier:
        return {}
    points = {}
    for i, inputs in enumerate(earlier.get("measurements") or []):
        if inputs.get("deals") != deals:
            continue
        points[int(inputs["games"])] = {key: earlier[key][i]
                                        for key in ("games", "minutes", "wpg", "stderr")}
        points[int(inputs["games"])]["inputs"] = inputs
    return points


def measure(args, run_dir: Path, earlier: dict | None = None) -> dict:
    """Raw WPG and training minutes of every kept copy games_<N>.pt, N in 0 and args.games, with
    the inputs of each measurement and the run's resolved settings (from its newest copy). A
    copy that is not on this machine is taken from `earlier` (an earlier result of this
    benchmark, --earlier) when it measured that game count on as many deals."""
    rows = {"games": [], "minutes": [], "wpg": [], "stderr": [], "warm_start": None,
            "settings": (earlier or {}).get("settings"), "measurements": []}
    kept = earlier_points(earlier, args.deals)
    for games in [0, *args.games]:
        path = run_dir / f"games_{games}.pt"
        if not path.is_file() and games in kept:
            point = kept[games]
            for key in ("games", "minutes", "wpg", "stderr"):
                rows[key].append(point[key])
            rows["measurements"].append(point["inputs"])
            print(f"{point['games']:>7} games  {point['minutes']:7.1f} min  "
                  f"WPG {point['wpg']:+7.1f} ({point['stderr']:.1f})  earlier", flush=True)
            continue
        if not path.is_file():
            raise FileNotFoundError(f"{path} is missing: the run did not reach {games} games"
                                    + ("" if earlier is None else
                                       " and --earlier has no measurement of it"))
        payload = load_checkpoint(path)
        extra = payload["extra"]
        if games == 0 and extra.get("warm_start"):  # Greed games imitated before self-play
            rows["warm_start"] = extra["warm_start"]
        rows["settings"] = payload.get("config")  # the newest copy's, once the loop ends
        inputs = measurement_inputs(path, args.deals)
        out = run_dir / f"wpg_raw_games_{games}_deals_{args.deals}.json"
        result, reused = measured(path, inputs, out, args.workers)
        rows["games"].append(int(extra.get("games", games)))
        rows["minutes"].append(float(extra.get("train_seconds", 0.0)) / 60)
        rows["wpg"].append(result["wpg"])
        rows["stderr"].append(result["stderr"])
        rows["measurements"].append({"games": rows["games"][-1], **inputs})
        err = "n/a" if result["stderr"] is None else f"{result['stderr']:.1f}"
        print(f"{rows['games'][-1]:>7} games  {rows['minutes'][-1]:7.1f} min  "
              f"WPG {result['wpg']:+7.1f} ({err}){'  reused' if reused else ''}", flush=True)
    return rows


def _read_json(path: Path) -> dict:
    """A result file given on the command line (a byte order mark an editor added is skipped)."""
    return json.loads(path.read_text(encoding="utf-8-sig"))


def with_lineage(result: dict, parents: list[dict]) -> dict:
    """`result` with its games and minutes counted from the start of the lineage `parents`
    (oldest first, each a result of this benchmark whose last point the next one started
    from): games_total, minutes_total and "lineage" [{run, games_offset, minutes_offset,
    deals, games, minutes, wpg, stderr}] (the parents' own points included)."""
    lineage, games_off, minutes_off = [], 0, 0.0
    for phase in [*parents, result]:
        lineage.append({"run": phase["run"], "games_offset": games_off,
                        "minutes_offset": minutes_off, "deals": phase["deals"],
                        "overrides": phase.get("overrides", []),
                        "games": [games_off + g for g in phase["games"]],
                        "minutes": [minutes_off + m for m in phase["minutes"]],
                        "wpg": phase["wpg"], "stderr": phase["stderr"]})
        games_off += phase["games"][-1]
        minutes_off += phase["minutes"][-1]
    return {**result, "lineage": lineage, "games_total": lineage[-1]["games"],
            "minutes_total": lineage[-1]["minutes"]}


def _phases(result: dict) -> list[dict]:
    return result.get("lineage") or [{**result, "games_offset": 0, "minutes_offset": 0.0}]


def plot(result: dict, path: Path, others: list[dict] = ()) -> None:
    """WPG against games and against training minutes: this run (each phase of its lineage),
    `others` (earlier results of this benchmark, drawn beside it under their run names) and the
    original's curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (by_games, by_minutes) = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, key, orig_x, xlabel in (
            (by_games, "games", ORIGINAL["games"], "self-play games"),
            (by_minutes, "minutes",
             [g * ORIGINAL_MINUTES_PER_GAME for g in ORIGINAL["games"]],
             "training minutes (ours: this CPU; original: one GPU)")):
        for phase in _phases(result):
            x = phase[key] if "lineage" in result else result[key]
            yerr = [0.0 if e is None else e for e in phase["stderr"]]
            ax.errorbar(x, phase["wpg"], yerr=yerr, marker="o", capsize=3,
                        label=f"ours: {phase['run']} ({phase['deals']} deals x 2)")
        for other in others:
            ox = other["games"] if ax is by_games else other["minutes"]
            oerr = [0.0 if e is None else e for e in other["stderr"]]
            ax.errorbar(ox, other["wpg"], yerr=oerr, marker=".", capsize=2, alpha=0.7,
                        label=f"ours: {other['run']}")
        ax.plot(orig_x, ORIGINAL["wpg"], marker="s", linestyle="--", label="original ScrofaZero")
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    by_minutes.set_xscale("symlog", linthresh=10)
    by_minutes.set_xlim(left=0)
    by_games.set_ylabel("raw-network WPG vs two Mr. Greeds")
    by_games.legend(loc="lower right")
    fig.suptitle("Learning speed of the raw network (1-ply value search over 5 sampled deals)")
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    tmp.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="run name (checkpoints/<run>/)")
    parser.add_argument("--preset", default="cpu", help="experiment preset of train.py")
    parser.add_argument("--games", default="2560,5120,10240,20480,40960",
                        type=lambda s: sorted(int(g) for g in s.split(",")),
                        help="self-play game counts to measure at")
    parser.add_argument("--games-per-batch", type=int, default=64)
    parser.add_argument("--deals", type=int, default=256, help="standard deals (x 2 plays)")
    parser.add_argument("--workers", type=int, default=0, help="evaluation processes (0: cores)")
    parser.add_argument("--checkpoint-dir", default="checkpoints")
    parser.add_argument("--log-dir", default="runs")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--png", type=Path, help="write the plot here")
    parser.add_argument("--measure-only", action="store_true",
                        help="do not train; measure the copies the run already has")
    parser.add_argument("--compare", type=Path, action="append", default=[],
                        help="JSON result of an earlier run to draw beside this one (repeatable)")
    parser.add_argument("--earlier", type=Path,
                        help="an earlier result JSON of this run: points whose copies are not "
                             "on this machine (a later sitting) are taken from it")
    parser.add_argument("--parent", type=Path, action="append", default=[],
                        help="result JSON of the run this one started from (train.init_from); "
                             "repeatable, oldest first: the lineage")
    parser.add_argument("overrides", nargs="*", help="train.py overrides, e.g. model=medium")
    args = parser.parse_args()
    if any(g % args.games_per_batch for g in args.games):
        parser.error(f"every --games count must be a multiple of {args.games_per_batch}")
    run_dir = (Path(args.checkpoint_dir) / args.run if args.measure_only
               else train(args, args.overrides))
    earlier = _read_json(args.earlier) if args.earlier else None
    result = {"preset": args.preset, "run": args.run, "overrides": args.overrides,
              "deals": args.deals, **measure(args, run_dir, earlier), "original": ORIGINAL}
    if args.parent:
        result = with_lineage(result, [_read_json(p) for p in args.parent])
    if args.json:
        print(f"wrote {write_json_atomic(args.json, result)}")
    if args.png:
        plot(result, args.png, [_read_json(p) for p in args.compare])
        print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
