"""The raw network player ('raw'): a trained PolicyValueNet with no tree search.

Samples deals of the unseen cards (its Sampler, sampling/sampler.py: by default from the
card-location network, models/belief.pt; `sampling.method=uniform` draws them exactly uniformly
as the paper did), then either looks one ply ahead with the value head ("value": every legal
card in every deal, one evaluator call for all) or averages the masked policy over deals
("policy"). A baseline for what search adds (docs/rules.md section 14).

`sampling.method=marginals` samples nothing: the network reads the belief's calibrated marginals
in its hand blocks (nn/encoding.py encode_holders), one input per legal card's child (or the
root, in policy mode). Meant for a network fine-tuned on such inputs (train/marginal_input.py); the
shipped network accepts them too (its input always was probabilities), which measures what the
fine-tuning adds.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Annotated

import numpy as np

from scrofazero.agents.mr_greed import greed_models
from scrofazero.games.gongzhu.batch import StateBatch, step
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.nn.checkpoint import load_model
from scrofazero.nn.encoding import encode_holders
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.sampling.belief import view_holders
from scrofazero.sampling.sampler import Sampler, SamplingConfig
from scrofazero.sampling.uniform import owners_to_hands
from scrofazero.settings import check_bounds, choice, setting_error

MODES = ("value", "policy")
# The sampling methods this player draws by (it averages over its deals by their weights, so no
# strata: those are the full player's).
METHODS = ("uniform", "belief", "marginals", "oracle", "oracle_important", "policy", "posterior")


def raw_sampling() -> SamplingConfig:
    """The raw player's default deals: 5 drawn from the card-location network (the paper drew 5
    uniform deals: `raw.sampling.method=uniform`)."""
    return SamplingConfig(method="belief", num_deals=5)


@dataclass
class RawSettings:
    """The raw network player's settings (its keyword arguments besides the network)."""

    # value (1-ply value search, paper) | policy (argmax of the mean policy)
    mode: Annotated[str, choice(*MODES)] = "value"
    # the deals it looks at (sampling/sampler.py): method uniform (paper) | belief | marginals (no
    # deals: the network reads the belief's marginals; for a network fine-tuned on them) | oracle
    # (the true deal: evaluation only) | oracle_important (evaluation only); num_deals per
    # decision (paper: 5); beliefs, calibrate, calibrate_above for the belief methods
    sampling: SamplingConfig = field(default_factory=raw_sampling)

    def __post_init__(self):
        # A group given by its settings' names (a dict, e.g. {"method": "uniform"}) is built;
        # the values are bounded by the declared types, checked with the rest (check_bounds).
        if isinstance(self.sampling, dict):
            self.sampling = dataclasses.replace(raw_sampling(), **self.sampling)
        if not isinstance(self.sampling, SamplingConfig):
            raise setting_error("sampling", f"must be a group of sampling settings (e.g. "
                                            f"sampling.method=uniform), got {self.sampling!r}")


def check_raw(settings: RawSettings, where: str = "raw") -> RawSettings:
    """`settings` by their declared types, and a sampling method the raw player has (the
    sampler's methods but the stratified ones, which it does not draw); a ValueError naming the
    setting otherwise."""
    check_bounds(settings, where)
    if settings.sampling.method not in METHODS:
        raise ValueError(f"{where}.sampling.method={settings.sampling.method!r}: the raw player "
                         f"draws no strata; choose {' or '.join(METHODS)}")
    return settings


