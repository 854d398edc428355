"""The raw network player ('raw'): a trained PolicyValueNet with no tree search.

Samples deals of the unseen cards (by default from the card-location network, models/belief.pt,
sampling/belief.py; `sampling=uniform` draws them exactly uniformly as the paper did,
sampling/uniform.py), then either looks one ply ahead
with the value head ("value": every legal card in every deal, one evaluator call for all) or
averages the masked policy over deals ("policy"). A baseline for what search adds (docs/rules.md
section 14).

`sampling=marginals` samples nothing: the network reads the belief's calibrated marginals in its
hand blocks (nn/encoding.py encode_holders), one input per legal card's child (or the root, in
policy mode). Meant for a network fine-tuned on such inputs (train/marginal_input.py); the
shipped network accepts them too (its input always was probabilities), which measures what the
fine-tuning adds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scrofazero.agents.settings import check_choice, check_positive
from scrofazero.games.gongzhu.batch import StateBatch, step
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.nn.belief import load_belief
from scrofazero.nn.checkpoint import load_model
from scrofazero.nn.encoding import encode_holders
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.sampling.belief import view_holders
from scrofazero.sampling.stratified import SamplingConfig, draw
from scrofazero.sampling.uniform import owners_to_hands

MODES = ("value", "policy")
SAMPLINGS = ("uniform", "belief", "marginals", "oracle", "oracle_important")
BELIEF_SAMPLINGS = ("belief", "marginals")  # those that read the card-location network


@dataclass
class RawSettings:
    """The raw network player's settings (its keyword arguments besides the network)."""

    num_deals: int = 5  # deals sampled per decision (paper: 5)
    mode: str = "value"  # value (1-ply value search, paper) | policy (argmax of the mean policy)
    # uniform (paper) | belief (deals from the card-location network) | marginals (no deals: the
    # network reads the belief's marginals; for a network fine-tuned on them) | oracle (the true
    # deal: evaluation only) | oracle_important (the deciding cards' holders told: evaluation only)
    sampling: str = "belief"
    # sampling=belief|marginals: the card-location network file ("" = the shipped models/belief.pt)
    beliefs: str = ""
    # sampling=belief|marginals: fitting passes toward the network's marginals (0: the constrained
    # product as it is)
    calibrate: int = SamplingConfig.calibrate
    # sampling=belief|marginals: fit only while more than this many cards are unseen
    calibrate_above: int = SamplingConfig.calibrate_above

    def __post_init__(self):
        self.num_deals = check_positive("num_deals", self.num_deals)
        for key in ("calibrate", "calibrate_above"):
            value = getattr(self, key)
            if not isinstance(value, int) or value < 0:
                raise ValueError(f"{key} must be an integer >= 0, got {value!r}")
        self.mode = check_choice("mode", self.mode, MODES)
        self.sampling = check_choice("sampling", self.sampling, SAMPLINGS)


