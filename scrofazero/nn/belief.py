"""The card-location network: where the unseen cards lie, from one seat's information.

From a seat's view (its own hand, every card played so far and by whom, in trick order) the
network gives, for each card the seat cannot see, a probability over the other three seats that
can still hold it: a softmax per card over the seats allowed by what is known (a seat that has
shown a void in the card's suit, or has no cards left, cannot hold it). Seats are relative to
the viewer: 1 is the next seat (left), 2 the partner, 3 the seat before (right).

Inputs (INPUT_SIZE floats, all 0/1 but the last four):
- [0:52] the viewer's current hand;
- 52 play slots (trick t, position p = slot 4t + p), each 56 wide: the card (52) and the
  relative seat that played it (4); empty slots are zero;
- [4 x 52] the cards each relative seat has played; [4 x 52] those it played off the led suit;
- [4 x 4] each relative seat's shown voids; [3] the other seats' hand sizes / 13; [1] plays / 52.

Sampling deals from these probabilities is sampling/belief.py's job; this module knows torch
and the rules, nothing of players or search. Files carry their own shape and feature version
(`save_belief`, `load_belief`), so a file made for other features is refused by name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from scrofazero import shipped
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.nn.netfile import load_net_file, save_net_file

FEATURE_VERSION = 1
FORMAT = "scrofazero-belief"
SLOT_WIDTH = NUM_CARDS + 4
HAND_OFFSET = 0
SLOTS_OFFSET = NUM_CARDS
PLAYED_OFFSET = SLOTS_OFFSET + NUM_CARDS * SLOT_WIDTH
DISCARD_OFFSET = PLAYED_OFFSET + 4 * NUM_CARDS
VOID_OFFSET = DISCARD_OFFSET + 4 * NUM_CARDS
SIZE_OFFSET = VOID_OFFSET + 16
PLIES_OFFSET = SIZE_OFFSET + 3
INPUT_SIZE = PLIES_OFFSET + 1  # 3396
OTHERS = 3  # output seats: relative 1, 2, 3

# The shipped card-location network (models/belief.md is its card; shipped.py knows the files).
SHIPPED_BELIEF = shipped.BELIEF

_CARDS = np.arange(NUM_CARDS)
_SUIT = _CARDS // 13


@dataclass(frozen=True)
class Positions:
    """B positions, each one seat's information at one moment of a game.

    hand [B, 52] bool: the viewer's current hand; cards [B, 52] int: the plays of the game in
    order (entries at or beyond `plies` are ignored); seats [B, 52] int: the absolute seat of each
    play; plies [B] int: how many plays have been made; viewer [B] int: the viewing seat."""

    hand: np.ndarray
    cards: np.ndarray
    seats: np.ndarray
    plies: np.ndarray
    viewer: np.ndarray

    def __len__(self) -> int:
        return len(self.plies)

    def take(self, idx: np.ndarray | slice) -> Positions:
        """Rows `idx` (an index array, mask or slice) as new Positions."""
        return Positions(self.hand[idx], self.cards[idx], self.seats[idx], self.plies[idx],
                         self.viewer[idx])


def view_positions(views: Iterable[InfoView]) -> Positions:
    """The Positions of InfoViews, one row each.

    Args:
        views: InfoViews (any iterable), each one seat's information at one moment.
    """
    views = list(views)
    b = len(views)
    hand = np.zeros((b, NUM_CARDS), dtype=bool)
    cards = np.zeros((b, NUM_CARDS), dtype=np.int64)
    seats = np.zeros((b, NUM_CARDS), dtype=np.int64)
    plies = np.zeros(b, dtype=np.int64)
    viewer = np.zeros(b, dtype=np.int64)
    for row, view in enumerate(views):
        hand[row] = (np.uint64(view.hand) >> _CARDS.astype(np.uint64)) & np.uint64(1)
        n = len(view.history)
        if n:
            seats[row, :n], cards[row, :n] = zip(*view.history)
        plies[row] = n
        viewer[row] = view.seat
    return Positions(hand, cards, seats, plies, viewer)


def _plays(p: Positions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, plies, cards, relative seats, led suit) of every play made before each position."""
    valid = _CARDS[None, :] < p.plies[:, None]  # [B, 52]
    rows, ply = np.nonzero(valid)
    card = p.cards[rows, ply]
    rel = (p.seats[rows, ply] - p.viewer[rows]) % 4
    led = p.cards[rows, ply - ply % 4] // 13
    return rows, ply, card, rel, led


