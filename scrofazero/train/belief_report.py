"""How well the card-location network knows where the cards lie, on held-out games.

Held-out log-loss (nats per unseen card whose holder is uncertain) and accuracy of the network
and of the deals the player draws from it, against the exact uniform prior under the known hand
sizes and voids: all cards and the deciding cards, by trick, by the kind of player holding the
card (`report`); and the paper's inference (IEC) on the same positions (`iec_comparison`).
Reads the games of train/hidden_games.py.

    python -m scrofazero.train.belief_report data=[DIR,...] [beliefs=PATH] [games=200]
        [iec_games=0] [json=PATH]
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from scrofazero import shipped
from scrofazero.agents.mr_greed import GreedPlayModel
from scrofazero.atomic import write_json_atomic
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.behaviour import load_behaviour
from scrofazero.nn.belief import Positions, load_belief
from scrofazero.nn.checkpoint import load_model
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.sampling.belief import (
    MIN_WEIGHT,
    fitted_weights,
    log_partition,
    marginals,
    view_weights,
)
from scrofazero.sampling.iec import IECConfig, combine, iec_log_weights
from scrofazero.sampling.oracle import DECIDING
from scrofazero.sampling.particles import ParticleWeigher, PlayModel, WeighingConfig
from scrofazero.sampling.policy import BehaviourPlayModel
from scrofazero.sampling.sampler import SamplingConfig
from scrofazero.sampling.uniform import owners_to_hands, sample_owners
from scrofazero.settings import Count, NonNegativeInt, run_module
from scrofazero.train.hidden_games import KINDS, load_shards, positions, split

# The report's alternative to the player's fitting: calibrated only while more than this many cards
# are unseen (tricks 1-8), the plain product after (sampling.calibrate_above).
FIT_EARLY = 15
# the folders of game shards the reports read (train/hidden_games.py load_shards)
Data = str | Path | Iterable[str | Path]
# weighing_report's row of one card: (trick, deciding, method -> the true holder's probability
# shrunk toward the uniform prior, method -> that probability as found)
Row = tuple[int, bool, dict[str, float], dict[str, float]]

def uniform_prior(p: Positions, allowed: np.ndarray) -> np.ndarray:
    """[B, 52, 3] exact marginals of the uniform distribution over the deals consistent with
    each position's hand sizes and voids (the constrained product model with weights 1)."""
    return constrained(p, allowed.astype(np.float64), fit=False)


def _hand_sizes(p: Positions, row: int) -> np.ndarray:
    """[3] int64 cards still held by the seats 1..3 after the viewer of position `row`."""
    played = p.seats[row, :p.plies[row]]
    return np.array([13 - np.sum(played == (p.viewer[row] + 1 + j) % 4) for j in range(3)],
                    dtype=np.int64)


def constrained(p: Positions, cells: np.ndarray, fit: bool = True,
                above: int = SamplingConfig.calibrate_above) -> np.ndarray:
    """[B, 52, 3] marginals of the deals the sampler draws: the constrained product model of
    `cells` [B, 52, 3] under each position's hand sizes, calibrated to `cells` when `fit` and
    more than `above` cards are unseen (sampling/belief.py fitted_weights; with the defaults the
    distribution `sampling.method=belief` draws from)."""
    allowed = cells > 0
    out = np.zeros(allowed.shape)
    for row in range(len(p)):
        cards = np.flatnonzero(allowed[row].any(axis=1))
        if not len(cards):
            continue
        sizes = _hand_sizes(p, row)
        w = cells[row, cards]
        out[row, cards] = marginals(fitted_weights(w, sizes, SamplingConfig.calibrate if fit else 0,
                                                         above), sizes)
    return out