class RawNetworkAgent:
    """Network player. checkpoint: path loaded with nn.checkpoint.load_model; or model: a
    PolicyValueNet (or any module with its forward). num_deals: deals sampled per decision
    (unused by sampling="marginals"). mode: "value" (1-ply value search) or "policy" (mean
    masked softmax). The other arguments are RawSettings'."""

    name = "raw"

    def __init__(self, checkpoint: str | None = None, model=None, num_deals: int = 5,
                 mode: str = "value", sampling: str = "belief", beliefs: str = "",
                 calibrate: int = SamplingConfig.calibrate,
                 calibrate_above: int = SamplingConfig.calibrate_above, device="cpu"):
        settings = RawSettings(num_deals, mode, sampling, beliefs, calibrate, calibrate_above)
        if (checkpoint is None) == (model is None):
            raise ValueError("give exactly one of checkpoint (a path) or model")
        if checkpoint is not None:
            model = load_model(checkpoint)
        model.eval()
        self.evaluator = NetworkEvaluator(model, device=device)
        self.num_deals = settings.num_deals
        self.mode = settings.mode
        self.sampling = settings.sampling
        self.calibrate = settings.calibrate
        self.calibrate_above = settings.calibrate_above
        # The full player's sampling methods, as plain draws of num_deals deals.
        self._draw = None if self.sampling == "marginals" else SamplingConfig(
            method=self.sampling, num_deals=self.num_deals, beliefs=settings.beliefs,
            calibrate=settings.calibrate, calibrate_above=settings.calibrate_above)
        self.beliefs = load_belief(settings.beliefs) if self.sampling in BELIEF_SAMPLINGS else None
        self.needs_deal = self.sampling.startswith("oracle")  # evaluation only
        self._deal = None

    def observe_deal(self, hands) -> None:
        """The true current hands (4 masks), given by the evaluation arena before each move to a
        player with an oracle sampling (evaluation only)."""
        self._deal = tuple(int(h) for h in hands)

    def _hands(self, view: InfoView, rng: np.random.Generator) -> np.ndarray:
        """[D, 4] hands of the deals this player looks at, by its sampling."""
        belief = self.beliefs.probabilities(view) if self.beliefs is not None else None
        return owners_to_hands(draw(view, self._draw, rng, belief=belief, hands=self._deal).owners)

    def act(self, view: InfoView, rng: np.random.Generator) -> int:
        legal = np.array(view.legal_actions(), dtype=np.int64)  # [L]
        if len(legal) == 1:
            return int(legal[0])  # forced: no sampling, no network call
        if self.sampling == "marginals":
            roots, holders = self._marginal_root(view)
        else:
            hands = self._hands(view, rng)  # [D, 4]
            roots = StateBatch.from_states([GongzhuState.from_view(view, h.tolist())
                                            for h in hands])
            holders = None
        if self.mode == "value":
            scores = self._value_scores(roots, legal, view.seat, holders)
        else:
            scores = self._policy_scores(roots, legal, holders)
        best = np.flatnonzero(scores == scores.max())
        return int(legal[best[int(rng.integers(len(best)))]])

    def _marginal_root(self, view: InfoView) -> tuple[StateBatch, np.ndarray]:
        """The view as one state whose other hands are empty (only its public part and the
        viewer's own hand are read) and what the viewer knows of every hand: [1, 52, 4]."""
        holders = view_holders(view, self.beliefs.probabilities(view), self.calibrate,
                               self.calibrate_above)
        hands = np.zeros((1, 4), dtype=np.uint64)
        hands[0, view.seat] = view.hand
        return StateBatch.from_view(view, hands), holders[None]

    def _evaluate(self, states: StateBatch, holders: np.ndarray | None):
        """The evaluator on `states`, reading `holders` [B, 52, 4] as their hands when given."""
        if holders is None:
            return self.evaluator(states)
        return self.evaluator.evaluate(states, encode_holders(states, holders))

    def _value_scores(self, roots: StateBatch, legal: np.ndarray, seat: int,
                      holders: np.ndarray | None = None) -> np.ndarray:
        """Mean over deals (or roots) of our seat's value after each legal card: [L]."""
        d, k = len(roots), len(legal)
        parents = np.repeat(np.arange(d), k)
        cards = np.tile(legal, d)
        children = step(roots.take(parents), cards)  # [D * L]
        if holders is not None:
            holders = holders[parents]  # [D * L, 52, 4]; the card played now lies in the trick
            holders[np.arange(d * k), cards] = 0.0
        _, values = self._evaluate(children, holders)  # [D * L, 4]
        return values[:, seat].reshape(d, k).mean(axis=0)

    def _policy_scores(self, roots: StateBatch, legal: np.ndarray,
                       holders: np.ndarray | None = None) -> np.ndarray:
        """Mean over deals of the policy restricted to the legal cards (masked softmax): [L]."""
        logits, _ = self._evaluate(roots, holders)  # [D, 52]
        z = logits[:, legal].astype(np.float64)  # [D, L] legal logits only = mask before softmax
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return p.mean(axis=0)
