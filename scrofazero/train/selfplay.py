"""Perfect-information self-play: games in lockstep, searched by run_mcts, into training records.

Each ply, the games are searched in ONE run_mcts call (the evaluator sees all games' leaves
together). With `search_forced` in the search config (the paper's training, docs/rules.md
section 12) every one of the 52 plies is searched and recorded, so the last plies' exact final
scores anchor the values before them; without it forced moves are played without search and not
recorded. Targets follow docs/rules.md section 12: policy = softmax(beta * root Q) over legal
cards, value = best root Q minus the mover's current team difference ("points still to come"),
or, with outcome_weight > 0, a mix with the game's actual outcome minus that difference.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, cast

import numpy as np
import numpy.typing as npt

from scrofazero.games.gongzhu.batch import (
    GongzhuRules,
    StateBatch,
    current_player,
    is_terminal,
    legal_mask,
    returns,
    step,
)
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.deals import check_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.games.gongzhu.scoring import batch_pile_scores
from scrofazero.nn.encoding import encode
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.search.mcts import MCTSConfig, SearchResult, run_mcts
from scrofazero.search.protocols import Evaluator


@dataclass
class SelfPlayRecords:
    """The searched positions of one self-play batch (M positions, G games).

    Per position: inputs [M, 434] float32 encoding; legal [M, 52] bool; policy_target [M, 52]
    float32 (sums to 1 over legal, 0 elsewhere); value_target [M] float32 points still to come for
    the mover's team (the one trained on), mixed from search_value [M] (best root Q - current team
    difference, the paper's) and outcome_value [M] (the game's final team difference - current
    one) by the outcome_weight of play_selfplay; seat [M] int8 mover; game [M] int32 and ply [M]
    int8 locate the position.
    Per game: deals [G, 52] int64, first_leader [G] int8, actions [G, 52] int8 cards in play
    order, final_returns [G, 4] float32. Totals: games, plies_searched (= M), simulations,
    evaluations (states sent to the evaluator), seconds (wall time). Auxiliary targets the game
    gives for free, per position and relative to the mover (seats p, p+1, p+2, p+3):
    points_target [M, 4] float32 each seat's final pile score; capture_target [M, 16] int8 which
    of those seats captured each scoring card (None in records made before they existed).
    """

    inputs: np.ndarray
    legal: np.ndarray
    policy_target: np.ndarray
    value_target: np.ndarray
    search_value: np.ndarray
    outcome_value: np.ndarray
    seat: np.ndarray
    game: np.ndarray
    ply: np.ndarray
    deals: np.ndarray
    first_leader: np.ndarray
    actions: np.ndarray
    final_returns: np.ndarray
    games: int
    plies_searched: int
    simulations: int
    evaluations: int
    seconds: float
    points_target: np.ndarray | None = None
    capture_target: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.value_target)


def policy_targets(q: np.ndarray, legal: np.ndarray, beta: float = 0.2) -> np.ndarray:
    """softmax(beta * q) over the legal cards with a finite Q -> [R, 52] float32, 0 elsewhere.

    q [R, 52] root Q in points (NaN where illegal or unvisited); legal [R, 52] bool.
    """
    ok = legal & np.isfinite(q)  # [R, 52]
    if not ok.any(axis=1).all():
        raise ValueError("a searched root has no visited legal child; raise the search budget")
    z = np.where(ok, beta * np.where(ok, q, 0.0), -np.inf)  # [R, 52]
    # Subtract the row max so exp never overflows (Q spans hundreds of points).
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)  # exp(-inf) = 0 off the support
    target: np.ndarray = (p / p.sum(axis=1, keepdims=True)).astype(np.float32)
    return target


def visit_targets(visits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Root visit counts [R, 52] normalised over the legal cards -> [R, 52] float32; a root
    searched without visits (budget 0) gets its legal cards uniformly."""
    v = np.where(legal, visits, 0.0)
    total = v.sum(axis=1, keepdims=True)
    v = np.where(total > 0, v, legal.astype(np.float64))
    target: np.ndarray = (v / v.sum(axis=1, keepdims=True)).astype(np.float32)
    return target


