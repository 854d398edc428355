"""Scoring: every worked case of docs/rules.md section 5 plus table/reference agreement.

Invariants: the documented pile -> score table (final rule); the mid-game rule differs only for
a lone C10 while scoring cards remain uncaptured; the 65,536-entry fast tables equal the literal
reference on every pile; team returns are zero-sum team differences; the batched helpers equal
the scalar ones.
"""

import numpy as np
import pytest

from scrofazero.games.gongzhu.cards import (
    ALL_SCORING_BITS,
    HEART_CARDS,
    SCORING_CARDS,
    card_index,
    scoring_mask,
)
from scrofazero.games.gongzhu.scoring import (
    FINAL_SCORE,
    MAX_RETURN,
    MID_SCORE,
    batch_pile_scores,
    batch_team_returns,
    pile_score_reference,
    pile_scores,
    team_returns,
)

HEARTS = [f"H{r}" for r in ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]]

EDGE_CASES = [  # docs/rules.md section 5, in its order
    ([], 0),
    (["C10"], 50),
    (["C10", "H2"], 0),
    (["C10", "SQ"], -200),
    (["C10", "DJ"], 200),
    (["SQ", "DJ", "C10"], 0),
    (["SQ", "HA", "C10"], -300),
    (HEARTS, 200),
    (HEARTS + ["C10"], 400),
    (HEARTS + ["SQ"], 100),
    (HEARTS + ["SQ", "DJ"], 200),
    (HEARTS + ["SQ", "DJ", "C10"], 400),
    (HEARTS[1:], -200),
]


@pytest.mark.parametrize("codes,score", EDGE_CASES)
def test_documented_edge_cases(codes, score):
    cards = [card_index(c) for c in codes]
    assert pile_score_reference(cards) == score
    assert FINAL_SCORE[scoring_mask(cards)] == score


def test_base_values():
    values = {"HA": -50, "HK": -40, "HQ": -30, "HJ": -20, "H10": -10, "H5": -10, "H4": 0,
              "H2": 0, "SQ": -100, "DJ": 100}
    for code, value in values.items():
        assert pile_score_reference([card_index(code)]) == value
    assert sum(pile_score_reference([h]) for h in HEART_CARDS) == -200


def test_non_scoring_cards_ignored():
    assert pile_score_reference([card_index("SA"), card_index("CK"), card_index("D2")]) == 0
    assert pile_score_reference([card_index("SA"), card_index("C10")]) == 50


def test_tables_equal_reference_on_every_pile():
    for bits in range(1 << 16):
        cards = [c for b, c in enumerate(SCORING_CARDS) if bits >> b & 1]
        assert FINAL_SCORE[bits] == pile_score_reference(cards, final=True)
        assert MID_SCORE[bits] == pile_score_reference(cards, final=False)


def test_mid_game_rule_lone_c10():
    c10 = scoring_mask([card_index("C10")])
    ha = scoring_mask([card_index("HA")])
    rest = ALL_SCORING_BITS & ~c10 & ~ha
    # Not everything captured yet: lone C10 counts 0, C10 with others doubles.
    assert pile_scores([c10, ha, 0, 0]) == [0, -50, 0, 0]
    assert pile_scores([c10 | ha, 0, 0, 0]) == [-100, 0, 0, 0]
    # Everything captured: the final rule, lone C10 = +50.
    assert pile_scores([c10, ha, rest, 0])[0] == 50


def test_team_returns_zero_sum():
    assert team_returns([10, -20, 30, 5]) == [55, -55, 55, -55]
    rng = np.random.default_rng(1)
    scores = rng.integers(-400, 400, size=(50, 4))
    batch = batch_team_returns(scores)
    for row, ret in zip(scores, batch):
        assert list(ret) == team_returns(list(row))
        assert ret.sum() == 0


def test_batch_pile_scores_matches_scalar():
    rng = np.random.default_rng(2)
    for _ in range(200):
        owner = rng.integers(-1, 4, size=16)  # -1: not captured yet
        piles = [sum(1 << b for b in range(16) if owner[b] == s) for s in range(4)]
        assert list(batch_pile_scores(np.array([piles]))[0]) == pile_scores(piles)


def test_max_return_is_the_exact_bound():
    # The extreme split (hearts + DJ + C10 to one seat, SQ to an opponent) reaches it, and no
    # random split of the scoring cards among the four piles exceeds it.
    best = 0
    rng = np.random.default_rng(0)
    owners = [rng.integers(0, 4, size=16) for _ in range(20000)]
    owners += [np.zeros(16, int), np.array([0] * 13 + [1, 0, 0])]
    for owner in owners:
        piles = [sum(1 << b for b in range(16) if owner[b] == s) for s in range(4)]
        best = max(best, abs(team_returns(pile_scores(piles))[0]))
    assert best == MAX_RETURN
