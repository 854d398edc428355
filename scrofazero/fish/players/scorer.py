"""The learned Fish player's network and its files: `Scorer`, one small MLP applied to every
candidate move's feature vector (FEATURES, built by fish/players/learned.py from the exact
belief), and the model files it is saved in and read from (`model_payload`, `load_scorer`;
read with weights_only, so no code runs from a file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from scrofazero.runs import check_finite

DEFAULT_MODEL = "models/fish_learned.pt"
MODEL_FORMAT = "scrofazero fish scorer"
MODEL_VERSION = 1


# One row per candidate; every entry in [0, 1]. Slot 0 is the move's chance of success (a hit,
# or a right call): the scorer adds alpha x slot 0 to its MLP, so a fresh network already
# prefers likely hits, as the logic player does.
FEATURES = (
    "p_success",  # ask: P(target holds the card); call: P(the most likely allocation is right)
    "is_call",
    "certain",  # p_success is 1
    "card_with_opponents",  # ask: P(card with any opponent)
    "card_with_teammates",  # ask: P(card with a teammate), a wasted ask
    "card_best_other_opponent",  # ask: max P over the other opponents
    "card_possible_holders",  # ask: seats that may hold the card / players
    "mine_in_set",  # my cards of the set / 6
    "team_expected_in_set",  # expected cards of the set with my team / 6
    "team_certain_in_set",  # cards of the set certainly with my team / 6
    "known_in_set",  # cards of the set whose holder I know / 6
    "target_expected_in_set",  # ask: target's expected cards of the set / 6
    "target_certain_in_set",  # ask: cards of the set certainly with the target / 6
    "target_hand",  # ask: target's hand count / cards dealt per seat
    "target_lacks_set",  # ask: set cards I lack that the target surely lacks / cards I lack
    "set_shown",  # a card of the set reached me in public
    "set_asked",  # I asked for a card of the set before
    "my_hand",  # my hand count / cards dealt per seat
    "team_cards",  # my team's cards / cards dealt per team
    "opponent_cards",  # the opponents' cards / cards dealt per team
    "teammates_with_cards",  # teammates (me included) holding cards / team size
    "opponents_with_cards",  # opponents holding cards / team size
    "sets_left",  # uncalled sets / sets
    "sets_mine",  # sets my team won / sets
    "sets_theirs",  # sets the other team won / sets
    "eight_players",  # 1 at an 8-player table
)
NUM_FEATURES = len(FEATURES)


class Scorer(nn.Module):
    """score(x) = head(MLP(x)) + alpha * x[p_success] for every candidate row x; value = a
    linear read of the candidates' mean hidden vector (the REINFORCE baseline)."""

    def __init__(self, hidden: int = 64, alpha: float = 10.0, num_features: int = NUM_FEATURES):
        super().__init__()
        self.hidden, self.num_features = int(hidden), int(num_features)
        self.body = nn.Sequential(nn.Linear(num_features, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU())
        self.head = nn.Linear(hidden, 1)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)
        self.alpha = nn.Parameter(torch.tensor(float(alpha)))
        self.value = nn.Linear(hidden, 1)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x [B, K, F], mask [B, K] (True: a candidate) -> scores [B, K] (-inf off the mask),
        value [B]."""
        h = self.body(x)  # [B, K, H]
        scores = self.head(h).squeeze(-1) + self.alpha * x[..., 0]
        scores = scores.masked_fill(~mask, float("-inf"))
        weights = mask.to(h.dtype).unsqueeze(-1)
        pooled = (h * weights).sum(1) / weights.sum(1).clamp(min=1.0)
        return scores, self.value(pooled).squeeze(-1)

    def scores(self, x: np.ndarray) -> np.ndarray:
        """Scores [K] of one decision's candidates x [K, F]."""
        with torch.no_grad():
            t = torch.as_tensor(x, dtype=torch.float32).unsqueeze(0)
            scores, _ = self(t, torch.ones(t.shape[:2], dtype=torch.bool))
        return scores[0].numpy()

    def spec(self) -> dict:
        return {"hidden": self.hidden, "num_features": self.num_features}


def model_payload(net: Scorer, **extra) -> dict:
    """What a model file holds (torch.save): format, the network's shape and weights."""
    return {"format": MODEL_FORMAT, "version": MODEL_VERSION, "features": list(FEATURES),
            "net": net.spec(), "model": net.state_dict(), **extra}


def scorer_from_payload(payload, path) -> Scorer:
    """The scorer a payload holds; ValueError naming `path` for another format, other features,
    weights that do not fit the network or hold a NaN or infinity."""
    if not isinstance(payload, dict) or payload.get("format") != MODEL_FORMAT:
        raise ValueError(f"{path}: not a Fish scorer file (format {MODEL_FORMAT!r})")
    if payload.get("version") != MODEL_VERSION or payload.get("features") != list(FEATURES):
        raise ValueError(f"{path}: written for other features or version "
                         f"({payload.get('version')}); retrain it")
    spec = payload["net"]
    if spec.get("num_features") != NUM_FEATURES:
        raise ValueError(f"{path}: {spec.get('num_features')} features, expected {NUM_FEATURES}")
    net = Scorer(hidden=int(spec["hidden"]))
    try:
        net.load_state_dict(payload["model"])
    except (RuntimeError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: weights do not fit the network ({err})") from None
    check_finite(net.state_dict(), path)
    net.eval()
    return net


def read_payload(path) -> dict:
    """torch.load with weights_only (no code runs from the file); ValueError naming `path`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Fish scorer file {path} does not exist (train one with "
                                "python train.py game=fish, or pass checkpoint=PATH)")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # pickle, zip and torch raise many types for a bad file
        raise ValueError(f"{path}: not a Fish scorer file ({err})") from None


_CACHE: dict = {}


def load_scorer(path=DEFAULT_MODEL) -> Scorer:
    """The scorer in a model file or a training checkpoint (both hold `model`), cached by path
    and modification time (a match builds a player per seat and game)."""
    path = Path(path)
    key = (str(path.resolve()), path.stat().st_mtime_ns if path.is_file() else None)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = scorer_from_payload(read_payload(path), path)
    return _CACHE[key]
