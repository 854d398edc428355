"""The full ScrofaZero player for the real, hidden-hand game (docs/rules.md section 13).

Per decision: sample deals of the unseen cards (by default worlds proposed by the card-location
network and weighed by the behaviour network's probability of the other players' earlier plays;
the player's Sampler, sampling/sampler.py, knows every method), optionally reweight them by the
paper's IEC (sampling/iec.py), search every deal with the play budget (play_search: 5 + 1 x
legal cards) as ONE batched MCTS over all deals, average the root Q values with the weights and
play the argmax. From the endgame's trick on (default 9: the last five tricks) every deal's
value of each card is exact instead (agents/endgame.py: minimax with both teams seeing every
card), which costs less than the search it replaces. Forced moves are played without sampling
or search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import numpy as np
import torch

from scrofazero.agents.base import Explanation
from scrofazero.agents.endgame import EndgameConfig, EndgameSolver
from scrofazero.agents.infoset import InfosetSearch
from scrofazero.agents.mr_greed import greed_models
from scrofazero.games.gongzhu.batch import GongzhuRules, StateBatch
from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.nn.behaviour import load_behaviour
from scrofazero.nn.checkpoint import load_model
from scrofazero.nn.evaluator import PRECISIONS, NetworkEvaluator
from scrofazero.sampling.iec import IECConfig, combine, effective_sample_size, iec_log_weights
from scrofazero.sampling.sampler import Sampler, SamplingConfig
from scrofazero.sampling.stratified import DealSample
from scrofazero.sampling.uniform import owners_to_hands
from scrofazero.search.mcts import MCTSConfig, check_search, run_mcts
from scrofazero.settings import check_bounds, choice


def play_search() -> MCTSConfig:
    """The player's default search on each sampled deal: 5 + 1 x legal cards simulations, half the
    paper's 10 + 2 x legal (UCB, c = 30). With twice the deals (play_sampling) this costs about
    what the paper's settings cost and plays better (docs/results.md, "The player with the shipped
    wide network")."""
    return MCTSConfig(budget_base=5, budget_per_legal=1)


def play_sampling() -> SamplingConfig:
    """The player's default deals: 18 drawn from a pool of worlds proposed by the card-location
    network (models/belief.pt) and weighed by the behaviour network's probability of every play
    seen (models/behaviour.pt; sampling/particles.py), equal draws merged: +24.0 (5.6) paired
    over the 18 deals drawn from the belief alone that it replaced, which were +10.3 (5.4) over
    the 18 stratified deals with IEC weights before them (docs/results.md, "Inference");
    per_stratum=2 keeps the stratified methods at up to 18 deals (the paper drew 1 per stratum,
    up to 9)."""
    return SamplingConfig(method="policy", per_stratum=2, num_deals=18)


def play_weighting() -> IECConfig:
    """The player's default weighting: none. The network's belief already reads the other
    players' plays; IEC on top was not measured to help (docs/results.md, "Inference")."""
    return IECConfig(enabled=False)


@dataclass
class ScrofaZeroSettings:
    """The player's settings (its keyword arguments besides the network), as the registry and
    `evaluate.py scrofazero.*` give them; each bounded by its declared type."""

    search: MCTSConfig = field(default_factory=play_search)  # MCTS on every sampled deal
    sampling: SamplingConfig = field(default_factory=play_sampling)  # which deals are searched
    # Bayesian (IEC) weights of the deals (off by default: the belief reads the plays)
    weighting: IECConfig = field(default_factory=play_weighting)
    # the last tricks searched exactly in every world instead (agents/endgame.py)
    endgame: EndgameConfig = field(default_factory=EndgameConfig)
    # the network's forwards: float32 | bfloat16 (a bfloat16 copy of the weights: faster for big
    # networks on a CPU with bf16 instructions, values within about 0.4 points)
    precision: Annotated[str, choice(*PRECISIONS)] = "float32"


@dataclass
class Decision:
    """What the last searched decision did (for diagnostics and benchmarks)."""

    deals: int  # deals weighed (the pool's worlds when the method weighs a pool)
    ess: float  # effective sample size of the final weights (of the pool's)
    queries: int  # IEC network queries
    weights: np.ndarray  # [D] final weights
    sample: DealSample
    scores: np.ndarray  # [L] weighted root Q of the legal cards
    belief: np.ndarray | None = None  # [52, 4] the card-location network's belief, if one was asked
    values: np.ndarray | None = None  # [D, L] each searched deal's value of each legal card
    # whether `values` are the endgame's exact values (PIMC's, or under the shared plan of
    # endgame.shared, agents/infoset.py), else MCTS's
    exact: bool = False


