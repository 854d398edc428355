"""Gongzhu scoring: pile scores (final and mid-game rule) and team-difference returns.

`pile_score_reference` states the rules of docs/rules.md section 3 literally on a list of cards;
the fast paths are 65,536-entry tables indexed by a pile's 16-bit scoring mask (see cards.py),
built with array operations and checked against the reference in
tests/games/gongzhu/test_scoring.py.

Mid-game rule (docs/rules.md section 4): while not all 16 scoring cards are captured, a pile
whose only scoring card is C10 counts 0 (not +50); C10 with other cards doubles as usual.
Once all 16 are captured (always true at the end) the final rule applies.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from scrofazero.games.gongzhu.cards import (
    ALL_HEARTS_BITS,
    ALL_SCORING_BITS,
    BASE_VALUE,
    C10,
    HEART_CARDS,
    SCORING_BIT,
    SCORING_BIT_C10,
    SCORING_CARDS,
)

ALL_HEARTS_BONUS = 400  # the 13 hearts count +200 instead of -200
LONE_C10_FINAL = 50
# The largest possible |team difference|: one team takes all hearts + DJ + C10 (+600), the other
# SQ (-100). Checked over every split of the scoring cards in tests/games/gongzhu/test_scoring.py.
MAX_RETURN = 700


def pile_score_reference(cards: Iterable[int], final: bool = True) -> int:
    """Score of a pile given as card indices, following the rule text step by step.

    Non-scoring cards are ignored. `final=False` applies the mid-game rule for a lone C10.
    """
    scoring = {c for c in cards if SCORING_BIT[c]}
    total = sum(BASE_VALUE[c] for c in scoring if c != C10)
    if all(h in scoring for h in HEART_CARDS):
        total += ALL_HEARTS_BONUS
    if C10 in scoring:
        if len(scoring) > 1:
            return 2 * total
        return LONE_C10_FINAL if final else 0
    return total


def _build_tables() -> tuple[np.ndarray, np.ndarray]:
    bits = np.arange(1 << 16, dtype=np.int64)  # [65536] every possible pile
    values = np.array([BASE_VALUE[c] for c in SCORING_CARDS], dtype=np.int64)  # [16]
    present = (bits[:, None] >> np.arange(16)) & 1  # [65536, 16]
    total = present[:, :15] @ values[:15]  # C10 (bit 15) has no base value
    total += np.where((bits & ALL_HEARTS_BITS) == ALL_HEARTS_BITS, ALL_HEARTS_BONUS, 0)
    has_c10 = (bits & SCORING_BIT_C10) != 0
    has_other = (bits & (SCORING_BIT_C10 - 1)) != 0
    final = np.where(has_c10, np.where(has_other, 2 * total, LONE_C10_FINAL), total)
    mid = np.where(has_c10 & ~has_other, 0, final)
    return final.astype(np.int32), mid.astype(np.int32)


FINAL_SCORE, MID_SCORE = _build_tables()  # [65536] int32 each
# Plain lists index faster than numpy arrays from single-game Python code.
FINAL_SCORE_LIST: list[int] = FINAL_SCORE.tolist()
MID_SCORE_LIST: list[int] = MID_SCORE.tolist()


def pile_scores(piles: Sequence[int]) -> list[int]:
    """Scores of the 4 piles (16-bit masks): final rule once all scoring cards are captured,
    else the mid-game rule."""
    captured = piles[0] | piles[1] | piles[2] | piles[3]
    table = FINAL_SCORE_LIST if captured == ALL_SCORING_BITS else MID_SCORE_LIST
    return [table[p] for p in piles]


def team_returns(scores: Sequence[int]) -> list[int]:
    """Per-seat outcome = own team score - other team score (teams 0+2 and 1+3)."""
    diff = scores[0] + scores[2] - scores[1] - scores[3]
    return [diff, -diff, diff, -diff]


def batch_pile_scores(piles: np.ndarray) -> np.ndarray:
    """Vectorised `pile_scores`: piles [N, 4] 16-bit masks -> scores [N, 4] int32."""
    piles = piles.astype(np.int64)
    captured = np.bitwise_or.reduce(piles, axis=1)  # [N]
    final = FINAL_SCORE[piles]
    mid = MID_SCORE[piles]
    return np.where((captured == ALL_SCORING_BITS)[:, None], final, mid)


def batch_team_returns(scores: np.ndarray) -> np.ndarray:
    """Vectorised `team_returns`: scores [N, 4] -> returns [N, 4]."""
    diff = scores[:, 0] + scores[:, 2] - scores[:, 1] - scores[:, 3]  # [N]
    return np.stack([diff, -diff, diff, -diff], axis=1)
