"""The behaviour network: which card a seat plays, from its own information just before it plays.

Its inputs are nn/belief.py's `features` with the viewer the seat to move (its hand, then only
public information); its output is a softmax over the seat's legal cards. Training takes
`behaviour_loss` per batch of recorded decisions; policy-based inference over sampled worlds
takes the fast path (`public_pre`, `log_prob_rows`), which reuses everything but the hand block.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from scrofazero import shipped
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.nn.belief import HAND_OFFSET, Positions, ResidualMLP, features
from scrofazero.nn.netfile import load_net_file, save_net_file

# Files are refused unless both match: the features are belief.py's, so its version moves them.
FEATURE_VERSION = 1
FORMAT = "scrofazero-behaviour"

# The shipped behaviour network (shipped.py knows the files; none is trained yet, and
# load_behaviour(None) says so).
SHIPPED_BEHAVIOUR = shipped.BEHAVIOUR

_SUIT = np.arange(NUM_CARDS) // 13
_HAND = slice(HAND_OFFSET, HAND_OFFSET + NUM_CARDS)


def led_suit(p: Positions) -> np.ndarray:
    """The suit led in the current trick of each position.

    Args:
        p: B positions.

    Returns:
        [B] int64: the led suit 0..3, or -1 where the trick has not started (plies % 4 == 0).
    """
    plies = np.asarray(p.plies, dtype=np.int64)
    first = plies - plies % 4
    started = plies % 4 != 0
    # Clip so that positions at the end of the game (plies == 52) index in bounds; not read.
    card = p.cards[np.arange(len(plies)), np.minimum(first, NUM_CARDS - 1)]
    return np.where(started, card // 13, -1).astype(np.int64)


def follow_suit(hands: np.ndarray, led: np.ndarray) -> np.ndarray:
    """The legal cards of hands facing a led suit: the led suit's cards when the hand holds one,
    else the whole hand.

    Args:
        hands: [R, 52] bool, the hands of the seats to move.
        led: [R] int, the led suit, or -1 when the seat leads.

    Returns:
        [R, 52] bool legal cards.
    """
    hands = np.asarray(hands, dtype=bool)
    led = np.asarray(led)
    follow = hands & (_SUIT[None, :] == led[:, None])  # all False where led is -1
    return np.where(follow.any(axis=1, keepdims=True), follow, hands)


def legal_mask(p: Positions) -> np.ndarray:
    """The cards the viewer may play at each position (the caller guarantees that the viewer is
    the seat to move).

    Args:
        p: B positions.

    Returns:
        [B, 52] bool: the hand restricted to the led suit when the trick has started and the hand
        holds that suit, else the whole hand.
    """
    return follow_suit(p.hand, led_suit(p))


def masked_log_softmax(logits: torch.Tensor, legal: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of a softmax over the legal cards (masked before the softmax).

    Args:
        logits: [B, 52] BehaviourNet outputs.
        legal: [B, 52] bool legal cards.

    Returns:
        [B, 52] log-probabilities, -inf off the mask (all NaN in a row with no legal card).
    """
    return torch.log_softmax(logits.masked_fill(~legal, float("-inf")), dim=-1)