class ScrofaZeroAgent:
    """ScrofaZero player. Give `checkpoint` (a path) or `model` (a PolicyValueNet).

    search: the MCTS settings per deal (default play_search: 5 + 1 x legal cards, UCB with
    c = 30). sampling: how the deals are drawn (default play_sampling: 18 deals from the
    card-location network, weighed by the plays).
    weighting: the IEC reweighting (sampling/iec.py IECConfig; `draws` > 1 weighs that many times
    more deals than are searched, see `weigh`). threads: torch threads for this player (0 leaves
    torch's default). precision: the network's forwards (float32 | bfloat16, nn/evaluator.py).
    `decide` explains a move (agents/base.py Explanation); `last` keeps the
    last searched Decision for diagnostics.
    """

    name = "scrofazero"

    def __init__(self, checkpoint: str | None = None, model=None,
                 search: MCTSConfig | None = None, sampling: SamplingConfig | None = None,
                 weighting: IECConfig | None = None, device="cpu", threads: int = 0,
                 precision: str = "float32", endgame: EndgameConfig | None = None):
        if (checkpoint is None) == (model is None):
            raise ValueError("give exactly one of checkpoint (a path) or model")
        self.mcts = search if search is not None else play_search()
        self.sampling = sampling if sampling is not None else play_sampling()
        self.iec = weighting if weighting is not None else play_weighting()
        self.endgame = endgame if endgame is not None else EndgameConfig()
        # by their declared types (a player built in code, or settings changed after they were
        # checked), and the search's budget
        check_bounds(ScrofaZeroSettings(self.mcts, self.sampling, self.iec, self.endgame,
                                        precision), "scrofazero")
        check_search(self.mcts, "scrofazero.search")
        self.sampler = Sampler(self.sampling)
        if not self.sampler.draws_deals:
            raise ValueError(f"sampling method {self.sampling.method} draws no deals: the full "
                             "player searches deals (it is the raw player's)")
        if threads > 0:
            torch.set_num_threads(int(threads))
        if checkpoint is not None:
            model = load_model(checkpoint)
        model.eval()
        self.evaluator = NetworkEvaluator(model, device=device, precision=precision)
        # The oracle methods see the true deal, the posterior its opponents' program: only the
        # evaluation arena gives them (observe_deal, observe_players).
        self.needs_deal = self.sampler.needs_deal
        self.needs_players = self.sampler.needs_players
        self.evaluation_only = self.sampler.evaluation_only
        self._deal: tuple[int, ...] | None = None
        self._belief: np.ndarray | None = None
        self.last: Decision | None = None
        self._solver: EndgameSolver | None = None  # made at the first exact decision
        self._exact = False  # whether the last search_worlds was exact
        self._infoset: InfosetSearch | None = None  # made at the first shared decision

    def exact_values(self, view: InfoView, hands: np.ndarray, nodes: int | None = None,
                     weights: np.ndarray | None = None) -> np.ndarray | None:
        """[D, L] the exact value of each legal card (`view.legal_actions()` order) in each
        world (hands [D, 4]), from the mover's seat (agents/endgame.py); None past `nodes`
        nodes (None: no limit). With `endgame.shared` > 0 and the worlds' `weights` [D], the
        value under the player's next `shared` decisions chosen once per information state
        (agents/infoset.py)."""
        if self._solver is None:
            self._solver = EndgameSolver(self.endgame.table_bits)
        if self.endgame.shared > 0 and weights is not None:
            if self._infoset is None:
                model = (self.sampler.behaviour.model if self.sampler.behaviour is not None
                         else load_behaviour(self.sampling.behaviour))
                self._infoset = InfosetSearch(self._solver, model, self.endgame.shared,
                                              self.endgame.others, self.endgame.fused)
            return self._infoset.card_values(view, hands, weights, nodes)
        roots = StateBatch.from_view(view, hands)
        return self._solver.card_values(roots.hands, roots.piles, roots.trick, roots.trick_len,
                                        roots.leader, view.legal_actions(), nodes)

    def observe_deal(self, hands) -> None:
        """The true current hands (4 masks), given by the evaluation arena before each move to a
        player with an oracle sampling method (evaluation only)."""
        self._deal = tuple(int(h) for h in hands)

    def observe_players(self, agents) -> None:
        """The players at every seat (evaluation only): a posterior player weighs its worlds
        by the Mr. Greeds' own program."""
        self.sampler.known_players(greed_models(agents, draws=self.sampling.greed_draws))

    def weigh(self, view: InfoView, rng: np.random.Generator
              ) -> tuple[DealSample, np.ndarray, int]:
        """The deals to search, their final weights [D] (summing to 1) and the IEC network
        queries spent.

        Without weighting: the sample and its prior weights. With weighting.draws = 1 (the
        paper): the sample and prior x IEC likelihood. With draws = m > 1 (ours): m times as many
        deals are drawn and weighed; each stratum's weight is its prior times the mean likelihood
        of its m x per_stratum draws, and the deals searched in it are resampled from its draws in
        proportion to their likelihood. The searched deals stay as many as the paper's, but one
        unlucky draw of the unimportant cards no longer decides a stratum's weight (the belief
        diagnostic measured this noise, eval/iec_diagnostic.py)."""
        m = self.iec.draws if self.iec.enabled else 1
        belief = self.sampler.belief(view)
        self._belief = belief
        sample = self.sampler.draw(view, rng, m, belief=belief, hands=self._deal)
        if sample.marginals is not None:  # the weighed worlds' belief, not the network's
            self._belief = sample.marginals
        if not self.iec.enabled or self.needs_deal:
            return sample, sample.weights, 0
        policy = lambda x: self.evaluator.forward_features(x)[0]  # noqa: E731
        log_factor, queries = iec_log_weights(view, owners_to_hands(sample.owners), policy,
                                              self.iec)
        weights = combine(sample.weights, log_factor)  # [D * m]
        if m == 1:
            return sample, weights, queries
        keep = self.sampler.kept_per_stratum
        rows, final = [], []
        for s in np.unique(sample.stratum):
            idx = np.flatnonzero(sample.stratum == s)
            mass = weights[idx].sum()
            p = weights[idx] / mass if mass > 0 else np.full(len(idx), 1.0 / len(idx))
            rows.append(rng.choice(idx, size=keep, p=p))
            final.append(np.full(keep, mass / keep))
        final_w = np.concatenate(final)
        return sample.take(np.concatenate(rows)), final_w / final_w.sum(), queries

    def act(self, view: InfoView, rng: np.random.Generator) -> int:
        return self._choose(view, rng)[0]

    def decide(self, view: InfoView, rng: np.random.Generator) -> tuple[int, Explanation]:
        """The card `act` plays from the same rng, with the searched value of each legal card and
        the weighted belief of where every card lies."""
        card, decision = self._choose(view, rng)
        if decision is None:  # a forced move: nothing was sampled or searched
            return card, Explanation(values=(None,), forced=True)
        return card, explain(decision)

    def search_worlds(self, view: InfoView, rng: np.random.Generator
                      ) -> tuple[DealSample, np.ndarray, int, np.ndarray]:
        """Sample and weigh the deals (`weigh`) and search each with the player's budget (from
        the endgame's trick on, exactly: `exact_values`): the
        sample, its weights [D], the IEC queries spent and the root value of every legal card
        in every deal, q [D, L] (legal cards in `view.legal_actions()` order, points of the
        final team difference from the mover's seat; NaN where a deal's search never tried the
        card, which UCB rules out once the budget covers the legal cards)."""
        legal = np.array(view.legal_actions(), dtype=np.int64)  # [L]
        sample, weights, queries = self.weigh(view, rng)
        hands = owners_to_hands(sample.owners)
        self._exact = False
        if self.endgame.reaches(len(view.history)):
            exact = self.exact_values(view, hands, self.endgame.nodes, weights)
            if exact is not None:  # else past the node budget: MCTS
                self._exact = True
                return sample, weights, queries, exact
        roots = StateBatch.from_view(view, hands)  # [D]
        result = run_mcts(GongzhuRules, self.evaluator, roots, self.mcts)
        return sample, weights, queries, result.q[:, legal].astype(np.float64)

    def _choose(self, view: InfoView, rng: np.random.Generator) -> tuple[int, Decision | None]:
        """The card and the decision behind it (None for a forced move; also kept in `last`)."""
        self.last = None
        legal = np.array(view.legal_actions(), dtype=np.int64)  # [L]
        if len(legal) == 1:
            return int(legal[0]), None
        sample, weights, queries, q = self.search_worlds(view, rng)
        seen = ~np.isnan(q)
        mass = (weights[:, None] * seen).sum(axis=0)  # [L]
        total = (weights[:, None] * np.where(seen, q, 0.0)).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(mass > 0, total / mass, -np.inf)  # [L]
        # A weighed pool: its worlds and their effective sample size (the deals searched are
        # drawn from them); else the searched deals' own.
        if sample.worlds is not None and sample.ess is not None:  # set together
            deals, ess = sample.worlds, sample.ess
        else:
            deals, ess = len(weights), effective_sample_size(weights)
        self.last = Decision(deals, ess, queries, weights, sample, scores, self._belief, q,
                             self._exact)
        return int(legal[int(np.argmax(scores))]), self.last  # ties -> lowest card


def explain(decision: Decision) -> Explanation:
    """A searched decision as an Explanation: belief[c, s] = the card-location network's
    probability that seat s holds card c when the player asked one, else the weight of the deals
    in which seat s holds card c; a legal card no deal's search reached has no value."""
    owners = decision.sample.owners  # [D, 52] seat holding each card in each searched deal
    belief = (decision.weights[:, None, None]
              * (owners[:, :, None] == np.arange(4))).sum(axis=0)  # [52, 4]
    if decision.belief is not None:  # the network's own probabilities, not 18 deals' counts
        unseen = decision.belief.sum(axis=1) > 0
        belief[unseen] = decision.belief[unseen]
    values = tuple(float(v) if np.isfinite(v) else None for v in decision.scores)
    return Explanation(values=values, belief=belief, deals=decision.deals,
                       ess=float(decision.ess))
