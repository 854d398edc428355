"""Slow, literal reference of Mr. Greed's per-card scores (docs/rules.md section 9).

Plays every candidate and every greedy answer on cloned GongzhuState objects, values tricks
with the engine's own `returns()`, and keeps every number an exact Fraction. It makes the same
choices as scrofazero/agents/mr_greed.py (see its docstring) and shares no code with the kernel.
"""

from __future__ import annotations

from fractions import Fraction

from scrofazero.games.gongzhu.cards import BASE_VALUE, C10, card_index, scoring_bits_to_cards
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.games.gongzhu.scoring import pile_score_reference
from scrofazero.sampling.uniform import sample_owners

_PLAIN = {"A": 11, "K": 9, "Q": 8, "J": 7, "10": 6, "9": 5, "8": 4, "7": 3, "6": 2, "5": 1,
          "4": 1}
RELIEF = {card_index(s + r): v for s in "SDC" for r, v in _PLAIN.items()}
RELIEF.update({card_index(c): v for c, v in
               {"H10": 6, "H9": 5, "H8": 4, "H7": 3, "H6": 2, "H5": 1, "H4": 1}.items()})
SQ_BONUS = {card_index("SA"): 50, card_index("SK"): 30}
DJ_MALUS = {card_index("DA"): -30, card_index("DK"): -20, card_index("DQ"): -10}
C10_RATIO = {card_index("CA"): Fraction(4, 10), card_index("CK"): Fraction(3, 10),
             card_index("CQ"): Fraction(2, 10), card_index("CJ"): Fraction(1, 10)}


def still_to_come(piles) -> Fraction:
    """(-200 - sum of base values of every captured card) / 4."""
    captured = sum(BASE_VALUE[c] for p in piles for c in scoring_bits_to_cards(p))
    return Fraction(-200 - captured, 4)


def relief(state: GongzhuState, card: int, s: Fraction) -> Fraction:
    """Relief of `card` for the player to move in `state`, from what that player knows."""
    seat = state.current_player
    played = {c for _, c in state.history}
    held = {c for c in range(52) if state.hands[seat] >> c & 1}

    def unseen(c: int) -> bool:
        return c not in played and c not in held

    value = Fraction(RELIEF.get(card, 0))
    if card in SQ_BONUS and unseen(card_index("SQ")):
        value += SQ_BONUS[card]
    if card in DJ_MALUS and unseen(card_index("DJ")):
        value += DJ_MALUS[card]
    if card in C10_RATIO and unseen(C10):
        own_pile = pile_score_reference(scoring_bits_to_cards(state.piles[seat]), final=False)
        value -= C10_RATIO[card] * (s + own_pile)
    return value


def trick_value(start: GongzhuState, done: GongzhuState, seat: int, s: Fraction) -> Fraction:
    """Change of `seat`'s team difference from start (trick not begun or in progress) to done
    (that trick just collected), plus the C10 term for the winner's side."""
    value = Fraction(done.returns()[seat] - start.returns()[seat])
    last_four = [c for _, c in done.history[-4:]]
    if C10 in last_four:
        winner = done.leader
        value += s if winner % 2 == seat % 2 else -s
    return value


def finish_trick(state: GongzhuState, s: Fraction) -> GongzhuState:
    """Let every seat still to play in the current trick answer greedily; returns the state
    right after the trick is collected (a new object)."""
    state = state.clone()
    while state.trick:
        state.apply(greedy_answer(state, s))
    return state


def greedy_answer(state: GongzhuState, s: Fraction) -> int:
    """The greedy card of the player to move, seeing the whole (sampled) deal; ties go to the
    lowest card index."""
    seat = state.current_player
    best_card, best_value = None, None
    for card in state.legal_actions():  # ascending
        after = state.clone()
        after.apply(card)
        done = finish_trick(after, s) if after.trick else after
        value = trick_value(state, done, seat, s) + relief(state, card, s)
        if best_value is None or value > best_value:
            best_card, best_value = card, value
    return best_card


def lead_bonus(view: InfoView, card: int) -> Fraction:
    """30 x (average length of the suit in the other hands - own length), tricks 1-3."""
    if view.trick or len(view.history) >= 12:
        return Fraction(0)
    suit = card // 13
    unseen = sum(1 for c in range(13 * suit, 13 * suit + 13) if view.unseen >> c & 1)
    own = sum(1 for c in range(13 * suit, 13 * suit + 13) if view.hand >> c & 1)
    return 30 * (Fraction(unseen, 3) - own)


def reference_scores(view: InfoView, owners=None) -> tuple[list[int], list[Fraction]]:
    """(legal cards ascending, summed score per card) for the seat to move in `view`, over the
    sampled owners [D, 52] (ignored when last to play)."""
    legal = view.legal_actions()
    s = still_to_come(view.piles)
    samples = [None] if len(view.trick) == 3 else list(owners)
    totals = [Fraction(0)] * len(legal)
    for row in samples:
        if row is None:
            hands = _any_hands(view)
        else:
            hands = [sum(1 << c for c in range(52) if row[c] == seat) for seat in range(4)]
        state = GongzhuState.from_view(view, hands)
        for i, card in enumerate(legal):
            after = state.clone()
            after.apply(card)
            done = finish_trick(after, s) if after.trick else after
            totals[i] += trick_value(state, done, view.seat, s)
            totals[i] += relief(state, card, s) + lead_bonus(view, card)
    return legal, totals


def _any_hands(view: InfoView) -> list[int]:
    # Last to play: nobody plays after us, so any split of the unseen cards will do.
    hands = [0, 0, 0, 0]
    hands[view.seat] = view.hand
    unseen = [c for c in range(52) if view.unseen >> c & 1]
    for seat in range(4):
        if seat != view.seat:
            for c in unseen[:view.hand_sizes[seat]]:
                hands[seat] |= 1 << c
            unseen = unseen[view.hand_sizes[seat]:]
    return hands


class ReferenceGreed:
    """Mr. Greed on the reference scores; draws from the rng exactly as MrGreed.act does (the
    samples, then a tie-break only among several best cards), so both play the same cards."""

    name = "greed-reference"

    def __init__(self, num_samples: int = 20):
        self.num_samples = num_samples

    def act(self, view: InfoView, rng) -> int:
        legal = view.legal_actions()
        if len(legal) == 1:
            return legal[0]
        owners = None if len(view.trick) == 3 else sample_owners(view, self.num_samples, rng)
        _, scores = reference_scores(view, owners)
        best = max(scores)
        ties = [card for card, v in zip(legal, scores) if v == best]
        if len(ties) == 1:
            return ties[0]
        return ties[int(rng.integers(len(ties)))]