def true_state_log_ratio(p: Positions, cells: np.ndarray, target: np.ndarray,
                         fit: bool = True) -> np.ndarray:
    """[B] log of the true-state sampling ratio of each position (Solinas, Rebstock and Buro
    2019): the probability the sampler gives the true world (the calibrated product model
    of `cells`, as `constrained` draws, or its plain product without `fit`) times the number of
    worlds consistent with the view; 0 for the uniform sampler, > 0 when the true world is
    likelier than under it. Positions with nothing unseen give 0.

    Args:
        p: B positions.
        cells: [B, 52, 3] the belief's cells (0 where a seat cannot hold a card).
        target: [B, 52] the true holder's relative seat of each unseen card (-1 for seen).
        fit: calibrate the product to the belief's marginals, as the player does.
    """
    out = np.zeros(len(p))
    for row in range(len(p)):
        cards = np.flatnonzero(target[row] >= 0)
        if not len(cards):
            continue
        sizes = _hand_sizes(p, row)
        w = cells[row, cards]
        if fit:
            w = fitted_weights(w, sizes, SamplingConfig.calibrate)
        with np.errstate(divide="ignore"):
            log_q = np.log(w[np.arange(len(cards)), target[row, cards]]).sum()
        out[row] = (log_q - log_partition(w, sizes)
                    + log_partition((cells[row, cards] > 0).astype(float), sizes))
    return out


def report(data: Data, beliefs: str | None, games: int = 200, val_fraction: float = 0.05
           ) -> dict[str, Any]:
    """Held-out log-loss (nats per unseen card) and accuracy of the belief network against the
    exact uniform prior: all unseen cards and the deciding cards, by trick, and by the kind of
    player holding the card. logloss_belief scores the network's own per-card softmax;
    logloss_sampled the marginals of the deals the player draws from it (the default settings:
    calibrated under the exact hand sizes); logloss_fit_early those calibrated only while more
    than 15 cards are unseen, the product later (`calibrate_above=15`); logloss_product those of
    the constrained product of its probabilities as they are (`calibrate=0`). true_state: the
    mean log true-state sampling ratio of the deals the player draws (true_state_log_ratio), per
    position (its by_trick rows: positions in that trick)."""
    records = load_shards(data)
    _, val_g = split(records, val_fraction)
    val_g = val_g[:games]
    p, target, allowed = positions(records, np.repeat(val_g, NUM_CARDS),
                                   np.tile(np.arange(NUM_CARDS), len(val_g)))
    model = load_belief(beliefs)
    probs = np.concatenate([model.relative(p.take(slice(s, s + 4096)))
                            for s in range(0, len(p), 4096)])
    prior = uniform_prior(p, allowed)
    cells = np.where(allowed, np.maximum(probs, MIN_WEIGHT), 0.0)
    fitted = constrained(p, cells)
    early = constrained(p, cells, above=FIT_EARLY)
    product = constrained(p, cells, fit=False)
    rows, cards = np.nonzero(target >= 0)
    t = target[rows, cards]
    ll_net = -np.log(np.maximum(probs[rows, cards, t], 1e-12))
    ll_fit = -np.log(np.maximum(fitted[rows, cards, t], 1e-12))
    ll_early = -np.log(np.maximum(early[rows, cards, t], 1e-12))
    ll_prod = -np.log(np.maximum(product[rows, cards, t], 1e-12))
    ll_uni = -np.log(np.maximum(prior[rows, cards, t], 1e-12))
    uncertain = allowed[rows, cards].sum(axis=1) > 1
    acc_net = probs[rows, cards].argmax(axis=1) == t
    acc_uni = prior[rows, cards].argmax(axis=1) == t
    trick = p.plies[rows] // 4
    deciding = np.isin(cards, DECIDING)
    holder_kind = records.kinds[np.repeat(val_g, NUM_CARDS)[rows],
                                (p.viewer[rows] + 1 + t) % 4]

    def stats(sel: np.ndarray) -> dict[str, Any]:
        sel = sel & uncertain
        n = int(sel.sum())
        if not n:
            return {"cards": 0}
        return {"cards": n, "logloss_belief": float(ll_net[sel].mean()),
                "logloss_sampled": float(ll_fit[sel].mean()),
                "logloss_fit_early": float(ll_early[sel].mean()),
                "logloss_product": float(ll_prod[sel].mean()),
                "logloss_uniform": float(ll_uni[sel].mean()),
                "accuracy_belief": float(acc_net[sel].mean()),
                "accuracy_uniform": float(acc_uni[sel].mean())}

    ratio = true_state_log_ratio(p, cells, target)
    position_trick = p.plies // 4
    names = list(KINDS)
    return {"games": len(val_g), "all": stats(np.ones_like(uncertain)),
            "true_state": {"log_ratio": float(ratio.mean()),
                           "by_trick": [float(ratio[position_trick == k].mean())
                                        for k in range(13)]},
            "deciding": stats(deciding),
            "by_trick": [stats(trick == k) for k in range(13)],
            "deciding_by_trick": [stats(deciding & (trick == k)) for k in range(13)],
            "by_holder_kind": {names[k]: stats(holder_kind == k)
                               for k in np.unique(holder_kind)}}


