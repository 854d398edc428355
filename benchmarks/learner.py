"""Where training time goes, per network size: self-play games/s beside learner samples/s.

    python benchmarks/learner.py --json PATH [--sizes small,medium,paper] [--games 64]
        [--steps 200] [--device auto] [--threads 0]

For each size, in one run: the paper's training self-play (0 + 2 x legal simulations, every ply
searched) of --games games in lockstep, and --steps Adam steps of minibatch 64 on those games'
records (the learner of train.py). With the paper's schedule one batch of 64 games is learned
from in 3 passes over the latest 3 batches, i.e. 9 x 3,328 samples per 64 games, so the share of
the learner in training time is 9 x 52 x games/s / samples/s of that ratio; the JSON gives it as
`learner_share`.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrofazero.atomic import write_json_atomic  # noqa: E402
from scrofazero.nn.evaluator import NetworkEvaluator  # noqa: E402
from scrofazero.nn.network import PolicyValueNet, num_parameters  # noqa: E402
from scrofazero.search.mcts import MCTSConfig  # noqa: E402
from scrofazero.train.learner import make_optimizer, train_step  # noqa: E402
from scrofazero.train.replay import ReplayBuffer  # noqa: E402
from scrofazero.train.selfplay import play_selfplay  # noqa: E402

SHAPES = {"tiny": ([64, 32], 1), "small": ([512, 256], 4), "medium": ([1024, 1024, 512], 4),
          "paper": ([2048, 2048, 512], 10)}
SAMPLES_PER_GAME = 9 * 52  # 3 passes over the latest 3 batches, 52 recorded plies per game


def measure(shape: str, games: int, steps: int, device: torch.device) -> dict:
    hidden, blocks = SHAPES[shape]
    torch.manual_seed(0)
    model = PolicyValueNet(hidden=hidden, num_blocks=blocks).to(device).eval()
    evaluator = NetworkEvaluator(model, device=device)
    search = MCTSConfig(search_forced=True)
    play_selfplay(evaluator, 2, np.random.default_rng(1), search)  # warm-up
    started = time.perf_counter()
    records = play_selfplay(evaluator, games, np.random.default_rng(0), search)
    play_seconds = time.perf_counter() - started
    replay = ReplayBuffer(max_batches=1)
    replay.add(records)
    optimizer = make_optimizer(model)
    rng = np.random.default_rng(0)
    batches = []
    while len(batches) < steps + 5:
        batches.extend(replay.minibatches(64, 1, rng))
    for batch in batches[:5]:  # warm-up
        train_step(model, optimizer, batch, device)
    if device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for batch in batches[5:steps + 5]:
        train_step(model, optimizer, batch, device)
    if device.type == "cuda":
        torch.cuda.synchronize()
    learn_seconds = time.perf_counter() - started
    games_per_s = games / play_seconds
    samples_per_s = 64 * steps / learn_seconds
    play_time = 1.0 / games_per_s
    learn_time = SAMPLES_PER_GAME / samples_per_s
    return {"shape": shape, "parameters": num_parameters(model), "games": games,
            "selfplay_games_per_s": games_per_s, "learner_samples_per_s": samples_per_s,
            "learner_share": learn_time / (play_time + learn_time),
            "train_games_per_s": 1.0 / (play_time + learn_time)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--sizes", default="small,medium,paper")
    parser.add_argument("--games", type=int, default=64)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available()
                          else ("cpu" if args.device == "auto" else args.device))
    rows = [measure(s, args.games, args.steps, device) for s in args.sizes.split(",")]
    print(f"{'size':8} {'params':>11} {'self-play games/s':>18} {'learner samples/s':>18} "
          f"{'learner share':>14} {'train games/s':>14}")
    for r in rows:
        print(f"{r['shape']:8} {r['parameters']:>11,} {r['selfplay_games_per_s']:>18.2f} "
              f"{r['learner_samples_per_s']:>18.0f} {r['learner_share']:>14.2f} "
              f"{r['train_games_per_s']:>14.2f}")
    result = {"device": str(device), "threads": torch.get_num_threads(),
              "machine": platform.processor() or platform.machine(), "rows": rows}
    if device.type == "cuda":
        result["gpu"] = torch.cuda.get_device_name(device)
    if args.json:
        print(f"wrote {write_json_atomic(args.json, result)}")


if __name__ == "__main__":
    main()
