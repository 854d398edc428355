"""Mr. If: the hand-written rule player of docs/rules.md section 8.

Works on 13-bit suit chunks of the seat's own hand (bit r = rank r + 2), sees only the InfoView
and draws randomness (one leading case) from the rng passed in. Choices the text leaves open are
marked "Choice:" below; "highest"/"lowest" always mean by rank.
"""

from __future__ import annotations

import numpy as np

from scrofazero.games.gongzhu.cards import CHUNK_CARDS, card_index, cards_to_mask
from scrofazero.games.gongzhu.rules import InfoView

SPADES, HEARTS, DIAMONDS, CLUBS = range(4)
_R10, _RJ, _RQ, _RK, _RA = 8, 9, 10, 11, 12  # rank positions inside a 13-bit suit chunk


def _bits(*ranks: int) -> int:
    out = 0
    for r in ranks:
        out |= 1 << r
    return out


# Leading: a suit is safe when the hand holds none of these ranks in it (S, H, D, C).
_LEAD_UNSAFE = (
    _bits(_RQ, _RK, _RA),
    _bits(_RQ, _RK, _RA),
    _bits(_RJ),
    _bits(_R10, _RJ, _RQ, _RK, _RA),
)
# Leading with no safe suit: a random card outside this set (any card if all are inside it).
_NO_RANDOM_LEAD = cards_to_mask(
    card_index(c) for c in "SQ SK SA HA HK C10 CJ CQ CK CA DJ".split()
)
# Void in the led suit: discard the first of these that is held.
_DISCARD_ORDER = tuple(
    card_index(c) for c in "SQ HA SA SK HK C10 CA HQ HJ CK CQ CJ H10 H9 H8 H7 H6 H5".split()
)


def _chunk(hand: int, suit: int) -> int:
    return (hand >> (13 * suit)) & 0x1FFF


def _top(chunk: int) -> int:
    return chunk.bit_length() - 1


def _bottom(chunk: int) -> int:
    return (chunk & -chunk).bit_length() - 1


def _lead(hand: int, rng: np.random.Generator) -> int:
    # Choice: suits of equal length are tried lowest top card first (the cheaper lead is less
    # likely to win a trick someone can dump SQ or hearts on), then in the order S, H, D, C.
    held = sorted(
        (chunk.bit_count(), _top(chunk), suit)
        for suit in range(4)
        if (chunk := _chunk(hand, suit))
    )
    for _, top, suit in held:
        if not _chunk(hand, suit) & _LEAD_UNSAFE[suit]:
            return 13 * suit + top
    pool = hand & ~_NO_RANDOM_LEAD or hand
    cards = [c for s in range(4) for c in CHUNK_CARDS[s][_chunk(pool, s)]]
    return cards[int(rng.integers(len(cards)))]


def _discard(hand: int) -> int:
    for card in _DISCARD_ORDER:
        if hand >> card & 1:
            return card
    # Choice: among shortest suits of equal length, shed the one with the highest top card.
    best = min(
        (chunk.bit_count(), -_top(chunk), suit)
        for suit in range(4)
        if (chunk := _chunk(hand, suit))
    )
    return 13 * best[2] - best[1]


def _follow_guarded(own: int, table: int, last: int, danger: int, guards: int) -> int:
    """Spades (danger SQ, guards SK/SA) and clubs (danger C10, guards CJ..CA); rank returned.

    own holds at least two cards of the suit; table is the suit's cards in the trick.
    """
    danger_bit = 1 << danger
    if own & danger_bit and table & guards:
        return danger  # a higher card is already on the table: the danger card goes to it
    if last and not table & danger_bit:
        return _top(own & ~danger_bit)  # nothing dangerous can follow: win or shed high
    # Choice: "the current highest of the honours on the table" is the highest of danger and
    # guards in the trick; with none there, it is the danger card itself (stay below SQ/C10,
    # so the card cannot be the one a later SQ/C10 is dropped under). This also holds after
    # the danger card has gone in an earlier trick: the rule set does not track it.
    honours = table & (guards | danger_bit)
    limit = _top(honours) if honours else danger
    below = own & ((1 << limit) - 1)
    if below:
        return _top(below)
    # Choice: the fallback "lowest card" skips the danger card itself when another is held
    # (only SQ/SK/SA or C10..CA left; giving up SQ/C10 here would often capture it ourselves).
    return _bottom(own & ~danger_bit or own)


def _follow_diamonds(own: int, table: int, last: int) -> int:
    dj = 1 << _RJ
    if last and own & dj and not table & _bits(_RQ, _RK, _RA):
        return _RJ  # DJ is the highest diamond in the trick: it wins the sheep for us
    return _top(own & ~dj or own)


def _follow_hearts(own: int, table: int) -> int:
    below = own & ((1 << _top(table)) - 1)  # the led heart makes `table` non-empty
    return _top(below) if below else _bottom(own)


class MrIf:
    """Rule player; stateless, so one instance may serve every seat."""

    name = "if"

    def act(self, view: InfoView, rng: np.random.Generator) -> int:
        hand = view.hand
        trick = view.trick
        if not trick:
            return _lead(hand, rng)
        led = trick[0] // 13
        own = _chunk(hand, led)
        if not own:
            return _discard(hand)
        if not own & (own - 1):
            return 13 * led + _top(own)  # a single card of the led suit
        table = 0
        for card in trick:
            if card // 13 == led:
                table |= 1 << (card - 13 * led)
        last = len(trick) == 3
        if led == SPADES:
            rank = _follow_guarded(own, table, last, _RQ, _bits(_RK, _RA))
        elif led == CLUBS:
            rank = _follow_guarded(own, table, last, _R10, _bits(_RJ, _RQ, _RK, _RA))
        elif led == DIAMONDS:
            rank = _follow_diamonds(own, table, last)
        else:
            rank = _follow_hearts(own, table)
        return 13 * led + rank
