"""The players' deal sampler: `SamplingConfig` (what `scrofazero.sampling.*` and
`raw.sampling.*` set) and `Sampler`, built once from it, which every player holds.

The sampler is the one place that knows the methods: which read the card-location network
(nn/belief.py), which see the true deal (evaluation only, oracle.py), which draw no deals at
all (`marginals`, for the raw player reading the belief's marginals), and how each draws
(stratified.py, uniform.py, belief.py). A player asks it for deals of a view and never tests the
method's name itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated

import numpy as np
from pydantic import Field

from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.nn.behaviour import load_behaviour
from scrofazero.nn.belief import load_belief
from scrofazero.sampling.belief import sample_belief
from scrofazero.sampling.oracle import oracle_owners
from scrofazero.sampling.particles import PRIORS, ParticleWeigher, PlayModel, WeighingConfig
from scrofazero.sampling.policy import BehaviourPlayModel
from scrofazero.sampling.stratified import (
    STRATUM_WEIGHTS,
    DealSample,
    important_cards,
    plain_sample,
    sample_stratified,
    sample_uniform,
)
from scrofazero.settings import (
    Count,
    NonNegativeInt,
    Share,
    check_bounds,
    choice,
)

METHODS = ("stratified", "uniform", "belief", "belief_stratified", "oracle", "oracle_important",
           "marginals", "policy", "posterior")
# read the card-location network (the weighed methods propose their worlds from it)
BELIEFS = ("belief", "belief_stratified", "marginals", "policy", "posterior")
WEIGHED = ("policy", "posterior")  # worlds weighed by the plays (sampling/particles.py)
ORACLES = ("oracle", "oracle_important")  # evaluation only: they see the true deal
STRATIFIED = ("stratified", "belief_stratified")  # draws per stratum of important cards
NO_DEALS = ("marginals",)  # the raw player reads the belief's marginals instead of deals


@dataclass
class SamplingConfig:
    """How a player draws the deals it searches (`scrofazero.sampling.*` and `raw.sampling.*`
    of evaluate.py). The class's own defaults are the paper's: stratified on 2 important
    cards, 1 deal per stratum (up to 9 deals). No player uses them as they are: the full
    player's defaults are worlds weighed by the plays (method=policy, 18 deals:
    agents/scrofazero_agent.py play_sampling), the raw player's 5 deals from the belief
    (agents/raw_net.py)."""

    # stratified (on important cards) | uniform | belief (num_deals draws from the card-location
    # network) | belief_stratified (per_stratum draws in each stratum, strata weighted by the
    # network) | oracle (the true deal: evaluation only) | oracle_important (the deciding cards'
    # holders told: evaluation only) | marginals (raw player only: no deals, the network reads
    # the belief's marginals) | policy (worlds from the card-location network weighed by the
    # behaviour network's probability of every play seen, sampling/particles.py) | posterior
    # (the same with Mr. Greed's own program at the Mr. Greeds' seats: the posterior ceiling
    # against Mr. Greeds, evaluation only)
    method: Annotated[str, choice(*METHODS)] = "stratified"
    # important cards pinned per decision (strata: every placement of them)
    num_important: NonNegativeInt = 2
    per_stratum: Count = 1  # deals drawn in each stratum
    num_deals: Count = 9  # deals per decision with the methods that have no strata
    # exact (each stratum's uniform probability) | equal (the original)
    stratum_weights: Annotated[str, choice(*STRATUM_WEIGHTS)] = "exact"
    # the belief methods: the card-location network file ("" = the shipped models/belief.pt)
    beliefs: str = ""
    # the belief methods: fitting passes that give the deals the network's marginals under the
    # exact hand sizes (0: the raw product)
    calibrate: NonNegativeInt = 20
    # the belief methods: fit only while more than this many cards are unseen, the raw product
    # after (0: fit whenever a card is unseen; 15, the product from trick 9 on, has the better
    # late log-loss but played -2.8 (1.5) raw, docs/results.md)
    calibrate_above: NonNegativeInt = 0
    # policy | posterior: worlds proposed at a decision, kept between decisions, and the pool's
    # effective sample size below which a decision proposes fresh worlds
    proposals: Count = 128
    keep: Count = 256
    refresh_ess: Annotated[float, Field(gt=0, le=1e9, allow_inf_nan=False)] = 16.0
    # policy | posterior: each play's probability floored at `floor`, then to the power
    # `temperature`
    floor: Share = 0.01
    temperature: Annotated[float, Field(gt=0, le=10, allow_inf_nan=False)] = 1.0
    # policy | posterior: the worlds' prior, uniform over the consistent worlds (the belief only
    # proposes) | belief (the card-location network's product: it and the plays both count)
    prior: Annotated[str, choice(*PRIORS)] = "uniform"
    # policy | posterior: the behaviour network file ("" = the shipped models/behaviour.pt); the
    # posterior models the seats whose program it is not told (its partner) by it
    behaviour: str = ""
    greed_draws: Count = 128  # posterior: deals behind each estimate of Mr. Greed's play


class Sampler:
    """Deals of a view by `config`, with what the method needs loaded once.

    Args:
        config: the sampling settings (checked by their declared types here too, so a config
            built in code or changed after it was built is caught).

    Attributes:
        config: the settings.
        beliefs: the card-location network (nn/belief.py BeliefModel) of the belief methods,
            else None.
        needs_deal: whether the method sees the true deal (evaluation only: the arena hands it
            over through `observe_deal`; a real game refuses such a player).
        draws_deals: False for `marginals`, which draws none.
        stratified: whether the deals come in strata of important cards.
        evaluation_only: why a real game (a table, the protocol, an environment) must refuse
            the player (it sees the true deal, or uses its opponents' program), else None.
        needs_players: whether the evaluation arena must tell it the players at every seat
            (`posterior`, through `known_players`).
        weigher: the pool of worlds weighed by the plays (the policy and posterior methods).
    """

    def __init__(self, config: SamplingConfig):
        self.config = check_bounds(config, "sampling")
        self.beliefs = load_belief(config.beliefs) if config.method in BELIEFS else None
        self.needs_deal = config.method in ORACLES
        self.draws_deals = config.method not in NO_DEALS
        self.stratified = config.method in STRATIFIED
        # the posterior is told its opponents' programs by the evaluation arena only
        self.evaluation_only = (
            "sees the true deal (sampling oracle or oracle_important)" if self.needs_deal else
            "uses its opponents' own program (sampling posterior)"
            if config.method == "posterior" else None)
        self.needs_players = config.method == "posterior"
        self.weigher: ParticleWeigher | None = None
        self.models: dict[int, PlayModel] = {}
        if config.method in WEIGHED:
            self.weigher = ParticleWeigher(WeighingConfig(
                config.proposals, config.keep, config.temperature, config.floor, config.prior,
                refresh_ess=config.refresh_ess), config.calibrate, config.calibrate_above)
        self.behaviour: BehaviourPlayModel | None = None
        if config.method in WEIGHED:  # the posterior models its partner by it
            self.behaviour = BehaviourPlayModel(load_behaviour(config.behaviour))

    def known_players(self, models: Mapping[int, PlayModel]) -> None:
        """The play models of the seats whose program is known (absolute seat -> PlayModel):
        what `posterior` weighs the worlds by at those seats (the behaviour network at the
        others); given by the evaluation arena only."""
        self.models = dict(models)

    @property
    def method(self) -> str:
        return self.config.method

    @property
    def kept_per_stratum(self) -> int:
        """How many deals a player keeps per stratum when it weighs more than it searches:
        per_stratum for the stratified methods, num_deals for the others (one stratum)."""
        return self.config.per_stratum if self.stratified else self.config.num_deals

    def belief(self, view: InfoView) -> np.ndarray | None:
        """[52, 4] the card-location network's belief for `view`, or None for a method that
        reads no network."""
        return self.beliefs.probabilities(view) if self.beliefs is not None else None

    def draw(self, view: InfoView, rng: np.random.Generator, draws: int = 1,
             belief: np.ndarray | None = None,
             hands: Iterable[int] | None = None) -> DealSample:
        """`draws` x the configured number of deals (per stratum where there are strata).

        Args:
            view: the deciding seat's information.
            rng: the random source of the draws.
            draws: multiplies the number of deals (per stratum where there are strata).
            belief: [52, 4] the belief of `view` when the caller already asked for it (the
                belief methods; None: asked here).
            hands: the true current hands, 4 masks (the oracle methods; given by the evaluation
                arena only).

        Returns:
            The deals with their prior weights (stratified.py DealSample).
        """
        c = self.config
        if not self.draws_deals:
            raise ValueError(f"sampling method {c.method} draws no deals")
        if c.method == "stratified":
            return sample_stratified(view, c.num_important, c.per_stratum * draws, rng,
                                     c.stratum_weights)
        if c.method in WEIGHED:
            belief = self.belief(view) if belief is None else belief
            assert belief is not None  # the weighed methods read the network
            return self._weighed(view, belief, rng, c.num_deals * draws)
        if c.method in BELIEFS:
            belief = self.belief(view) if belief is None else belief
            assert belief is not None
            important: tuple[int, ...]
            if c.method == "belief":
                important, per = (), c.num_deals * draws
            else:
                important, per = important_cards(view, c.num_important), c.per_stratum * draws
            owners, weights, stratum, strata, prob = sample_belief(
                view, belief, important, per, rng, c.calibrate, c.calibrate_above)
            return DealSample(owners, weights, stratum, important, strata, prob)
        if c.method in ORACLES:
            return plain_sample(oracle_owners(view, hands, c.num_deals * draws, rng,
                                              c.method == "oracle_important"))
        return sample_uniform(view, c.num_deals * draws, rng)

    def _weighed(self, view: InfoView, belief: np.ndarray, rng: np.random.Generator,
                 num_deals: int) -> DealSample:
        """Deals from the pool of worlds weighed by the plays (sampling/particles.py)."""
        others = [(view.seat + offset) % 4 for offset in (1, 2, 3)]
        assert self.weigher is not None and self.behaviour is not None  # the weighed methods
        models: dict[int, PlayModel] = {seat: self.behaviour for seat in others}
        if self.config.method == "posterior":
            known = {seat: m for seat, m in self.models.items() if seat != view.seat}
            if not known:
                raise PosteriorError("sampling method posterior weighs the worlds by the "
                                     "opponents' own program, which only the evaluation arena "
                                     "gives (against Mr. Greeds): it is for evaluation only, "
                                     "never for a real game")
            models.update(known)  # the seats whose program is known by it, the others as policy
        w = self.weigher.weigh(view, belief, models, num_deals, rng)
        d = len(w.owners)
        return DealSample(w.owners, w.weights, np.zeros(d, dtype=np.int64), (),
                          np.zeros((1, 0), np.int8), np.ones(1), w.ess, w.marginals, w.pool)


class PosteriorError(ValueError):
    """The posterior method was used where no opponent's program is known (a real game)."""
