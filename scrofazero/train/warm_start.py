"""Warm start from Mr. Greed's play: supervised targets before self-play.

As AlphaGo began from supervised play, a fresh run may first imitate the baseline: four Mr.
Greeds play `games` random deals (each seat sees only its own view, as at the table), every
one of the 52 plies is recorded with the full-information encoding self-play uses, and the
network is fitted for `epochs` passes with self-play's loss (KL + value_weight x value error):
- policy target: the card Greed played (one-hot over the legal cards);
- value target: the points still to come for the mover's team, i.e. the game's final team
  difference minus the current one (the mid-game valuation), which is what the value head
  predicts in self-play too.
The fit has its own Adam (supervised settings: a larger step and minibatch than the
paper's self-play learner), so the run's optimiser starts self-play fresh.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from scrofazero.agents.mr_greed import MrGreed
from scrofazero.games.gongzhu.batch import StateBatch, legal_mask
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.encoding import encode
from scrofazero.settings import Count, NonNegative, NonNegativeInt, Positive, check_bounds
from scrofazero.train.learner import make_optimizer, train_step
from scrofazero.train.replay import ReplayBuffer
from scrofazero.train.selfplay import current_values


@dataclass
class WarmStartConfig:
    games: NonNegativeInt = 0  # Mr. Greed games imitated before self-play (0: no warm start)
    epochs: Count = 1  # passes over those games' positions
    lr: Positive = 1e-3  # Adam learning rate of the fit
    betas: list[float] = field(default_factory=lambda: [0.9, 0.999])  # Adam betas of the fit
    minibatch: Count = 256  # positions per step of the fit
    greed_samples: Count = 20  # sampled deals per Greed decision (docs/rules.md section 9)
    value_weight: NonNegative = 0.3  # loss = KL + value_weight x value error during the fit


def check_warm_start(cfg: WarmStartConfig, where: str = "train.warm_start") -> None:
    """Refuse a value outside its field's declared bounds, naming the field (what train.py's
    config check does for the whole config; here for a caller of warm_start itself)."""
    check_bounds(cfg, where)


def greed_records(num_games: int, rng: np.random.Generator, greed_samples: int = 20
                  ) -> dict[str, Any]:
    """Every ply of `num_games` games of four Mr. Greeds on random deals and first leaders.

    Returns the replay fields (replay.FIELDS) for M = 52 x num_games positions: inputs [M, 434]
    uint8 (the 0/1 encoding; the learner casts to float), legal [M, 52] bool, policy_target
    [M, 52] float32 one-hot on Greed's card, value_target [M] float32 final team difference -
    current one for the mover, seat [M] int8; plus game [M] int32, ply [M] int8, deals [G, 52]
    int64, first_leader [G] int8, final_returns [G, 4] float32, seconds (wall time of the games).
    """
    if num_games < 1:
        raise ValueError(f"num_games must be >= 1, got {num_games}")
    started = time.perf_counter()
    greed = MrGreed(greed_samples)
    states: list[GongzhuState] = []
    actions = np.empty(num_games * NUM_CARDS, dtype=np.int64)  # [M]
    final = np.empty((num_games, 4), dtype=np.float32)  # [G, 4]
    deals = np.empty((num_games, NUM_CARDS), dtype=np.int64)  # [G, 52]
    leaders = np.empty(num_games, dtype=np.int8)  # [G]
    for g in range(num_games):
        deals[g] = rng.permutation(NUM_CARDS)
        leaders[g] = rng.integers(4)
        state = GongzhuState(deals[g], leader=int(leaders[g]))
        for ply in range(NUM_CARDS):
            states.append(state.clone())
            card = greed.act(state.view(state.current_player), rng)
            actions[g * NUM_CARDS + ply] = card
            state.apply(card)
        final[g] = state.returns()
    batch = StateBatch.from_states(states)
    m = len(states)
    policy = np.zeros((m, NUM_CARDS), dtype=np.float32)
    policy[np.arange(m), actions] = 1.0
    seat = np.array([s.current_player for s in states], dtype=np.int8)  # [M]
    game = np.repeat(np.arange(num_games, dtype=np.int32), NUM_CARDS)  # [M]
    return {
        "inputs": encode(batch).astype(np.uint8),  # 0/1 features, a quarter of float32's memory
        "legal": legal_mask(batch),
        "policy_target": policy,
        "value_target": (final[game, seat] - current_values(batch)).astype(np.float32),
        "seat": seat,
        "game": game,
        "ply": np.tile(np.arange(NUM_CARDS, dtype=np.int8), num_games),
        "deals": deals,
        "first_leader": leaders,
        "final_returns": final,
        "seconds": time.perf_counter() - started,
    }


def fit(model: torch.nn.Module, records: dict[str, Any], cfg: WarmStartConfig,
        rng: np.random.Generator, device: str | torch.device = "cpu", value_unit: float = 1.0,
        value_loss: str = "rmse") -> list[dict[str, float]]:
    """`cfg.epochs` shuffled passes of supervised steps on `records` (greed_records' fields);
    returns each epoch's mean metrics ({"loss/policy", "loss/value", "loss/total"})."""
    optimizer = make_optimizer(model, cfg.lr, tuple(cfg.betas), weight_decay=1e-4)
    data = ReplayBuffer(max_batches=1)
    data.add(records)
    history = []
    model.train()
    for _ in range(cfg.epochs):
        sums: dict[str, float] = {}
        steps = 0
        for batch in data.minibatches(cfg.minibatch, 1, rng):
            metrics = train_step(model, optimizer, batch, device, value_weight=cfg.value_weight,
                                 value_unit=value_unit, value_loss=value_loss)
            for key, value in metrics.items():
                sums[key] = sums.get(key, 0.0) + value
            steps += 1
        history.append({k: v / steps for k, v in sums.items()})
    model.eval()
    return history


def warm_start(model: torch.nn.Module, cfg: WarmStartConfig, rng: np.random.Generator,
               device: str | torch.device = "cpu", **loss: Any) -> dict[str, Any]:
    """Play cfg.games Greed games and fit `model` to them; returns a summary (games, positions,
    play and fit seconds, per-epoch metrics) for the run's records. `loss`: value_unit and
    value_loss as the run's learner uses them."""
    check_warm_start(cfg)
    records = greed_records(cfg.games, rng, cfg.greed_samples)
    started = time.perf_counter()
    history = fit(model, records, cfg, rng, device, **loss)
    return {
        "games": cfg.games,
        "positions": len(records["value_target"]),
        "play_seconds": records["seconds"],
        "fit_seconds": time.perf_counter() - started,
        "epochs": history,
    }
