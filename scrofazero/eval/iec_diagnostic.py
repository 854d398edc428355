"""Belief quality: does the Bayesian (IEC) weighting put more probability on the truth?

Plays games in which the true deal is known, and at every searched decision of every seat
samples deals stratified on the important cards with exact stratum priors. Because the strata
enumerate every placement of the important cards and carry their exact uniform probabilities,
the prior marginal of each important card's holder is exactly the uniform-sampling belief; the
IEC posterior reweights the same deals. The diagnostic reports, over positions where at least
one earlier play informs the weights, the mean log-likelihood gain

    gain = mean over (position, important card) of
           log P_iec(true holder) - log P_uniform(true holder)

(in nats; > 0 means the weighting moves belief towards the truth), how often each belief's most
likely holder is right, and the effective sample size of the IEC weights.
"""

from __future__ import annotations

import math

import numpy as np
from tqdm import tqdm

from scrofazero.agents import Agent
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.sampling.iec import (
    IECConfig,
    combine,
    effective_sample_size,
    iec_log_weights,
    relevant_plays,
)
from scrofazero.sampling.stratified import sample_stratified
from scrofazero.sampling.uniform import owners_to_hands


def belief_quality(players: list[Agent], policy, deals, seed: int, num_important: int = 2,
                   per_stratum: int = 1, iec: IECConfig | None = None,
                   progress: bool = False, seats=(0, 1, 2, 3)) -> dict:
    """Score the IEC belief in the games of `players` (4, by seat) on `deals` [G, 52] (leader 0),
    at the decisions of `seats` (all four by default; (0, 2) scores one team, as in a WPG game).

    policy: encoded inputs [N, 434] -> logits [N, 52] (the network queried by the weighting).
    Returns a dict of the statistics described in the module docstring."""
    if len(players) != 4:
        raise ValueError(f"belief_quality needs 4 players, got {len(players)}")
    iec = iec or IECConfig()
    gains, right_iec, right_uniform, ess, num_deals = [], [], [], [], []
    positions = informed = 0
    bar = None
    if progress:
        bar = tqdm(total=len(deals), desc="belief", unit="game")
    for g, deal in enumerate(deals):
        state = GongzhuState(deal, 0)
        for ply in range(52):
            seat = state.current_player
            view = state.view(seat)
            rng = np.random.default_rng(np.random.SeedSequence([seed, g, ply]))
            if seat in seats and len(view.legal_actions()) > 1 and view.unseen:
                positions += 1
                if relevant_plays(view, iec.plays):
                    sample = sample_stratified(view, num_important, per_stratum, rng)
                    if sample.important:
                        informed += 1
                        log_factor, _ = iec_log_weights(
                            view, owners_to_hands(sample.owners), policy, iec)
                        weights = combine(sample.weights, log_factor)
                        ess.append(effective_sample_size(weights))
                        num_deals.append(len(weights))
                        others = [s for s in range(4) if s != seat]
                        for _k, card in enumerate(sample.important):
                            truth = next(s for s in range(4) if state.hands[s] >> card & 1)
                            holder = sample.owners[:, card]  # [D]
                            p_iec = np.array([weights[holder == s].sum() for s in others])
                            p_uni = np.array([sample.weights[holder == s].sum() for s in others])
                            t = others.index(truth)
                            gains.append(math.log(max(p_iec[t], 1e-300))
                                         - math.log(max(p_uni[t], 1e-300)))
                            right_iec.append(int(np.argmax(p_iec)) == t)
                            right_uniform.append(int(np.argmax(p_uni)) == t)
            state.apply(players[seat].act(view, rng))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    n = len(gains)
    gain = np.asarray(gains, dtype=np.float64)
    return {
        "games": len(deals),
        "positions": positions,
        "informed_positions": informed,
        "card_predictions": n,
        "mean_log_likelihood_gain": float(gain.mean()) if n else float("nan"),
        "gain_stderr": float(gain.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan"),
        "accuracy_iec": float(np.mean(right_iec)) if n else float("nan"),
        "accuracy_uniform": float(np.mean(right_uniform)) if n else float("nan"),
        "mean_ess": float(np.mean(ess)) if ess else float("nan"),
        "mean_deals": float(np.mean(num_deals)) if num_deals else float("nan"),
        "beta_post": iec.beta_post,
        "plays": iec.plays,
        "seats": list(seats),
        "num_important": num_important,
    }