def allowed_seats(p: Positions) -> np.ndarray:
    """Which other seats may hold each card, as far as the viewer knows.

    Args:
        p: B positions.

    Returns:
        [B, 52, 3] bool: [b, c, j] is whether relative seat 1 + j may hold card c (the card is
        unseen, the seat has shown no void in its suit and still holds cards).
    """
    rows, ply, card, rel, led = _plays(p)
    played = np.zeros((len(p), NUM_CARDS), dtype=bool)
    played[rows, card] = True
    void = np.zeros((len(p), 4, 4), dtype=bool)
    off = card // 13 != led
    void[rows[off], rel[off], led[off]] = True
    count = np.zeros((len(p), 4), dtype=np.int64)
    np.add.at(count, (rows, rel), 1)
    unseen = ~p.hand & ~played  # [B, 52]
    free = ~void[:, 1:, :][:, :, _SUIT]  # [B, 3, 52]
    has_cards = (count[:, 1:] < 13)[:, :, None]  # [B, 3, 1]
    allowed: np.ndarray = (unseen[:, None, :] & free & has_cards).transpose(0, 2, 1)
    return allowed


def features(p: Positions) -> np.ndarray:
    """The network's inputs for B positions.

    Args:
        p: B positions.

    Returns:
        [B, INPUT_SIZE] float32, laid out as the module docstring describes.
    """
    b = len(p)
    x = np.zeros((b, INPUT_SIZE), dtype=np.float32)
    x[:, HAND_OFFSET:HAND_OFFSET + NUM_CARDS] = p.hand
    rows, ply, card, rel, led = _plays(p)
    x[rows, SLOTS_OFFSET + ply * SLOT_WIDTH + card] = 1.0
    x[rows, SLOTS_OFFSET + ply * SLOT_WIDTH + NUM_CARDS + rel] = 1.0
    x[rows, PLAYED_OFFSET + rel * NUM_CARDS + card] = 1.0
    off = card // 13 != led
    x[rows[off], DISCARD_OFFSET + rel[off] * NUM_CARDS + card[off]] = 1.0
    x[rows[off], VOID_OFFSET + rel[off] * 4 + led[off]] = 1.0
    count = np.zeros((b, 4), dtype=np.int64)
    np.add.at(count, (rows, rel), 1)
    x[:, SIZE_OFFSET:SIZE_OFFSET + 3] = (13 - count[:, 1:]) / 13.0
    x[:, PLIES_OFFSET] = p.plies / NUM_CARDS
    return x


class ResidualMLP(nn.Module):
    """Inputs -> ReLU layer of `hidden` -> `num_blocks` residual blocks -> `outputs` linear
    outputs, the output layer starting at zero: the trunk of the inference networks (this
    module's BeliefNet, nn/behaviour.py's BehaviourNet).

    Args:
        what: the network's name in errors ("belief network").
        hidden: width of the input layer and of the residual blocks (1..65536).
        num_blocks: residual blocks (0..64).
        dropout: dropout probability after the input layer while training, in [0, 1).
        outputs: width of the output layer.
    """

    def __init__(self, what: str, hidden: int, num_blocks: int, dropout: float, outputs: int):
        super().__init__()
        if not 0.0 <= float(dropout) < 1.0:
            raise ValueError(f"{what} dropout={dropout}: must lie in [0, 1)")
        self.dropout = float(dropout)
        if not 1 <= int(hidden) <= 65536 or not 0 <= int(num_blocks) <= 64:
            raise ValueError(f"{what} shape hidden={hidden}, num_blocks={num_blocks}: "
                             "hidden must lie in 1..65536 and num_blocks in 0..64")
        self.hidden, self.num_blocks = int(hidden), int(num_blocks)
        self.inp = nn.Linear(INPUT_SIZE, self.hidden)
        self.blocks = nn.ModuleList(
            nn.Sequential(nn.Linear(self.hidden, self.hidden), nn.ReLU(),
                          nn.Linear(self.hidden, self.hidden))
            for _ in range(self.num_blocks))
        self.out = nn.Linear(self.hidden, outputs)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def trunk(self, pre: torch.Tensor) -> torch.Tensor:
        """Input-layer pre-activations [B, hidden] -> output-layer values [B, outputs]."""
        h = torch.relu(pre)
        if self.dropout:  # against remembering whole deals: every position of a game shares one
            h = nn.functional.dropout(h, self.dropout, self.training)
        for block in self.blocks:
            h = torch.relu(h + block(h))
        out: torch.Tensor = self.out(h)
        return out

    def config(self) -> dict[str, Any]:
        """Constructor arguments as plain Python values (stored in the network's files)."""
        return {"hidden": self.hidden, "num_blocks": self.num_blocks, "dropout": self.dropout}