def iec_comparison(data: Data, beliefs: str | None, checkpoint: str, games: int = 60,
                   draws: int = 32, seed: int = 0, val_fraction: float = 0.05,
                   shrink: float = 0.1) -> dict[str, Any]:
    """The belief network against the paper's inference (IEC) on the same held-out positions.

    One decision per trick of each of the first `games` held-out games (ply 4t + t mod 4). At
    each, `draws` deals exactly uniform over those consistent with the view are weighed by IEC
    (sampling/iec.py, the paper's settings, the policy of `checkpoint`); the card-location
    marginals of the weighted deals are scored against the true holders, beside the same deals
    equally weighted (what IEC starts from), the belief network's probabilities and the exact
    uniform prior. Finite samples give some cells 0, so both sampled estimates are shrunk
    toward the exact prior by `shrink` (p = (1 - shrink) x sampled + shrink x prior) before
    their log-loss; the mean probability given to the true holder needs no shrinking."""
    records = load_shards(data)
    _, val_g = split(records, val_fraction)
    val_g = val_g[:games]
    tricks = np.arange(13)
    g = np.repeat(val_g, 13)
    plies = np.tile(4 * tricks + tricks % 4, len(val_g))
    p, target, allowed = positions(records, g, plies)
    belief = load_belief(beliefs).relative(p)
    prior = uniform_prior(p, allowed)
    evaluator = NetworkEvaluator(load_model(checkpoint))
    policy = lambda x: evaluator.forward_features(x)[0]  # noqa: E731
    rng = np.random.default_rng(seed)
    equal = np.zeros_like(prior)
    weighted = np.zeros_like(prior)
    ess = np.zeros(len(p))
    for row in range(len(p)):
        game, ply = int(g[row]), int(plies[row])
        state = GongzhuState(records.deal[game], int(records.leader[game]))
        for t in range(ply):
            state.apply(int(records.cards[game, t]))
        viewer = int(p.viewer[row])
        view = state.view(viewer)
        owners = sample_owners(view, draws, rng)  # [K, 52]
        log_factor, _ = iec_log_weights(view, owners_to_hands(owners), policy, IECConfig())
        w = combine(np.full(draws, 1.0 / draws), log_factor)
        ess[row] = 1.0 / np.square(w).sum()
        for j in range(3):
            hit = owners == (viewer + 1 + j) % 4  # [K, 52]
            equal[row, :, j] = hit.mean(axis=0)
            weighted[row, :, j] = w @ hit
    equal = (1 - shrink) * equal + shrink * prior
    weighted = (1 - shrink) * weighted + shrink * prior
    rows, cards = np.nonzero(target >= 0)
    t = target[rows, cards]
    uncertain = allowed[rows, cards].sum(axis=1) > 1
    deciding = np.isin(cards, DECIDING)
    late = p.plies[rows] // 4 >= 6

    def score(q: np.ndarray, sel: np.ndarray) -> dict[str, float]:
        sel = sel & uncertain
        true = q[rows, cards, t][sel]
        return {"logloss": float(-np.log(np.maximum(true, 1e-12)).mean()),
                "p_true": float(true.mean()),
                "accuracy": float((q[rows, cards].argmax(axis=1) == t)[sel].mean())}

    methods = {"belief": belief, "iec": weighted, "equal_draws": equal, "uniform": prior}
    return {"games": len(val_g), "positions": len(p), "draws": draws, "shrink": shrink,
            "iec_mean_ess": float(ess.mean()),
            "cards": {"all": int(uncertain.sum()), "deciding": int((uncertain & deciding).sum())},
            **{f"{part}": {name: score(q, sel) for name, q in methods.items()}
               for part, sel in (("all", np.ones_like(uncertain)), ("deciding", deciding),
                                 ("tricks_7_13", late))}}


