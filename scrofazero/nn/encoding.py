"""Network input for Gongzhu: a batch of full-information states -> [B, 434] float32.

The features follow docs/rules.md section 11 and are always relative to the player to move p (seat
offsets 0, +1, +2, +3), so one encoder serves every seat. Reads `StateBatch` arrays only;
bump ENCODING_VERSION whenever the layout changes (checkpoints record it).
"""

from __future__ import annotations

import numpy as np

from scrofazero.games.gongzhu.batch import StateBatch, current_player
from scrofazero.games.gongzhu.cards import NUM_CARDS

ENCODING_VERSION = 1
HANDS_OFFSET = 0  # [0:208] 4 x 52 hands of seats p, p+1, p+2, p+3
PILES_OFFSET = 208  # [208:272] 4 x 16 captured scoring cards (16-bit layout), same seats
TRICK_OFFSET = 272  # [272:434] 3 x 54 current trick, most recent card first
TRICK_BLOCK = NUM_CARDS + 2  # one padding slot at each end of a diffused card block
INPUT_SIZE = TRICK_OFFSET + 3 * TRICK_BLOCK  # 434

_CARD_SHIFTS = np.arange(NUM_CARDS, dtype=np.uint64)  # [52]
_PILE_SHIFTS = np.arange(16, dtype=np.int32)  # [16]
_SEAT_OFFSETS = np.arange(4)  # [4]


def encode(s: StateBatch) -> np.ndarray:
    """Features of every row of `s` from the point of view of its player to move.

    Trick block j (j = 0, 1, 2) holds the card played j + 1 plies before p's turn, "diffused":
    positions card, card + 1, card + 2 of the 54-wide block (the card's own slot is card + 1),
    so S2 and CA also get three ones (the original code lost a just-played S2 to an
    off-by-one). Blocks with no card stay 0.

    Args:
        s: a batch of B Gongzhu states, at any ply.

    Returns:
        [B, 434] float32 of zeros and ones.
    """
    b = len(s)
    rows = np.arange(b)[:, None]  # [B, 1]
    seats = (current_player(s)[:, None] + _SEAT_OFFSETS) & 3  # [B, 4] p, p+1, p+2, p+3
    out = np.zeros((b, INPUT_SIZE), dtype=np.float32)

    hands = s.hands[rows, seats]  # [B, 4] uint64
    hand_bits = (hands[:, :, None] >> _CARD_SHIFTS) & np.uint64(1)  # [B, 4, 52]
    out[:, HANDS_OFFSET:PILES_OFFSET] = hand_bits.reshape(b, 4 * NUM_CARDS)

    piles = s.piles[rows, seats]  # [B, 4] int32
    pile_bits = (piles[:, :, None] >> _PILE_SHIFTS) & 1  # [B, 4, 16]
    out[:, PILES_OFFSET:TRICK_OFFSET] = pile_bits.reshape(b, 64)

    trick_len = s.trick_len.astype(np.int64)  # [B]; at most 3 between plies
    for j in range(3):
        pos = trick_len - 1 - j  # position in play order of the card j + 1 plies back
        has = np.flatnonzero(pos >= 0)  # [R]
        card = s.trick[has, pos[has]].astype(np.int64)  # [R]
        first = TRICK_OFFSET + TRICK_BLOCK * j + card  # the slot left of the card's own slot
        out[has, first] = 1.0
        out[has, first + 1] = 1.0
        out[has, first + 2] = 1.0
    return out


def encode_own_view(s: StateBatch) -> np.ndarray:
    """Like `encode`, but as the player to move sees the deal: its own hand exact and every card
    it cannot see (those in the other three hands) written as 1/3 in each other hand's block.
    The input of the Bayesian (IEC) weighting's policy queries (docs/rules.md sections 11 and
    13).

    Args:
        s: a batch of B Gongzhu states, at any ply.

    Returns:
        [B, 434] float32: `encode`'s features with the three other hands' blocks replaced.
    """
    x = encode(s)
    b = len(s)
    block = slice(HANDS_OFFSET + NUM_CARDS, PILES_OFFSET)  # hands of seats p+1, p+2, p+3
    unseen = x[:, block].reshape(b, 3, NUM_CARDS).sum(axis=1) / 3.0  # [B, 52]
    x[:, block] = np.tile(unseen, 3)
    return x


def encode_holders(s: StateBatch, holders: np.ndarray) -> np.ndarray:
    """Like `encode`, but the hand blocks hold what some viewer knows of the hands.

    holders [B, 52, 4]: the probability that each absolute seat holds each card now (1 or 0 where
    the viewer knows, as for its own hand and the cards already played; a belief's marginals for
    the cards it cannot see). The blocks are rotated relative to each row's player to move as
    `encode`'s are, so the viewer may be the mover or not (the child of a 1-ply search, whose
    mover is uncertain to the viewer). The hands of `s` are not read: only its public part
    (piles, trick, whose turn) is. One-hot holders of the true deal give `encode(s)` exactly.

    Args:
        s: the states (any hands: zeros will do).
        holders: [B, 52, 4] probabilities per card and absolute seat.
    """
    holders = np.asarray(holders, dtype=np.float32)
    b = len(s)
    if holders.shape != (b, NUM_CARDS, 4):
        raise ValueError(f"holders must have shape ({b}, {NUM_CARDS}, 4), got {holders.shape}")
    seats = (current_player(s)[:, None] + _SEAT_OFFSETS) & 3  # [B, 4] p, p+1, p+2, p+3
    relative = np.take_along_axis(holders, seats[:, None, :], axis=2)  # [B, 52, 4]
    x = encode(s)
    x[:, HANDS_OFFSET:PILES_OFFSET] = relative.transpose(0, 2, 1).reshape(b, 4 * NUM_CARDS)
    return x