def improved_targets(q: np.ndarray, visits: np.ndarray, legal: np.ndarray,
                     prior_logits: np.ndarray, c_visit: float = 50.0,
                     c_scale: float = 0.1) -> np.ndarray:
    """Gumbel MuZero's improved policy: softmax(prior logits + (c_visit + max visits) x c_scale
    x Q rescaled to [0, 1] over the legal visited cards) on the legal cards -> [R, 52] float32.
    Unvisited legal cards take the mean visited Q (their 'completed' value)."""
    ok = legal & np.isfinite(q)
    if not ok.any(axis=1).all():
        raise ValueError("a searched root has no visited legal child; raise the search budget")
    mean_q = np.nanmean(np.where(ok, q, np.nan), axis=1, keepdims=True)  # [R, 1]
    done = np.where(ok, q, mean_q)
    lo = np.where(legal, done, np.inf).min(axis=1, keepdims=True)
    hi = np.where(legal, done, -np.inf).max(axis=1, keepdims=True)
    scaled = (done - lo) / np.maximum(hi - lo, 1e-9)  # [R, 52] in [0, 1] on legal cards
    sigma = (c_visit + np.where(legal, visits, 0).max(axis=1, keepdims=True)) * c_scale * scaled
    z = np.where(legal, prior_logits + sigma, -np.inf)
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    target: np.ndarray = (p / p.sum(axis=1, keepdims=True)).astype(np.float32)
    return target


POLICY_TARGETS = ("q", "visits", "gumbel")


def _policy_target(kind: str, cat: dict[str, np.ndarray], beta: float) -> np.ndarray:
    if kind == "q":
        return policy_targets(cat["q"], cat["legal"], beta)
    if kind == "visits":
        return visit_targets(cat["visits"], cat["legal"])
    return improved_targets(cat["q"], cat["visits"], cat["legal"], cat["prior"])


class _SelfPlayPart(Protocol):
    """What SelfPlaySettings.of reads of the train settings (train/config.py TrainConfig, which
    imports this module)."""

    games_per_batch: int
    beta: float
    outcome_weight: float
    playout_full: float
    playout_cheap: float
    search_scale: float
    policy_target: str
    inference: str


@dataclass(frozen=True)
class SelfPlaySettings:
    """How a batch of self-play games is played and recorded, under the `train` settings' own
    names (play_selfplay documents each): the part of the train settings in force that
    self-play reads (`of`), which the loop and the Ray actors play with alike."""

    games_per_batch: int = 64
    beta: float = 0.2
    outcome_weight: float = 0.0
    playout_full: float = 1.0
    playout_cheap: float = 0.25
    search_scale: float = 1.0
    policy_target: str = "q"
    inference: str = "float32"

    @classmethod
    def of(cls, train: _SelfPlayPart) -> SelfPlaySettings:
        """The self-play part of `train` (train/config.py TrainConfig, with the schedule's
        phase in force: Run.in_force)."""
        return cls(games_per_batch=int(train.games_per_batch), beta=float(train.beta),
                   outcome_weight=float(train.outcome_weight),
                   playout_full=float(train.playout_full),
                   playout_cheap=float(train.playout_cheap),
                   search_scale=float(train.search_scale),
                   policy_target=str(train.policy_target), inference=str(train.inference))


def play_batch(evaluator: NetworkEvaluator, rng: np.random.Generator, mcts_config: MCTSConfig,
               settings: SelfPlaySettings) -> SelfPlayRecords:
    """One batch of self-play games (settings.games_per_batch) as `settings` say."""
    return play_selfplay(evaluator, settings.games_per_batch, rng, mcts_config,
                         beta=settings.beta, outcome_weight=settings.outcome_weight,
                         playout_full=settings.playout_full,
                         playout_cheap=settings.playout_cheap,
                         search_scale=settings.search_scale,
                         policy_target=settings.policy_target, inference=settings.inference)