def weighing_report(data: Data, beliefs: str | None, behaviour: str | None = None,
                    games: int = 40, val_fraction: float = 0.05, seed: int = 0,
                    shrink: float = 0.1, greed_draws: int = 64,
                    weighing: WeighingConfig | None = None, posterior: bool = True
                    ) -> dict[str, Any]:
    """Worlds weighed by the plays against the belief, on held-out games.

    At every decision of seat 0 in each of the first `games` held-out games (its hand carried
    through, as a player's pool is), the card-location belief of: the deals `method=belief`
    draws (the belief's calibrated product), the pool weighed by the behaviour network
    (`method=policy`), the pool weighed by Mr. Greed's own program at the Mr. Greed seats and
    the behaviour network at the others (`method=posterior`, in games with a Mr. Greed), and
    the exact uniform prior. Each is scored on the
    true holder of every card whose holder is uncertain: the mean probability given to it and
    the log-loss after shrinking toward the uniform prior by `shrink` (a pool of finitely many
    worlds gives some cells 0); all cards, the deciding cards, by trick; with the pools' mean
    effective sample size.

    Args:
        data: folders of game shards.
        beliefs: the card-location network file (None: shipped).
        behaviour: the behaviour network file (None: shipped).
        games: held-out games scored.
        val_fraction: the held-out share (as the fits hold games out).
        seed: seeds the weighers' proposals.
        shrink: the share of the uniform prior mixed into every method before its log-loss.
        greed_draws: deals behind each estimate of Mr. Greed's play probability.
        weighing: the weighers' settings (default WeighingConfig()).
        posterior: whether to weigh by Mr. Greed's program too (the slow part).
    """
    records = load_shards(data)
    _, val_g = split(records, val_fraction)
    val_g = val_g[:games]
    belief_model = load_belief(beliefs)
    policy = BehaviourPlayModel(load_behaviour(behaviour))
    weighing = weighing or WeighingConfig()
    greed = list(KINDS).index("greed")
    scores: dict[str, list[float]] = {m: [] for m in ("belief", "policy", "posterior",
                                                     "uniform")}
    rows: list[Row] = []  # (trick, deciding, method -> p_true)
    ess: dict[str, list[float]] = {"policy": [], "posterior": []}
    rng = np.random.default_rng(seed)
    for game in val_g:
        state = GongzhuState(records.deal[game], int(records.leader[game]))
        weighers = {m: ParticleWeigher(weighing) for m in ("policy", "posterior")}
        greeds = {s: GreedPlayModel(draws=greed_draws, seed=seed) for s in range(1, 4)
                  if records.kinds[game, s] == greed and posterior}
        for ply in range(NUM_CARDS):
            if state.current_player == 0 and len(state.legal_actions()) > 1:
                view = state.view(0)
                belief = belief_model.probabilities(view)
                cards, sizes, others, cells = view_weights(view, belief)
                if len(cards):
                    found = {"belief": marginals(fitted_weights(cells, sizes), sizes),
                             "uniform": marginals((cells > 0).astype(float), sizes)}
                    models: dict[str, dict[int, PlayModel]] = {
                        "policy": {s: policy for s in (1, 2, 3)},
                        "posterior": {**{s: policy for s in (1, 2, 3)}, **greeds}}
                    for m, weigher in weighers.items():
                        if m == "policy" or greeds:
                            w = weigher.weigh(view, belief, models[m], 18, rng)
                            found[m] = w.marginals[np.ix_(cards, np.asarray(others))]
                            ess[m].append(w.ess)
                    rows += _scored(state, ply, cards, others, cells, found, shrink)
            state.apply(int(records.cards[game, ply]))

    def summary(sel: list[Row]) -> dict[str, Any]:
        return _summary(sel, scores)

    return {"games": len(val_g), "shrink": shrink, "weighing": dataclasses.asdict(weighing),
            "ess": {m: float(np.mean(v)) if v else None for m, v in ess.items()},
            "all": summary(rows), "deciding": summary([r for r in rows if r[1]]),
            # the cards of the games with a Mr. Greed, where every method is scored
            "with_greed": summary([r for r in rows if "posterior" in r[2]]),
            "deciding_with_greed": summary([r for r in rows if r[1] and "posterior" in r[2]]),
            "by_trick": [summary([r for r in rows if r[0] == t]) for t in range(13)]}


