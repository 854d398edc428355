"""Self-play speed: batched lockstep MCTS against the original's one-call-per-leaf approach.

    python benchmarks/selfplay.py --json results/selfplay.json [--games 64] [--device auto]

Measures, in one run and with the paper's training search budget (0 + 2 x legal, c = 30),
self-play games/s and network evaluations/s for the default (`small`) and the `paper` network,
and for the paper network searched one game at a time with one network call per leaf (the
original ScrofaZero's approach); the paper network also with --wide-games games in lockstep, and
with its forwards in bfloat16 (`train.inference=bfloat16`) on the same games.
Anchor: the original ran 1.5-2 games/s on one 2080 Ti GPU.

On a CPU it then measures the cost of a busy machine (`--load-games`, 0 to skip): batched
self-play of the small and the paper network with 1 torch thread and with one per core, each
quiet and beside a second process that keeps one core busy for the duration (a user's laptop
is rarely idle). Figures: games/s and the slowdown loaded / quiet per thread count.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.games.gongzhu import batch as F  # noqa: E402
from scrofazero.games.gongzhu.deals import random_deal  # noqa: E402
from scrofazero.games.gongzhu.rules import GongzhuState  # noqa: E402
from scrofazero.nn.evaluator import NetworkEvaluator  # noqa: E402
from scrofazero.nn.network import PolicyValueNet  # noqa: E402
from scrofazero.search.mcts import MCTSConfig  # noqa: E402
from scrofazero.search.sequential import run_mcts_sequential  # noqa: E402
from scrofazero.train.selfplay import play_selfplay  # noqa: E402

ORIGINAL_GPU_GAMES_PER_S = 2.0  # 1.5-2 games/s on one 2080 Ti (docs/rules.md section 15)
SHAPES = {"small": ([512, 256], 4), "paper": ([2048, 2048, 512], 10)}


def make_evaluator(shape: str, device: torch.device,
                   precision: str = "float32") -> NetworkEvaluator:
    hidden, blocks = SHAPES[shape]
    torch.manual_seed(0)
    model = PolicyValueNet(hidden=hidden, num_blocks=blocks).to(device).eval()
    return NetworkEvaluator(model, device=device, precision=precision)


def batched(evaluator: NetworkEvaluator, games: int, seed: int) -> dict:
    """Lockstep self-play of `games` games: every simulation step is one network call."""
    play_selfplay(evaluator, 2, np.random.default_rng(seed + 1), MCTSConfig())  # warm-up
    states0 = evaluator.states
    started = time.perf_counter()
    records = play_selfplay(evaluator, games, np.random.default_rng(seed), MCTSConfig())
    seconds = time.perf_counter() - started
    return {"games": games, "seconds": seconds, "games_per_s": games / seconds,
            "evaluations_per_s": (evaluator.states - states0) / seconds,
            "simulations": int(records.simulations)}


def per_leaf(evaluator: NetworkEvaluator, games: int, seed: int) -> dict:
    """The original's approach: one game at a time, one network call per leaf."""
    rng = np.random.default_rng(seed)
    states0, started = evaluator.states, time.perf_counter()
    for _ in range(games):
        state = GongzhuState(random_deal(rng), leader=int(rng.integers(4)))
        while not state.is_terminal():
            legal = state.legal_actions()
            if len(legal) == 1:
                state.apply(legal[0])
                continue
            root = F.StateBatch.from_states([state])
            result = run_mcts_sequential(F.GongzhuRules, evaluator, root, MCTSConfig())
            state.apply(int(result.action[0]))
    seconds = time.perf_counter() - started
    return {"games": games, "seconds": seconds, "games_per_s": games / seconds,
            "evaluations_per_s": (evaluator.states - states0) / seconds}


def network_rate(evaluator: NetworkEvaluator, batch: int, repeats: int = 20) -> float:
    """States/s of the bare network forward at one batch size (no search, no encoding)."""
    x = np.random.default_rng(0).random((batch, 434)).astype(np.float32)
    for _ in range(3):
        evaluator.forward_features(x)
    started = time.perf_counter()
    for _ in range(repeats):
        evaluator.forward_features(x)
    return batch * repeats / (time.perf_counter() - started)