def aux_targets(final_piles: np.ndarray, game: np.ndarray, seat: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """(points [M, 4] float32, capture [M, 16] int8) from the final piles [G, 4] of the games:
    the final pile score of seats mover + k (k = 0..3) and, for each of the 16 scoring cards,
    the k of the seat that captured it."""
    order = (seat.astype(np.int64)[:, None] + np.arange(4)) & 3  # [M, 4] absolute seats
    piles = final_piles[game.astype(np.int64)[:, None], order].astype(np.int64)  # [M, 4]
    points = batch_pile_scores(final_piles)[game.astype(np.int64)[:, None], order]  # [M, 4]
    bits = (piles[:, :, None] >> np.arange(16)) & 1  # [M, 4, 16]
    return points.astype(np.float32), bits.argmax(axis=1).astype(np.int8)


def current_values(roots: StateBatch) -> np.ndarray:
    """The mover's current team difference (mid-game valuation) -> [R] float64 points."""
    values: np.ndarray = returns(roots)[np.arange(len(roots)),
                                        current_player(roots)].astype(np.float64)
    return values


def value_targets(q: np.ndarray, legal: np.ndarray, roots: StateBatch) -> np.ndarray:
    """Best legal root Q minus the mover's current team difference -> [R] float32 points."""
    best = np.where(legal & np.isfinite(q), q, -np.inf).max(axis=1)  # [R]
    targets: np.ndarray = (best - current_values(roots)).astype(np.float32)
    return targets


def _initial_states(num_games: int, rng: np.random.Generator, deals: npt.ArrayLike | None
                    ) -> tuple[StateBatch, np.ndarray, np.ndarray]:
    """(StateBatch of the G opening positions, deals [G, 52], first leaders [G] int8)."""
    if deals is None:
        deals = np.stack([rng.permutation(NUM_CARDS) for _ in range(num_games)])
    deals = np.asarray(deals, dtype=np.int64)
    if deals.shape != (num_games, NUM_CARDS):
        raise ValueError(f"deals must have shape ({num_games}, 52), got {deals.shape}")
    for g, d in enumerate(deals):
        check_deal(d, where=f"deal {g}")
    leaders = rng.integers(0, 4, size=num_games).astype(np.int8)  # [G] random first leaders
    states = StateBatch.from_states(
        [GongzhuState(d, leader=int(lead)) for d, lead in zip(deals, leaders)]
    )
    return states, deals, leaders


def play_selfplay(
    evaluator: Evaluator,
    num_games: int,
    rng: np.random.Generator,
    mcts_config: MCTSConfig,
    beta: float = 0.2,
    deals: npt.ArrayLike | None = None,
    outcome_weight: float = 0.0,
    playout_full: float = 1.0,
    playout_cheap: float = 0.25,
    policy_target: str = "q",
    search_scale: float = 1.0,
    inference: str | None = None,
) -> SelfPlayRecords:
    """Play `num_games` full games in lockstep with search at every ply (every unforced one
    unless mcts_config.search_forced).

    evaluator: StateBatch -> (logits [B, 52], values [B, 4]); deals: [G, 52] or None (random from
    rng); first leaders are always drawn from rng. outcome_weight in [0, 1] mixes the trained
    value target from the search target (0, the paper's) and the game's outcome (1). Moves are the
    argmax of root Q (the paper's rule, no exploration noise). Same rng state -> same records for
    a deterministic evaluator.

    Playout-cap randomisation (KataGo) when playout_full < 1: each searched ply gets the full
    budget with probability playout_full and is recorded; the others get playout_cheap x the
    budget (at least one simulation per legal card), are played and not recorded.
    search_scale multiplies every searched ply's budget (full and cheap alike; 1: the config's).
    policy_target: "q" (softmax(beta x root Q), the paper's), "visits" (the root's visit
    counts, normalised: AlphaZero's target) or "gumbel" (the network's own policy at the root
    improved by the searched Q, Gumbel MuZero's target: one more network call per ply).
    inference: the network's precision for these games ("float32" | "bfloat16", set on a
    NetworkEvaluator; None: the evaluator's own).
    """
    if inference is not None:  # (a NetworkEvaluator's setting)
        cast(NetworkEvaluator, evaluator).precision = inference
    check_targets(policy_target, outcome_weight)
    t0 = time.perf_counter()
    s, deals, leaders = _initial_states(num_games, rng, deals)

    def recorded(rows: np.ndarray, ply: int) -> np.ndarray:  # the playout cap's draw
        return rng.random(len(rows)) < playout_full

    return play_lockstep(evaluator, s, deals, leaders, mcts_config, recorded, beta=beta,
                         outcome_weight=outcome_weight, playout_full=playout_full,
                         playout_cheap=playout_cheap, policy_target=policy_target,
                         search_scale=search_scale, started=t0, rng=rng)


def check_targets(policy_target: str, outcome_weight: float) -> None:
    """A ValueError naming a policy target or outcome weight self-play cannot make."""
    if policy_target not in POLICY_TARGETS:
        raise ValueError(f"policy_target must be one of {', '.join(POLICY_TARGETS)}, "
                         f"got {policy_target!r}")
    if not 0.0 <= outcome_weight <= 1.0:
        raise ValueError(f"outcome_weight must lie in [0, 1], got {outcome_weight}")


def play_lockstep(evaluator: Evaluator, s: StateBatch, deals: np.ndarray, leaders: np.ndarray,
                  mcts_config: MCTSConfig, recorded: Callable[[np.ndarray, int], np.ndarray],
                  beta: float = 0.2,
                  outcome_weight: float = 0.0, playout_full: float = 1.0,
                  playout_cheap: float = 0.25, policy_target: str = "q",
                  search_scale: float = 1.0, started: float | None = None,
                  rng: np.random.Generator | None = None) -> SelfPlayRecords:
    """The games of `s` (G opening positions) played to the end in lockstep and recorded:
    play_selfplay's loop, with the playout cap's draws taken from `recorded` (rows [R] of the
    searched games, ply) -> [R] bool, True for a full, recorded search (asked only when
    playout_full < 1), so that a caller may draw them per game (train/actors.py).

    Args:
        evaluator: StateBatch -> (logits [B, 52], values [B, 4]).
        s: the G opening positions; deals [G, 52] and leaders [G] are stored with the records.
        mcts_config: the search; the other settings as play_selfplay's.
        started: when the batch began (perf_counter), for the records' seconds.
        rng: passed to run_mcts (which never draws from it).
    """
    t0 = time.perf_counter() if started is None else started
    num_games = len(s)
    actions = np.full((num_games, NUM_CARDS), -1, dtype=np.int8)  # [G, 52]
    names = ("inputs", "legal", "q", "visits", "prior", "value", "now", "seat", "game", "ply")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in names}
    simulations = evaluations = 0
    for ply in range(NUM_CARDS):
        legal = legal_mask(s)  # [G, 52]
        forced = (legal.sum(axis=1) == 1) & (not mcts_config.search_forced)  # [G]
        act = legal.argmax(axis=1)  # forced rows: the single legal card
        rows = np.flatnonzero(~forced)
        if len(rows) and playout_full < 1.0:
            full = recorded(rows, ply)  # [R] recorded plies
            scale = np.where(full, 1.0, playout_cheap) * search_scale
        else:
            full = np.ones(len(rows), dtype=bool)
            scale = None if search_scale == 1.0 else np.full(len(rows), search_scale)
        if len(rows):
            roots = s.take(rows)
            res = run_mcts(GongzhuRules, evaluator, roots, mcts_config, rng=rng,
                           budget_scale=scale)
            act[rows] = res.action
            simulations += int(res.num_simulations.sum())
            evaluations += int(res.num_evaluations)
        if full.any():
            _record(parts, evaluator, roots, res, full, rows, legal, ply, policy_target)
        actions[:, ply] = act
        s = step(s, act)  # checked: a search returning an illegal card fails loudly here
    assert is_terminal(s).all()
    return _records(parts, s, deals, leaders, actions, beta, outcome_weight, policy_target,
                    (simulations, evaluations), t0)


