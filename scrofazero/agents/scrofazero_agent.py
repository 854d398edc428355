"""The full ScrofaZero player for the real, hidden-hand game (gongzhu.md section 6).

Per decision: sample deals of the unseen cards (stratified on important cards, or uniform),
optionally reweight them by how well they explain the other players' earlier plays (IEC,
agents/iec.py), search every deal with the evaluation budget (10 + 2 x legal cards) as ONE
batched MCTS over all deals, average the root Q values with the weights and play the argmax.
Forced moves are played without sampling or search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..games.gongzhu.functional import GongzhuRules, StateBatch
from ..games.gongzhu.rules import InfoView
from ..nn.evaluator import NetworkEvaluator
from ..sampling.stratified import DealSample, sample_stratified, sample_uniform
from ..sampling.uniform import owners_to_hands
from ..search.mcts import MCTSConfig, run_mcts
from .iec import IECConfig, combine, effective_sample_size, iec_log_weights

SAMPLINGS = ("stratified", "uniform")


@dataclass
class Decision:
    """What the last searched decision did (for diagnostics and benchmarks)."""

    deals: int
    ess: float  # effective sample size of the final weights
    queries: int  # IEC network queries
    weights: np.ndarray  # [D] final weights
    sample: DealSample
    scores: np.ndarray  # [L] weighted root Q of the legal cards


class ScrofaZeroAgent:
    """ScrofaZero player. Give `checkpoint` (a path) or `model` (a PolicyValueNet).

    sampling: "stratified" (num_important cards, per_stratum draws in each consistent placement,
    `prior` "exact" or "equal"; see sampling/stratified.py) or "uniform" (num_deals deals).
    weighting: IEC reweighting with beta_post and iec_form; iec_draws > 1 weighs that many
    times more deals than are searched (see `weigh`). Search: UCB (c_uct, in points) or PUCT
    (search_prior="puct") with budget_base + budget_per_legal x legal simulations per deal.
    threads: torch threads for this player (0 leaves torch's default).
    """

    name = "scrofazero"

    def __init__(self, checkpoint: str | None = None, model=None, sampling: str = "stratified",
                 num_important: int = 2, per_stratum: int = 1, num_deals: int = 9,
                 prior: str = "exact", weighting: bool = True, beta_post: float = 0.015,
                 iec_form: str = "exp", iec_draws: int = 1, budget_base: int = 10,
                 budget_per_legal: int = 2, c_uct: float = 30.0, search_prior: str = "none",
                 c_puct: float = 60.0, device="cpu", threads: int = 0):
        if sampling not in SAMPLINGS:
            raise ValueError(f"unknown sampling {sampling!r}; choose from {', '.join(SAMPLINGS)}")
        if (checkpoint is None) == (model is None):
            raise ValueError("give exactly one of checkpoint (a path) or model")
        for key, value in (("num_important", num_important), ("per_stratum", per_stratum),
                           ("num_deals", num_deals), ("iec_draws", iec_draws)):
            if value < (0 if key == "num_important" else 1):
                raise ValueError(f"{key} must be >= {0 if key == 'num_important' else 1}, "
                                 f"got {value}")
        if threads > 0:
            import torch

            torch.set_num_threads(int(threads))
        if checkpoint is not None:
            from ..train.checkpoints import load_model  # lazy: torch checkpoint code on demand

            model = load_model(checkpoint)
        model.eval()
        self.evaluator = NetworkEvaluator(model, device=device)
        self.sampling, self.prior = sampling, prior
        self.num_important, self.per_stratum, self.num_deals = (
            int(num_important), int(per_stratum), int(num_deals))
        self.weighting = bool(weighting)
        self.iec = IECConfig(beta_post=beta_post, form=iec_form)
        self.iec_draws = int(iec_draws)
        self.mcts = MCTSConfig(c_uct=c_uct, budget_base=budget_base,
                               budget_per_legal=budget_per_legal, prior=search_prior,
                               c_puct=c_puct)
        if sampling == "stratified" and prior not in ("exact", "equal"):
            raise ValueError(f"unknown prior {prior!r}; choose from exact, equal")
        self.last: Decision | None = None

    def sample(self, view: InfoView, rng: np.random.Generator, draws: int = 1) -> DealSample:
        """`draws` x the searched number of deals (per stratum, or uniform)."""
        if self.sampling == "stratified":
            return sample_stratified(view, self.num_important, self.per_stratum * draws, rng,
                                     self.prior)
        return sample_uniform(view, self.num_deals * draws, rng)

    def weigh(self, view: InfoView, rng: np.random.Generator
              ) -> tuple[DealSample, np.ndarray, int]:
        """The deals to search, their final weights [D] (summing to 1) and the IEC network
        queries spent.

        Without weighting: the sample and its priors. With iec_draws = 1 (the paper): the
        sample and prior x IEC likelihood. With iec_draws = m > 1 (ours): m times as many deals
        are drawn and weighed; each stratum's weight is its prior times the mean likelihood of
        its m x per_stratum draws, and the deals searched in it are resampled from its draws in
        proportion to their likelihood. The searched deals stay as many as the paper's, but one
        unlucky draw of the unimportant cards no longer decides a stratum's weight (the belief
        diagnostic measured this noise, eval/belief.py)."""
        m = self.iec_draws if self.weighting else 1
        sample = self.sample(view, rng, m)
        if not self.weighting:
            return sample, sample.prior, 0
        policy = lambda x: self.evaluator.forward_features(x)[0]  # noqa: E731
        log_factor, queries = iec_log_weights(view, owners_to_hands(sample.owners), policy,
                                              self.iec)
        weights = combine(sample.prior, log_factor)  # [D * m]
        if m == 1:
            return sample, weights, queries
        keep = self.num_deals if self.sampling == "uniform" else self.per_stratum
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
        legal = np.array(view.legal_actions(), dtype=np.int64)  # [L]
        if len(legal) == 1:
            return int(legal[0])
        sample, weights, queries = self.weigh(view, rng)
        roots = StateBatch.from_view(view, owners_to_hands(sample.owners))  # [D]
        result = run_mcts(GongzhuRules, self.evaluator, roots, self.mcts)
        q = result.q[:, legal].astype(np.float64)  # [D, L] from our seat (we are to move)
        seen = ~np.isnan(q)
        mass = (weights[:, None] * seen).sum(axis=0)  # [L]
        total = (weights[:, None] * np.where(seen, q, 0.0)).sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = np.where(mass > 0, total / mass, -np.inf)  # [L]
        self.last = Decision(len(weights), effective_sample_size(weights), queries, weights,
                             sample, scores)
        return int(legal[int(np.argmax(scores))])  # ties -> lowest card