def _burner() -> subprocess.Popen:
    """A second process keeping one core busy until killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def under_load(games: int, seed: int) -> dict:
    """Batched self-play games/s of the small and paper networks per torch thread count (1 and
    one per core), quiet and beside a process that keeps one core busy."""
    default = torch.get_num_threads()
    counts = sorted({1, os.cpu_count() or 1})
    out: dict = {}
    try:
        for threads in counts:
            torch.set_num_threads(threads)
            for shape in ("small", "paper"):
                evaluator = make_evaluator(shape, torch.device("cpu"))
                quiet = batched(evaluator, games, seed)["games_per_s"]
                burner = _burner()
                try:
                    loaded = batched(evaluator, games, seed)["games_per_s"]
                finally:
                    burner.kill()
                    burner.wait()
                out[f"{shape}_threads_{threads}"] = {
                    "threads": threads, "network": shape, "quiet_games_per_s": quiet,
                    "loaded_games_per_s": loaded, "slowdown": quiet / loaded}
    finally:
        torch.set_num_threads(default)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--games", type=int, default=64, help="games per batched measurement")
    parser.add_argument("--wide-games", type=int, default=256,
                        help="games in lockstep for the extra paper-network measurement")
    parser.add_argument("--per-leaf-games", type=int, default=16,
                        help="games for the per-leaf run (few games make a noisy baseline)")
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--load-games", type=int, default=32,
                        help="games per quiet / loaded measurement on a CPU (0: skip them)")
    args = parser.parse_args()
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available()
                          else ("cpu" if args.device == "auto" else args.device))
    small = batched(make_evaluator("small", device), args.games, args.seed)
    paper_eval = make_evaluator("paper", device)
    paper = batched(paper_eval, args.games, args.seed)
    # The same games with the network's forwards in bfloat16 (train.inference=bfloat16).
    paper_bf16 = batched(make_evaluator("paper", device, "bfloat16"), args.games, args.seed)
    wide = batched(paper_eval, args.wide_games, args.seed)
    leaf = per_leaf(paper_eval, args.per_leaf_games, args.seed)
    # The ceiling of any batching scheme: how much faster the bare network runs per state at
    # the lockstep batch than at batch 1 on this machine.
    net_ratio = network_rate(paper_eval, args.games) / network_rate(paper_eval, 1)
    result = {
        "games_per_s": small["games_per_s"],
        "evaluations_per_s": small["evaluations_per_s"],
        "paper_net_games_per_s": paper["games_per_s"],
        "paper_net_evaluations_per_s": paper["evaluations_per_s"],
        "per_leaf_games_per_s": leaf["games_per_s"],
        "per_leaf_evaluations_per_s": leaf["evaluations_per_s"],
        "speedup_vs_per_leaf": paper["games_per_s"] / leaf["games_per_s"],
        # Same search per position either way: the ratio of evaluations/s does not depend on
        # how long the (different) sampled games happened to be.
        "speedup_vs_per_leaf_per_evaluation": paper["evaluations_per_s"]
        / leaf["evaluations_per_s"],
        "network_batch_ratio": net_ratio,
        "paper_net_bf16_games_per_s": paper_bf16["games_per_s"],
        "bf16_speedup": paper_bf16["games_per_s"] / paper["games_per_s"],
        "paper_net_wide_games_per_s": wide["games_per_s"],
        "speedup_vs_per_leaf_wide": wide["games_per_s"] / leaf["games_per_s"],
        "paper_net_vs_original_gpu": paper["games_per_s"] / ORIGINAL_GPU_GAMES_PER_S,
        "targets": {"paper_net_games_per_s": ORIGINAL_GPU_GAMES_PER_S, "speedup_vs_per_leaf": 10.0},
        "details": {"small": small, "paper": paper, "paper_bf16": paper_bf16, "paper_wide": wide,
                    "per_leaf_paper": leaf},
        "search": "UCB, c = 30, budget 0 + 2 x legal, forced moves unsearched",
        "machine": {"device": str(device), "torch_threads": torch.get_num_threads(),
                    "cpus": os.cpu_count(), "python": platform.python_version(),
                    "torch": torch.__version__,
                    "gpu": torch.cuda.get_device_name() if device.type == "cuda" else None},
    }
    print(f"{'what':34} {'games/s':>9} {'evals/s':>10}")
    rows = ((f"batched x{args.games}, small network", small),
            (f"batched x{args.games}, paper network", paper),
            (f"batched x{args.games}, paper, bfloat16", paper_bf16),
            (f"batched x{args.wide_games}, paper network", wide),
            ("per-leaf calls, paper network", leaf))
    for name, row in rows:
        print(f"{name:34} {row['games_per_s']:9.2f} {row['evaluations_per_s']:10.0f}")
    print(f"speedup vs per-leaf: {result['speedup_vs_per_leaf']:.1f}x at {args.games} games, "
          f"{result['speedup_vs_per_leaf_wide']:.1f}x at {args.wide_games} (target 10x); "
          "paper network "
          f"vs the original's 2 games/s on a GPU: {result['paper_net_vs_original_gpu']:.2f}x "
          f"on {device} with {torch.get_num_threads()} threads")
    print(f"bare paper network, states/s at batch {args.games} / at batch 1: {net_ratio:.1f}x "
          "(the ceiling of batching on this machine)")
    if device.type == "cpu" and args.load_games > 0:
        result["under_load"] = load = under_load(args.load_games, args.seed)
        result["targets"]["slowdown_with_one_core_busy"] = 2.0
        print(f"{'one core busy by another process':34} {'quiet':>9} {'loaded':>10} "
              f"{'slowdown':>9}")
        for row in load.values():
            print(f"{row['network']:>6} network, {row['threads']} torch thread(s)     "
                  f"{row['quiet_games_per_s']:9.2f} {row['loaded_games_per_s']:10.2f} "
                  f"{row['slowdown']:8.1f}x")
    if args.json:
        write_json_atomic(args.json, result)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
