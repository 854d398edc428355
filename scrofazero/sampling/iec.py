"""Bayesian weighting of sampled deals by the other players' earlier plays (the paper's
"integral over equivalent class", IEC; docs/rules.md section 13).

A sampled deal is more believable when the other players' actual plays look sensible in it. For
each earlier play by another seat that informs (`IECConfig.plays`; the paper's: a card ranked 8
or higher in the suit now being followed, or any suit when the viewer leads, small cards being
nearly interchangeable; ours adds every discard, a card played off the led suit), the moment is
replayed in every sampled deal, the policy network is asked from that player's view (its own
hand exact, every card it could not see 1/3 in each other hand) and the deal's weight is
multiplied by exp(-beta_post x regret), regret = (max legal logit - played logit) / beta in
points (the policy was trained towards softmax(beta x Q), so a logit gap / beta is a Q gap).
All deals and all plays of one decision go through the network in one call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import numpy as np

from scrofazero.games.gongzhu.batch import StateBatch, legal_mask, step
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.nn.encoding import encode_own_view
from scrofazero.settings import Count, Fraction, NonNegative, Positive, choice

FORMS = ("exp", "linear")
PLAYS = ("relevant", "discards", "all")
MIN_RANK = 6  # rank index of the 8 (2 -> 0)

Policy = Callable[[np.ndarray], np.ndarray]  # encoded inputs [N, 434] -> logits [N, 52]


@dataclass
class IECConfig:
    """How the ScrofaZero player weighs its sampled deals (`scrofazero.weighting` of
    evaluate.py)."""

    enabled: bool = True  # reweight the deals by the other players' earlier plays (the paper)
    # posterior temperature per point of regret (paper: 0.015)
    beta_post: NonNegative = 0.015
    # the policy target's inverse temperature per point: logit gap / beta = points
    beta: Positive = 0.2
    # exp: exp(-beta_post x regret) | linear: the original max(floor, 1 - beta_post x regret)
    form: Annotated[str, choice(*FORMS)] = "exp"
    floor: Fraction = 0.1  # lowest factor of the linear form
    # deals weighed per searched deal (1: the paper; m > 1: see ScrofaZeroAgent.weigh)
    draws: Count = 1
    # which earlier plays of other seats inform: relevant (the paper's: rank 8+, led suit when
    # following) | discards (those and every card played off the led suit) | all
    plays: Annotated[str, choice(*PLAYS)] = "relevant"


def relevant_plays(view: InfoView, plays: str = "relevant") -> list[int]:
    """Indices into view.history of the plays that inform the weights, all by other seats.

    Args:
        view: the deciding seat's information.
        plays: "relevant" (the paper's), a card of rank 8 or higher, in the led suit when
            following, any suit when the viewer leads; "discards", those and every card played
            off the suit led to its trick; "all", every play.
    """
    if plays not in PLAYS:
        raise ValueError(f"unknown IEC plays {plays!r}; choose from {', '.join(PLAYS)}")
    led = view.trick[0] // 13 if view.trick else None
    history = view.history

    def informs(t: int, card: int) -> bool:
        if plays == "all":
            return True
        if card % 13 >= MIN_RANK and (led is None or card // 13 == led):
            return True
        # A discard: not the trick's first card (tricks are 4 plays from the game's start).
        return plays == "discards" and t % 4 != 0 and card // 13 != history[t - t % 4][1] // 13

    return [t for t, (seat, card) in enumerate(history) if seat != view.seat and informs(t, card)]


def replay_states(view: InfoView, hands: np.ndarray, plays: list[int]) -> StateBatch:
    """The states just before each play in `plays`, in every deal.

    Args:
        view: the deciding seat's information.
        hands: [D, 4] uint64 current hands of the sampled deals.
        plays: indices into view.history, ascending.

    Returns:
        A StateBatch of len(plays) x D rows, play-major (row i * D + d is play plays[i] in
        deal d).
    """
    hands = np.asarray(hands, dtype=np.uint64)
    d = hands.shape[0]
    played_by = np.zeros(4, dtype=np.uint64)
    for seat, card in view.history:
        played_by[seat] |= np.uint64(1) << np.uint64(card)
    s = StateBatch(
        hands=hands | played_by[None, :],
        piles=np.zeros((d, 4), dtype=np.int32),
        trick=np.full((d, 4), -1, dtype=np.int8),
        trick_len=np.zeros(d, dtype=np.int8),
        leader=np.full(d, view.first_leader, dtype=np.int8),
        num_played=np.zeros(d, dtype=np.int8),
    )
    snapshots = []
    wanted = set(plays)
    for t in range(max(plays) + 1 if plays else 0):
        if t in wanted:
            snapshots.append(s)
        # Real plays are legal in every deal consistent with the view (voids are respected).
        s = step(s, np.full(d, view.history[t][1], dtype=np.int64), check=False)
    return StateBatch.concat(snapshots) if snapshots else s.take(np.zeros(0, dtype=np.int64))


def iec_log_weights(view: InfoView, hands: np.ndarray, policy: Policy,
                    config: IECConfig | None = None) -> tuple[np.ndarray, int]:
    """Log-likelihood factor of each sampled deal under the other seats' earlier plays.

    Args:
        view: the deciding seat's information.
        hands: [D, 4] uint64 current hands of the sampled deals.
        policy: the policy network, encoded inputs [N, 434] -> logits [N, 52].
        config: the weighting settings (None: IECConfig's defaults).

    Returns:
        (log factors [D], 0 for every deal when no play informs; the number of network queries
        made, len(informing plays) x D, in one call).
    """
    config = config or IECConfig()
    hands = np.asarray(hands, dtype=np.uint64)
    d = hands.shape[0]
    plays = relevant_plays(view, config.plays)
    if not plays or config.beta_post == 0:
        return np.zeros(d), 0
    states = replay_states(view, hands, plays)  # [P * D]
    logits = np.asarray(policy(encode_own_view(states)), dtype=np.float64)  # [P * D, 52]
    if logits.shape != (len(states), NUM_CARDS):
        raise ValueError(f"policy returned shape {logits.shape}, expected ({len(states)}, 52)")
    legal = legal_mask(states)  # [P * D, 52]
    card = np.repeat([view.history[t][1] for t in plays], d)  # [P * D]
    best = np.where(legal, logits, -np.inf).max(axis=1)
    gap = best - logits[np.arange(len(states)), card]  # >= 0 logits
    regret = np.maximum(gap, 0.0) / config.beta  # points
    if config.form == "exp":
        log_factor = -config.beta_post * regret
    else:
        log_factor = np.log(np.maximum(config.floor, 1.0 - config.beta_post * regret))
    return log_factor.reshape(len(plays), d).sum(axis=0), len(states)


def combine(prior: np.ndarray, log_factor: np.ndarray) -> np.ndarray:
    """Posterior weights [D] summing to 1: prior x exp(log_factor), computed stably.

    Args:
        prior: [D] non-negative prior weights of the deals.
        log_factor: [D] log-likelihood factors (iec_log_weights).
    """
    prior = np.asarray(prior, dtype=np.float64)
    z = np.log(np.maximum(prior, 1e-300)) + np.asarray(log_factor, dtype=np.float64)
    w = np.exp(z - z.max())
    posterior: np.ndarray = w / w.sum()
    return posterior


def effective_sample_size(weights: np.ndarray) -> float:
    """Kish's effective sample size (sum w)^2 / sum w^2 of non-negative `weights` [D]."""
    w = np.asarray(weights, dtype=np.float64)
    return float(w.sum() ** 2 / np.square(w).sum())