def _scored(state: GongzhuState, ply: int, cards: np.ndarray, others: tuple[int, ...],
            cells: np.ndarray, found: dict[str, np.ndarray], shrink: float) -> list[Row]:
    """weighing_report's rows of one decision: for each card whose holder is uncertain, (trick,
    deciding, method -> the true holder's probability shrunk toward the uniform prior, method
    -> that probability as found)."""
    holder = [others.index(next(s for s in range(4) if state.hands[s] >> c & 1)) for c in cards]
    uncertain = (cells > 0).sum(axis=1) > 1
    return [(ply // 4, int(cards[i]) in DECIDING,
             {m: (1 - shrink) * q[i, holder[i]] + shrink * found["uniform"][i, holder[i]]
              if m != "uniform" else q[i, holder[i]] for m, q in found.items()},
             {m: q[i, holder[i]] for m, q in found.items()})
            for i in np.flatnonzero(uncertain)]


def _summary(sel: list[Row], methods: Iterable[str]) -> dict[str, Any]:
    """Mean log-loss (of the shrunk probabilities) and mean probability of the true holder of
    the rows `sel`, by method."""
    out: dict[str, Any] = {"cards": len(sel)}
    for m in methods:
        shrunk = [r[2][m] for r in sel if m in r[2]]
        raw = [r[3][m] for r in sel if m in r[3]]
        if shrunk:
            out[m] = {"logloss": float(-np.log(np.maximum(shrunk, 1e-12)).mean()),
                      "p_true": float(np.mean(raw)), "cards": len(raw)}
    return out


@dataclass
class ReportConfig:
    """`python -m scrofazero.train.belief_report`: which games, which network."""

    data: list[str] = field(default_factory=list)  # folders of game shards (their held-out games)
    beliefs: str | None = None  # the card-location network (None: the shipped one)
    games: Count = 200  # held-out games scored
    # also score IEC's weighted deals on one decision per trick of this many held-out games (slow:
    # the policy network replays the plays)
    iec_games: NonNegativeInt = 0
    iec_draws: Count = 32  # deals IEC weighs per position
    checkpoint: str | None = None  # IEC's policy network (None: shipped)
    # also score the worlds weighed by the plays (policy, posterior) on this many held-out games
    # (weighing_report; slow where Mr. Greed's program weighs)
    weighing_games: NonNegativeInt = 0
    behaviour: str | None = None  # their behaviour network (None: shipped)
    greed_draws: Count = 64  # deals behind each estimate of Mr. Greed's play
    json: str | None = None  # write the whole result here


def print_report(settings: ReportConfig) -> dict[str, Any]:
    """The module runner's job: the report printed, with IEC's and the weighed worlds' when
    asked, and written."""
    if not settings.data:
        raise ValueError("data=[DIR,...]: give the folders of the games to score")
    result = report(settings.data, settings.beliefs, settings.games)
    print(json.dumps({k: result[k] for k in ("games", "all", "deciding")}, indent=1))
    if settings.iec_games:
        result["iec_comparison"] = iec_comparison(
            settings.data, settings.beliefs, shipped.network_file(settings.checkpoint),
            settings.iec_games, settings.iec_draws)
        print(json.dumps(result["iec_comparison"], indent=1))
    if settings.weighing_games:
        result["weighing"] = weighing_report(settings.data, settings.beliefs, settings.behaviour,
                                             settings.weighing_games,
                                             greed_draws=settings.greed_draws)
        print(json.dumps({k: result["weighing"][k] for k in ("games", "ess", "all", "deciding")},
                         indent=1))
    if settings.json:
        write_json_atomic(settings.json, result)
    return result


if __name__ == "__main__":
    run_module(ReportConfig, print_report)