def _record(parts: dict[str, list[np.ndarray]], evaluator: Evaluator, roots: StateBatch,
            res: SearchResult, full: np.ndarray, rows: np.ndarray, legal: np.ndarray, ply: int,
            policy_target: str) -> None:
    """Add one ply's recorded searches to `parts`: the searched roots (of games `rows`) whose
    `full` flag is set, with their search's statistics `res` and the games' legal masks."""
    rows, keep = rows[full], np.flatnonzero(full)
    roots = roots.take(keep)
    q = np.asarray(res.q, dtype=np.float64)[keep]  # [R, 52]
    parts["inputs"].append(encode(roots))
    parts["legal"].append(legal[rows])
    parts["q"].append(q)
    parts["visits"].append(np.asarray(res.visits, dtype=np.float64)[keep])
    if policy_target == "gumbel":
        parts["prior"].append(np.asarray(evaluator(roots)[0], dtype=np.float64))
    parts["value"].append(value_targets(q, legal[rows], roots))
    parts["now"].append(current_values(roots))
    parts["seat"].append(current_player(roots).astype(np.int8))
    parts["game"].append(rows.astype(np.int32))
    parts["ply"].append(np.full(len(rows), ply, dtype=np.int8))


def _records(parts: dict[str, list[np.ndarray]], s: StateBatch, deals: np.ndarray,
             leaders: np.ndarray, actions: np.ndarray, beta: float, outcome_weight: float,
             policy_target: str, counts: tuple[int, int], t0: float) -> SelfPlayRecords:
    """The finished games `s` and their recorded plies `parts` as SelfPlayRecords: the targets
    (policy by `policy_target`, value mixed with the outcome), the auxiliary targets and the
    batch's totals (`counts`: simulations, evaluations)."""
    if not parts["inputs"]:  # only possible with zero games
        raise ValueError("no searched position (num_games must be >= 1)")
    # (every part but prior, which only policy_target gumbel records and reads)
    cat = {k: np.concatenate(v) for k, v in parts.items() if v}
    final = returns(s).astype(np.float32)  # [G, 4]
    points, capture = aux_targets(s.piles, cat["game"], cat["seat"])
    outcome = (final[cat["game"], cat["seat"]] - cat["now"]).astype(np.float32)  # [M]
    mixed = (1.0 - outcome_weight) * cat["value"] + outcome_weight * outcome
    return SelfPlayRecords(
        inputs=cat["inputs"].astype(np.float32, copy=False),
        legal=cat["legal"],
        policy_target=_policy_target(policy_target, cat, beta),
        value_target=mixed.astype(np.float32),
        search_value=cat["value"],
        outcome_value=outcome,
        seat=cat["seat"],
        game=cat["game"],
        ply=cat["ply"],
        deals=deals,
        first_leader=leaders,
        actions=actions,
        final_returns=final,
        games=len(s),
        plies_searched=len(cat["value"]),
        simulations=counts[0],
        evaluations=counts[1],
        seconds=time.perf_counter() - t0,
        points_target=points,
        capture_target=capture,
    )
