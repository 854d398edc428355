"""Cards: codes and indices.

Invariants: the documented index formula and examples (S2=0, SA=12, H2=13, DJ=35, C10=47,
CA=51); parsing is case-insensitive and accepts T for 10; code/index round trip over the deck;
unknown codes and out-of-range indices raise ValueError naming the input; masks round trip.
"""

import numpy as np
import pytest

from scrofazero.games.gongzhu.cards import (
    C10,
    DJ,
    SCORING_BIT,
    SCORING_CARDS,
    SQ,
    card_code,
    card_index,
    cards_to_mask,
    check_card,
    mask_to_cards,
    scoring_bits_to_cards,
    scoring_mask,
)


@pytest.mark.parametrize(
    "code,index",
    [("S2", 0), ("SA", 12), ("H2", 13), ("DJ", 35), ("C10", 47), ("CA", 51), ("SQ", 10)],
)
def test_documented_indices(code, index):
    assert card_index(code) == index
    assert card_code(index) == code


def test_index_formula_and_round_trip():
    suits, ranks = "SHDC", ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
    for s, suit in enumerate(suits):
        for r, rank in enumerate(ranks):
            assert card_index(suit + rank) == s * 13 + (r + 2 - 2)
    assert [card_index(card_code(i)) for i in range(52)] == list(range(52))


def test_parsing_is_lenient_in_case_and_ten():
    assert card_index("hq") == card_index("HQ")
    assert card_index("HT") == card_index("H10") == card_index("ht")
    assert card_index(" c10 ") == C10
    assert (SQ, DJ, C10) == (10, 35, 47)


@pytest.mark.parametrize("bad", ["", "X5", "H1", "H11", "S", "HQQ", "10H", None, 7])
def test_unknown_codes_raise(bad):
    with pytest.raises(ValueError, match="card code"):
        card_index(bad)


@pytest.mark.parametrize("bad", [-1, 52, 3.0, "5", True])
def test_check_card_rejects(bad):
    with pytest.raises(ValueError):
        check_card(bad)


def test_check_card_accepts_numpy_ints():
    assert check_card(np.int64(51)) == 51


def test_masks_round_trip():
    rng = np.random.default_rng(0)
    for _ in range(100):
        cards = sorted(rng.choice(52, size=rng.integers(0, 53), replace=False).tolist())
        assert mask_to_cards(cards_to_mask(cards)) == cards


def test_scoring_layout():
    assert len(SCORING_CARDS) == 16 and len(set(SCORING_CARDS)) == 16
    assert sum(1 for b in SCORING_BIT if b) == 16
    assert scoring_bits_to_cards(scoring_mask(range(52))) == list(SCORING_CARDS)
    assert scoring_mask([0, 1, 2]) == 0  # low spades score nothing
