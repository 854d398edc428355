"""A reviewer that answers at once, for the browser tests of the review and its practice: the
server's own reviews (serve/gongzhu/reviews.py running eval/review.py review_hand: the moves,
their tricks and hands, the verdicts and their second judgement, the summary and its sentence)
with a stand-in for the full player's search, whose values are made up and plain.

`quick_reviews()` makes every review of the process use it until the block ends.
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pytest

from scrofazero.eval import review

DEALS = 16


class QuickReviewer:
    """The full player's `search_worlds` as the review asks it: q [D, L], the value of each
    legal card on D deals. Here the k-th legal card (in card index order) is worth 4 k points,
    give or take a point: the last legal card is the AI's, the first of five or more a mistake
    (16 points and more, beyond the noise), the first of two to four about as good."""

    def search_worlds(self, view, rng: np.random.Generator):
        legal = len(view.legal_actions())
        q = 4.0 * np.arange(legal) + rng.normal(0.0, 1.0, size=(DEALS, legal))
        return None, np.full(DEALS, 1.0 / DEALS), 0, q


@contextmanager
def quick_reviews():
    """The review's players (eval/review.py make_reviewer) are QuickReviewers in the block."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(review, "make_reviewer", lambda model, settings: QuickReviewer())
        yield
