"""Gongzhu cards: codes, indices, bit masks and the scoring-card layout.

Card index = suit_index * 13 + (rank - 2) with suit order S, H, D, C (docs/rules.md section 1).
A set of cards is a Python int used as a 52-bit mask (bit i = card i); the 16 scoring cards
also have a compact 16-bit layout (bits 0..12 = H2..HA, 13 = SQ, 14 = DJ, 15 = C10) in which
piles are stored and scored. Nothing here knows about players, search or torch.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import SupportsIndex, cast

SUITS = "SHDC"
RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
NUM_CARDS = 52
NUM_SEATS = 4
NUM_TRICKS = 13

SPADES, HEARTS, DIAMONDS, CLUBS = range(4)


def _index(suit: str, rank: str) -> int:
    return SUITS.index(suit) * 13 + RANK_NAMES.index(rank)


SQ = _index("S", "Q")  # the pig
DJ = _index("D", "J")  # the sheep
C10 = _index("C", "10")  # the transformer (doubler)
HEART_CARDS = tuple(range(13, 26))  # H2 .. HA

# Compact 16-bit layout of the scoring cards.
SCORING_CARDS = HEART_CARDS + (SQ, DJ, C10)
SCORING_BIT_SQ = 1 << 13
SCORING_BIT_DJ = 1 << 14
SCORING_BIT_C10 = 1 << 15
ALL_HEARTS_BITS = (1 << 13) - 1
ALL_SCORING_BITS = (1 << 16) - 1

# Base values (docs/rules.md section 3). C10 has no base value; it modifies a pile.
_HEART_VALUES = (0, 0, 0, -10, -10, -10, -10, -10, -10, -20, -30, -40, -50)  # H2 .. HA
BASE_VALUE = [0] * NUM_CARDS
for _r, _v in enumerate(_HEART_VALUES):
    BASE_VALUE[13 + _r] = _v
BASE_VALUE[SQ] = -100
BASE_VALUE[DJ] = 100

# SCORING_BIT[card] is the card's bit in the 16-bit layout, 0 for a non-scoring card.
SCORING_BIT = [0] * NUM_CARDS
for _b, _c in enumerate(SCORING_CARDS):
    SCORING_BIT[_c] = 1 << _b

SUIT_MASK = tuple(((1 << 13) - 1) << (13 * s) for s in range(4))
FULL_MASK = (1 << NUM_CARDS) - 1

# CHUNK_CARDS[s][bits] lists the cards of suit s present in a 13-bit suit pattern, ascending.
CHUNK_CARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(13 * s + r for r in range(13) if bits >> r & 1) for bits in range(1 << 13))
    for s in range(4)
)


def suit_of(card: int) -> int:
    """Suit index (0..3 = S, H, D, C) of a card index."""
    return card // 13


def rank_of(card: int) -> int:
    """Rank 2..14 (J=11, Q=12, K=13, A=14) of a card index."""
    return card % 13 + 2


def card_index(code: str) -> int:
    """Card index of a code such as 'S2', 'h10', 'HT', 'DJ'. Raises ValueError naming the code."""
    if not isinstance(code, str):
        raise ValueError(f"card code must be a string, got {code!r}")
    text = code.strip().upper()
    if len(text) < 2 or text[0] not in SUITS:
        raise ValueError(f"unknown card code {code!r}: expected a suit letter S/H/D/C then a rank")
    rank = text[1:]
    if rank == "T":
        rank = "10"
    if rank not in RANK_NAMES:
        raise ValueError(f"unknown card code {code!r}: rank must be one of 2-10, T, J, Q, K, A")
    return SUITS.index(text[0]) * 13 + RANK_NAMES.index(rank)


def card_code(card: int) -> str:
    """Upper-case code of a card index (0 -> 'S2', 47 -> 'C10')."""
    check_card(card)
    return SUITS[card // 13] + RANK_NAMES[card % 13]


def check_card(card: object) -> int:
    """Return card as an int if it is a valid card index, else raise ValueError naming it."""
    try:
        if isinstance(card, bool):
            raise TypeError
        index = operator.index(cast(SupportsIndex, card))  # Python and numpy integers, or raises
    except TypeError:
        raise ValueError(f"card must be an integer index 0..51, got {card!r}") from None
    if not 0 <= index < NUM_CARDS:
        raise ValueError(f"card index {index} is out of range 0..51")
    return index


def cards_to_mask(cards: Iterable[int]) -> int:
    """52-bit mask of an iterable of card indices."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def mask_to_cards(mask: int) -> list[int]:
    """Ascending card indices in a 52-bit mask."""
    out: list[int] = []
    for s in range(4):
        out.extend(CHUNK_CARDS[s][(mask >> (13 * s)) & 0x1FFF])
    return out


def scoring_mask(cards: Iterable[int]) -> int:
    """16-bit scoring layout of the scoring cards among `cards` (others are ignored)."""
    bits = 0
    for c in cards:
        bits |= SCORING_BIT[c]
    return bits


def scoring_bits_to_cards(bits: int) -> list[int]:
    """Card indices of a 16-bit scoring mask."""
    return [c for b, c in enumerate(SCORING_CARDS) if bits >> b & 1]


def format_cards(cards: Iterable[int]) -> str:
    """Space-separated codes, e.g. 'S2 HA C10'."""
    return " ".join(card_code(c) for c in cards)