class BeliefNet(ResidualMLP):
    """Inputs -> ReLU layer of `hidden` -> `num_blocks` residual blocks -> [B, 52, 3] logits.

    The logits are added to log(hand size) of each seat: with the output layer starting at zero
    the network starts from "a card lies with a seat in proportion to the cards it holds" (the
    uniform prior, up to the voids) and learns only how the plays move belief away from it.

    Args:
        hidden: width of the input layer and of the residual blocks (1..65536).
        num_blocks: residual blocks (0..64).
        dropout: dropout probability after the input layer while training, in [0, 1).
    """

    def __init__(self, hidden: int = 512, num_blocks: int = 2, dropout: float = 0.0):
        super().__init__("belief network", hidden, num_blocks, dropout, NUM_CARDS * OTHERS)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Inputs x [B, INPUT_SIZE] (`features`) -> [B, 52, 3] logits over relative seats 1..3,
        not yet masked (masked_log_probs masks them)."""
        sizes = x[:, SIZE_OFFSET:SIZE_OFFSET + OTHERS].clamp(min=1e-3)  # [B, 3] (0 -> masked)
        return (self.trunk(self.inp(x)).view(-1, NUM_CARDS, OTHERS)
                + torch.log(sizes)[:, None, :])


def masked_log_probs(logits: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of a softmax over the allowed seats of each card (masked before the
    softmax).

    Args:
        logits: [B, 52, 3] BeliefNet outputs.
        allowed: [B, 52, 3] bool, `allowed_seats` of the same positions.

    Returns:
        [B, 52, 3] log-probabilities; rows with no allowed seat (cards the viewer sees) are all
        -inf.
    """
    return torch.log_softmax(logits.masked_fill(~allowed, float("-inf")), dim=-1)


def relative_to_absolute(probs: np.ndarray, viewer: int) -> np.ndarray:
    """[52, 3] probabilities over relative seats 1..3 -> [52, 4] over absolute seats."""
    out = np.zeros((NUM_CARDS, 4), dtype=np.float64)
    for j in range(OTHERS):
        out[:, (viewer + 1 + j) % 4] = probs[:, j]
    return out


class BeliefModel:
    """A loaded card-location network for play: `probabilities(view)` -> [52, 4].

    Args:
        net: the trained network; switched to evaluation mode.
        meta: what the file says of its training (plain data), kept as `meta`.
    """

    def __init__(self, net: BeliefNet, meta: Mapping[str, Any] | None = None) -> None:
        self.net = net.eval()
        self.meta = dict(meta or {})

    @torch.no_grad()
    def relative(self, positions: Positions) -> np.ndarray:
        """Card-location probabilities of B positions.

        Args:
            positions: B positions.

        Returns:
            [B, 52, 3] float64 probabilities over relative seats 1..3 (0 where a seat cannot
            hold the card, all 0 for cards the viewer sees).
        """
        allowed = allowed_seats(positions)
        logits = self.net(torch.from_numpy(features(positions)))
        logp = masked_log_probs(logits, torch.from_numpy(allowed))
        probs = torch.exp(logp).nan_to_num(0.0).numpy().astype(np.float64)
        return np.where(allowed, probs, 0.0)

    def probabilities(self, view: InfoView) -> np.ndarray:
        """Card-location probabilities of one seat's view.

        Args:
            view: the viewing seat's information.

        Returns:
            [52, 4] float64: for each card the viewer cannot see, the probability that each
            absolute seat holds it (rows of seen cards are 0).
        """
        return relative_to_absolute(self.relative(view_positions([view]))[0], view.seat)


def save_belief(path: str | os.PathLike[str], net: BeliefNet,
                meta: Mapping[str, Any] | None = None) -> Path:
    """Write a self-describing belief file atomically (nn/netfile.py): format, feature version,
    shape, weights and `meta`, plain data on its training; returns the path written."""
    return save_net_file(path, FORMAT, FEATURE_VERSION, net, meta)


def load_belief(path: str | os.PathLike[str] | None = None) -> BeliefModel:
    """The belief network of `path` (None or "": the shipped one); a ValueError naming the file
    when it is not a belief file of these features. A file already loaded (same path, size and
    modification time) is not read again: every player shares that model (nn/netfile.py).

    Args:
        path: the belief file; None or "" for SHIPPED_BELIEF.
    """
    path = Path(path) if path else SHIPPED_BELIEF
    if not path.is_file():
        raise FileNotFoundError(f"belief network {path} not found (set beliefs=PATH; "
                                "python train.py learner=belief trains one)")
    return load_net_file(path, FORMAT, FEATURE_VERSION, "belief", BeliefNet, BeliefModel)