class BehaviourNet(ResidualMLP):
    """Inputs -> ReLU layer of `hidden` -> `num_blocks` residual blocks -> [B, 52] logits.

    The output layer starts at zero, so an untrained network plays uniformly over the legal
    cards. The input layer is linear in the inputs, and only its hand columns depend on the
    world a caller imagines: `public_pre` and `hand_logits` split it along that line.

    Args:
        hidden: width of the input layer and of the residual blocks (1..65536).
        num_blocks: residual blocks (0..64).
        dropout: dropout probability after the input layer while training, in [0, 1).
    """

    def __init__(self, hidden: int = 256, num_blocks: int = 2, dropout: float = 0.0):
        super().__init__("behaviour network", hidden, num_blocks, dropout, NUM_CARDS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Inputs x [B, INPUT_SIZE] (`features`, viewer = the seat to move) -> [B, 52] logits,
        not yet masked (masked_log_softmax masks them). The same trunk as `hand_logits`, so
        that the two paths can differ only by rounding."""
        return self.trunk(self.inp(x))

    def public_pre(self, x: torch.Tensor) -> torch.Tensor:
        """The input layer's pre-activations without the hand: W x_public + b.

        Args:
            x: [P, INPUT_SIZE] features; their hand block is ignored.

        Returns:
            [P, hidden], shared by every world at the same position.
        """
        x = x.clone()
        x[:, _HAND] = 0.0
        pre: torch.Tensor = self.inp(x)
        return pre

    def hand_logits(self, public_pre: torch.Tensor, pos_index: torch.Tensor,
                    hands: torch.Tensor) -> torch.Tensor:
        """Logits of many (position, hand) rows from the positions' public pre-activations.

        Args:
            public_pre: [P, hidden] from `public_pre`.
            pos_index: [R] int64, each row's position in 0..P-1.
            hands: [R, 52] float 0/1, each row's hand.

        Returns:
            [R, 52] logits, equal to forward() of the rows' full features up to rounding.
        """
        w_hand = self.inp.weight[:, _HAND]  # [hidden, 52]
        return self.trunk(torch.addmm(public_pre[pos_index], hands, w_hand.t()))


def _pick(logp: torch.Tensor, cards: npt.ArrayLike) -> np.ndarray:
    """[R] float32 entries logp[r, cards[r]]."""
    idx = torch.from_numpy(np.asarray(cards, dtype=np.int64))[:, None]
    return logp.gather(1, idx)[:, 0].numpy().astype(np.float32, copy=False)


def _rows(p: Positions, pos_index: npt.ArrayLike, hands: npt.ArrayLike) -> Positions:
    """Positions of rows: position pos_index[r] of `p` with the viewer holding hands[r]."""
    rows = p.take(np.asarray(pos_index, dtype=np.int64))
    return Positions(np.asarray(hands, dtype=bool), rows.cards, rows.seats, rows.plies,
                     rows.viewer)


def behaviour_loss(net: BehaviourNet, p: Positions, cards: np.ndarray) -> torch.Tensor:
    """Mean cross-entropy of the cards played, under the softmax over the legal cards.

    Args:
        net: the network being trained (its mode, train or eval, is left as it is).
        p: B positions, each one decision: viewer = the seat to move.
        cards: [B] int, the card played at each.

    Returns:
        A scalar tensor with gradients. ValueError when a card is not legal at its position
        (the record and the positions disagree).
    """
    cards = np.asarray(cards, dtype=np.int64)
    legal = legal_mask(p)
    if cards.shape != (len(p),) or not legal[np.arange(len(p)), cards].all():
        raise ValueError("behaviour_loss: every card must be legal at its position "
                         f"({len(p)} positions, cards of shape {cards.shape})")
    logits = net(torch.from_numpy(features(p)))
    logp = masked_log_softmax(logits, torch.from_numpy(legal))
    return -logp.gather(1, torch.from_numpy(cards)[:, None]).mean()


class BehaviourModel:
    """A loaded behaviour network for play: log-probabilities of the cards a seat plays.

    Args:
        net: the trained network; switched to evaluation mode.
        meta: what the file says of its training (plain data), kept as `meta`.
    """

    def __init__(self, net: BehaviourNet, meta: Mapping[str, Any] | None = None) -> None:
        self.net = net.eval()
        self.meta = dict(meta or {})

    @torch.inference_mode()
    def log_probs(self, p: Positions) -> np.ndarray:
        """Log-probabilities of each card at B positions (the plain path: full features).

        Args:
            p: B positions, viewer = the seat to move.

        Returns:
            [B, 52] float32, -inf off the legal cards.
        """
        logits = self.net(torch.from_numpy(features(p)))
        return masked_log_softmax(logits, torch.from_numpy(legal_mask(p))).numpy()

    @torch.inference_mode()
    def public_pre(self, p: Positions) -> torch.Tensor:
        """The fast path's first step: the input layer's public part at P positions, computed
        once and shared by every world evaluated there.

        Args:
            p: P positions, viewer = the seat to move; the hands are ignored.

        Returns:
            [P, hidden] float32 tensor for `log_prob_rows`.
        """
        return self.net.public_pre(torch.from_numpy(features(p)))

    @torch.inference_mode()
    def log_prob_rows(self, public_pre: torch.Tensor, pos_index: np.ndarray, hands: np.ndarray,
                      cards: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """log P(card | hand, public history) of many rows in one batch (the fast path).

        Args:
            public_pre: [P, hidden] from `public_pre`.
            pos_index: [R] int, each row's position in 0..P-1.
            hands: [R, 52] bool, the hand of the seat to move in each row's world.
            cards: [R] int, the card whose log-probability is wanted.
            legal: [R, 52] bool, the legal cards of each row (follow_suit(hands, led_suit(p)
                [pos_index]) gives them).

        Returns:
            [R] float32; -inf where the card is not legal in its row.
        """
        hands_t = torch.from_numpy(np.asarray(hands, dtype=np.float32))
        index = torch.from_numpy(np.asarray(pos_index, dtype=np.int64))
        logits = self.net.hand_logits(public_pre, index, hands_t)
        legal_t = torch.from_numpy(np.asarray(legal, dtype=bool))
        return _pick(masked_log_softmax(logits, legal_t), cards)

    @torch.inference_mode()
    def log_prob_rows_plain(self, p: Positions, pos_index: np.ndarray, hands: np.ndarray,
                            cards: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """`log_prob_rows` by the plain path: full features of every row through forward().
        The reference the fast path is tested against, and the slower way to the same numbers.

        Args:
            p: P positions (hands ignored); the other arguments as for `log_prob_rows`.

        Returns:
            [R] float32; -inf where the card is not legal in its row.
        """
        logits = self.net(torch.from_numpy(features(_rows(p, pos_index, hands))))
        legal_t = torch.from_numpy(np.asarray(legal, dtype=bool))
        return _pick(masked_log_softmax(logits, legal_t), cards)


def save_behaviour(path: str | os.PathLike[str], net: BehaviourNet,
                   meta: Mapping[str, Any] | None = None) -> Path:
    """Write a self-describing behaviour file atomically (nn/netfile.py): format, feature version,
    shape, weights and `meta`, plain data on its training; returns the path written."""
    return save_net_file(path, FORMAT, FEATURE_VERSION, net, meta)


def load_behaviour(path: str | os.PathLike[str] | None = None) -> BehaviourModel:
    """The behaviour network of `path` (None or "": the shipped one); a ValueError naming the file
    when it is not a behaviour file of these features. A file already loaded (same path, size and
    modification time) is not read again: every player shares that model (nn/netfile.py).

    Args:
        path: the behaviour file; None or "" for SHIPPED_BEHAVIOUR.
    """
    path = Path(path) if path else SHIPPED_BEHAVIOUR
    if not path.is_file():
        raise FileNotFoundError(f"behaviour network {path} not found (set behaviour=PATH; "
                                "python train.py learner=behaviour trains one)")
    return load_net_file(path, FORMAT, FEATURE_VERSION, "behaviour", BehaviourNet, BehaviourModel)
