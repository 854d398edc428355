"""Speed of the full ScrofaZero player against Mr. Greed, measured in the same games.

Plays ScrofaZero (seats 0, 2: 9 stratified deals on 2 important cards, 10 + 2x search, IEC
weighting on) against Mr. Greed (seats 1, 3, 20 samples) on the first standard deals and times
every decision of each player. Reports seconds per game spent by each player (its two seats'
decisions), their ratio, and the original's 4.7 s per game (6.2 s with weighting) on a GPU as
the anchor; also the same with our weighting.draws = 8 (stratum weights from 8 x more deals).
The network is the default preset (`model=small`), freshly initialised unless --checkpoint
is given (speed does not depend on the weights once denormals are flushed, nn/evaluator.py).
Usage: python benchmarks/agent.py --json PATH [--games 16] [--checkpoint PATH] [--threads 1]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import time

import numpy as np
import torch

from scrofazero.agents.mr_greed import MrGreed
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent
from scrofazero.atomic import write_json_atomic
from scrofazero.config import ModelConfig
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.checkpoint import load_model
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.iec import IECConfig, effective_sample_size
from scrofazero.sampling.sampler import SamplingConfig
from scrofazero.search.mcts import MCTSConfig

ORIGINAL_SECONDS = 4.7  # original full agent per game, no weighting (docs/rules.md section 15)
ORIGINAL_SECONDS_WEIGHTED = 6.2
TARGET_SECONDS = 1.0  # project target on a 2-core CPU


class Timed:
    """Wraps a player; accumulates the seconds spent in its decisions."""

    def __init__(self, agent):
        self.agent, self.seconds, self.decisions, self.ess = agent, 0.0, 0, []

    def act(self, view, rng):
        started = time.perf_counter()
        card = self.agent.act(view, rng)
        self.seconds += time.perf_counter() - started
        self.decisions += 1
        last = getattr(self.agent, "last", None)
        if last is not None:
            self.ess.append(effective_sample_size(last.weights))
            self.agent.last = None
        return card


def measure(model, games: int, iec_draws: int) -> dict:
    # The paper's settings, spelled out (the player's defaults are others since).
    sz = Timed(ScrofaZeroAgent(model=model, weighting=IECConfig(draws=iec_draws),
                               sampling=SamplingConfig(method="stratified", per_stratum=1),
                               search=MCTSConfig(budget_base=10, budget_per_legal=2)))
    greed = Timed(MrGreed(num_samples=20))
    for g, deal in enumerate(load_deals(limit=games)):
        state = GongzhuState(deal, 0)
        agents = [sz, greed, sz, greed]
        while not state.is_terminal():
            seat = state.current_player
            rng = np.random.default_rng([g, len(state.history)])
            state.apply(agents[seat].act(state.view(seat), rng))
    return {
        "scrofazero_seconds_per_game": sz.seconds / games,
        "greed_seconds_per_game": greed.seconds / games,
        "ratio_to_greed": sz.seconds / greed.seconds,
        "searched_decisions_per_game": len(sz.ess) / games,
        "mean_ess": float(np.mean(sz.ess)) if sz.ess else float("nan"),
        "network_states_per_game": sz.agent.evaluator.states / games,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True, help="where to write the results")
    parser.add_argument("--games", type=int, default=16)
    parser.add_argument("--checkpoint", default=None)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (small batches run best on one; 0: torch default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)
    if args.checkpoint:
        model = load_model(args.checkpoint)
    else:
        torch.manual_seed(0)
        model = PolicyValueNet.from_config(dataclasses.asdict(ModelConfig()))
    measure(model, 1, 1)  # warm-up: numba compilation, torch first calls
    paper = measure(model, args.games, 1)
    ours = measure(model, args.games, 8)
    result = {
        **paper,
        "iec_draws_8": ours,
        "original_seconds_per_game": ORIGINAL_SECONDS,
        "original_seconds_per_game_weighted": ORIGINAL_SECONDS_WEIGHTED,
        "target_seconds_per_game": TARGET_SECONDS,
        "games": args.games,
        "checkpoint": args.checkpoint,
        "torch_threads": torch.get_num_threads(),
        "cpu_count": os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
    }
    print(f"ScrofaZero (9 stratified deals, 10 + 2x, IEC): "
          f"{paper['scrofazero_seconds_per_game']:.3f} s per game "
          f"(target < {TARGET_SECONDS:.0f} s; original {ORIGINAL_SECONDS_WEIGHTED} s on a GPU); "
          f"with iec_draws 8: {ours['scrofazero_seconds_per_game']:.3f} s")
    print(f"Mr. Greed in the same games: {paper['greed_seconds_per_game']:.3f} s per game; "
          f"ScrofaZero / Greed = {paper['ratio_to_greed']:.2f}")
    print(f"wrote {write_json_atomic(args.json, result)}")


if __name__ == "__main__":
    main()
