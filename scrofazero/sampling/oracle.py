"""The ceiling of inference: deals that use what the player cannot know (evaluation only).

`oracle` gives the searching seat the true deal; `oracle_important` tells it only who holds the
deciding cards (SQ, DJ, C10 and the hearts A, K, Q, J) and deals the rest uniformly given those
pins. They measure how much of a player's strength is lost to guessing the hidden hands
(benchmarks/inference.py). Only the evaluation arena hands a player the true deal; a player with
these settings at a table, behind the protocol or in PettingZoo is refused
(agents/base.py check_real_game) or fails at its first move with a message saying why.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from scrofazero.games.gongzhu.cards import C10, DJ, NUM_CARDS, SQ, card_index
from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.sampling.uniform import assignment_owners, sample_assignment, view_constraints

DECIDING = (SQ, DJ, C10) + tuple(card_index(c) for c in ("HA", "HK", "HQ", "HJ"))


class OracleError(ValueError):
    """An oracle setting was used where the true deal is not given (a real game)."""


def true_owners(view: InfoView, hands: Iterable[int] | None) -> np.ndarray:
    """[52] int8 owner of every card in the true current `hands` (4 masks), -1 for played
    cards; OracleError when no deal was given or it does not match the view."""
    if hands is None:
        raise OracleError("sampling method oracle / oracle_important sees the true deal, which "
                          "only the evaluation arena gives: it is for evaluation only, never "
                          "for a real game")
    hands = [int(h) for h in hands]
    if hands[view.seat] != view.hand:
        raise OracleError("the deal given to the oracle does not match the player's view")
    owners = np.full(NUM_CARDS, -1, dtype=np.int8)
    for seat, hand in enumerate(hands):
        for card in range(NUM_CARDS):
            if hand >> card & 1:
                owners[card] = seat
    return owners


def oracle_owners(view: InfoView, hands: Iterable[int] | None, num_deals: int,
                  rng: np.random.Generator, important_only: bool) -> np.ndarray:
    """Deals that use the true deal; OracleError when it is not given or does not match.

    Args:
        view: the deciding seat's information.
        hands: the true current hands, 4 masks (None in a real game).
        num_deals: deals drawn when important_only.
        rng: the random source of the draws.
        important_only: False: the true deal once; True: `num_deals` deals with the unseen
            deciding cards pinned to their true holders and the rest exactly uniform.

    Returns:
        [D, 52] int8 owners (-1 for played cards).
    """
    truth = true_owners(view, hands)
    if not important_only:
        return truth[None, :]
    cards, sizes, voids, others = view_constraints(view)
    fixed = np.full(len(cards), -1, dtype=np.int64)
    for pos, card in enumerate(cards):
        if card in DECIDING:
            fixed[pos] = others.index(int(truth[card]))
    assign = sample_assignment(cards, sizes, voids, num_deals, rng, fixed=fixed)
    return assignment_owners(view, cards, others, assign)