class RawNetworkAgent:
    """Network player. checkpoint: path loaded with nn.checkpoint.load_model; or model: a
    PolicyValueNet (or any module with its forward). mode: "value" (1-ply value search) or
    "policy" (mean masked softmax). sampling: the deals it looks at (SamplingConfig; default
    raw_sampling: 5 from the card-location network); with method "marginals" it samples
    nothing."""

    name = "raw"

    def __init__(self, checkpoint: str | None = None, model=None, mode: str = "value",
                 sampling: SamplingConfig | None = None, device="cpu"):
        settings = check_raw(RawSettings(mode, raw_sampling() if sampling is None else sampling))
        if (checkpoint is None) == (model is None):
            raise ValueError("give exactly one of checkpoint (a path) or model")
        if checkpoint is not None:
            model = load_model(checkpoint)
        model.eval()
        self.evaluator = NetworkEvaluator(model, device=device)
        self.mode = settings.mode
        self.sampling = settings.sampling
        self.sampler = Sampler(settings.sampling)
        self.needs_deal = self.sampler.needs_deal  # evaluation only
        self.needs_players = self.sampler.needs_players  # evaluation only
        self.evaluation_only = self.sampler.evaluation_only
        self._deal: tuple[int, ...] | None = None

    def observe_players(self, agents) -> None:
        """The players at every seat (evaluation only): a posterior player weighs its worlds
        by the Mr. Greeds' own program."""
        self.sampler.known_players(greed_models(agents, draws=self.sampling.greed_draws))

    def observe_deal(self, hands) -> None:
        """The true current hands (4 masks), given by the evaluation arena before each move to a
        player with an oracle sampling (evaluation only)."""
        self._deal = tuple(int(h) for h in hands)

    def _hands(self, view: InfoView, rng: np.random.Generator) -> np.ndarray:
        """[D, 4] hands of the deals this player looks at, by its sampling."""
        return self._deals(view, rng)[0]

    def _deals(self, view: InfoView, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray | None]:
        """The deals' hands [D, 4] and their weights [D] (None: equal, a plain mean)."""
        sample = self.sampler.draw(view, rng, hands=self._deal)
        equal = np.all(sample.weights == sample.weights[0])
        return owners_to_hands(sample.owners), None if equal else sample.weights

    def act(self, view: InfoView, rng: np.random.Generator) -> int:
        legal = np.array(view.legal_actions(), dtype=np.int64)  # [L]
        if len(legal) == 1:
            return int(legal[0])  # forced: no sampling, no network call
        weights = None
        if not self.sampler.draws_deals:
            roots, holders = self._marginal_root(view)
        else:
            hands, weights = self._deals(view, rng)  # [D, 4], [D] or None
            roots = StateBatch.from_states([GongzhuState.from_view(view, h.tolist())
                                            for h in hands])
            holders = None
        if self.mode == "value":
            scores = self._value_scores(roots, legal, view.seat, holders, weights)
        else:
            scores = self._policy_scores(roots, legal, holders, weights)
        best = np.flatnonzero(scores == scores.max())
        return int(legal[best[int(rng.integers(len(best)))]])

    def _marginal_root(self, view: InfoView) -> tuple[StateBatch, np.ndarray]:
        """The view as one state whose other hands are empty (only its public part and the
        viewer's own hand are read) and what the viewer knows of every hand: [1, 52, 4]."""
        c = self.sampling
        belief = self.sampler.belief(view)
        assert belief is not None  # the marginals method reads the card-location network
        holders = view_holders(view, belief, c.calibrate, c.calibrate_above)
        hands = np.zeros((1, 4), dtype=np.uint64)
        hands[0, view.seat] = view.hand
        return StateBatch.from_view(view, hands), holders[None]

    def _evaluate(self, states: StateBatch, holders: np.ndarray | None):
        """The evaluator on `states`, reading `holders` [B, 52, 4] as their hands when given."""
        if holders is None:
            return self.evaluator(states)
        return self.evaluator.evaluate(states, encode_holders(states, holders))

    def _value_scores(self, roots: StateBatch, legal: np.ndarray, seat: int,
                      holders: np.ndarray | None = None, weights: np.ndarray | None = None
                      ) -> np.ndarray:
        """Mean over deals (or roots; by `weights` when given) of our seat's value after each
        legal card: [L]."""
        d, k = len(roots), len(legal)
        parents = np.repeat(np.arange(d), k)
        cards = np.tile(legal, d)
        children = step(roots.take(parents), cards)  # [D * L]
        if holders is not None:
            holders = holders[parents]  # [D * L, 52, 4]; the card played now lies in the trick
            holders[np.arange(d * k), cards] = 0.0
        _, values = self._evaluate(children, holders)  # [D * L, 4]
        return _mean(values[:, seat].reshape(d, k), weights)

    def _policy_scores(self, roots: StateBatch, legal: np.ndarray,
                       holders: np.ndarray | None = None, weights: np.ndarray | None = None
                       ) -> np.ndarray:
        """Mean over deals (by `weights` when given) of the policy restricted to the legal
        cards (masked softmax): [L]."""
        logits, _ = self._evaluate(roots, holders)  # [D, 52]
        z = logits[:, legal].astype(np.float64)  # [D, L] legal logits only = mask before softmax
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return _mean(p, weights)


def _mean(x: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """[D, L] -> [L]: the plain mean (equal deals: as it always was) or the weighted one."""
    return x.mean(axis=0) if weights is None else weights @ x
