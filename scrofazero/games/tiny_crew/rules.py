"""Tiny Crew: the rules as plain Python (docs/rules.md section 16), the slow obvious reference.

3 players (seats 0, 1, 2), 12 cards: colours R, B, G with values 1-3 (ids 3 * colour + value - 1,
0-8) and submarines S1-S3 (ids 9-11, trumps, a suit of their own). All cards are dealt, 4 each.
Two public tasks: T1 "win the red 3" (the trick holding R3 must be won by T1's owner) and T2
"win exactly one blue card" (fails once its owner has won two blues, or when every blue is gone
and it won none). The game ends as soon as every task has succeeded or one has failed; every
seat gets 1 if all succeeded, else 0. Nothing here knows about agents, torch or OpenSpiel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

NUM_SEATS = 3
NUM_CARDS = 12
HAND_SIZE = 4
COLOURS = "RBG"
SUB = 3  # suit index of the submarines
R3 = 2
BLUES = (3, 4, 5)
LEADERS = ("seat0", "captain")
S3 = 11

PENDING, SUCCESS, FAILED = 0, 1, 2
STATUS_NAMES = ("pending", "success", "failed")


def card_name(card: int) -> str:
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"card id must be 0..11, got {card}")
    return f"S{card - 8}" if card >= 9 else f"{COLOURS[card // 3]}{card % 3 + 1}"


def card_id(name: str) -> int:
    for card in range(NUM_CARDS):
        if card_name(card) == name:
            return card
    raise ValueError(f"unknown card {name!r}; cards are R1..G3 and S1..S3")


def suit_of(card: int) -> int:
    """0 R, 1 B, 2 G, 3 submarine."""
    return card // 3


def trick_winner(cards: Sequence[int], leader: int) -> int:
    """Seat winning a complete trick `cards` (in play order) led by `leader`: the highest
    submarine if any was played, else the highest card of the led colour."""
    subs = [i for i, c in enumerate(cards) if suit_of(c) == SUB]
    if subs:
        best = max(subs, key=lambda i: cards[i])
    else:
        led = suit_of(cards[0])
        best = max((i for i, c in enumerate(cards) if suit_of(c) == led), key=lambda i: cards[i])
    return (leader + best) % NUM_SEATS


@dataclass(frozen=True)
class Params:
    """leader: "seat0" or "captain" (the holder of S3 leads). t1_seat / t2_seat: owners of the
    tasks (the same seat may own both)."""

    leader: str = "seat0"
    t1_seat: int = 0
    t2_seat: int = 1

    def __post_init__(self):
        if self.leader not in LEADERS:
            raise ValueError(f"leader must be one of {LEADERS}, got {self.leader!r}")
        for name in ("t1_seat", "t2_seat"):
            seat = getattr(self, name)
            if not isinstance(seat, int) or not 0 <= seat < NUM_SEATS:
                raise ValueError(f"{name} must be a seat 0..2, got {seat!r}")


def check_deal(owners: Sequence[int]) -> tuple[int, ...]:
    """owners[card] = seat for the 12 cards, 4 per seat; returns it as a tuple."""
    owners = tuple(int(o) for o in owners)
    if len(owners) != NUM_CARDS or any(not 0 <= o < NUM_SEATS for o in owners):
        raise ValueError(f"a deal gives each of the 12 cards a seat 0..2, got {owners}")
    counts = [owners.count(s) for s in range(NUM_SEATS)]
    if counts != [HAND_SIZE] * NUM_SEATS:
        raise ValueError(f"each seat must get 4 cards, got {counts}")
    return owners


class TinyCrewState:
    """One game after the deal, mutable: `apply` plays a card in place."""

    def __init__(self, owners: Sequence[int], params: Params = Params()):
        self.params = params
        self.owners = check_deal(owners)
        self.hands = [sum(1 << c for c in range(NUM_CARDS) if self.owners[c] == s)
                      for s in range(NUM_SEATS)]
        self.initial_hands = tuple(self.hands)
        self.first_leader = self.owners[S3] if params.leader == "captain" else 0
        self.leader = self.first_leader
        self.trick: list[int] = []
        self.history: list[int] = []
        self.won_blues = [0] * NUM_SEATS
        self.status = [PENDING, PENDING]  # T1, T2

    @property
    def current_player(self) -> int:
        return (self.leader + len(self.trick)) % NUM_SEATS

    def is_terminal(self) -> bool:
        return FAILED in self.status or self.status == [SUCCESS, SUCCESS]

    def returns(self) -> list[float]:
        won = float(self.status == [SUCCESS, SUCCESS])
        return [won] * NUM_SEATS

    def legal_actions(self) -> list[int]:
        if self.is_terminal():
            return []
        hand = self.hands[self.current_player]
        cards = [c for c in range(NUM_CARDS) if hand >> c & 1]
        if self.trick:
            follow = [c for c in cards if suit_of(c) == suit_of(self.trick[0])]
            if follow:
                return follow
        return cards

    def apply(self, card: int) -> None:
        """Play `card` for the current player; ValueError (state unchanged) if illegal."""
        if self.is_terminal():
            raise ValueError("the game is over")
        legal = self.legal_actions()
        if card not in legal:
            names = ", ".join(card_name(c) for c in legal)
            raise ValueError(f"seat {self.current_player} cannot play "
                             f"{card_name(card) if 0 <= card < NUM_CARDS else card}; "
                             f"legal: {names}")
        self.hands[self.current_player] &= ~(1 << card)
        self.trick.append(card)
        self.history.append(card)
        if len(self.trick) == NUM_SEATS:
            self._finish_trick()

    def _finish_trick(self) -> None:
        winner = trick_winner(self.trick, self.leader)
        t1, t2 = self.params.t1_seat, self.params.t2_seat
        if R3 in self.trick:
            self.status[0] = SUCCESS if winner == t1 else FAILED
        blues = sum(c in BLUES for c in self.trick)
        self.won_blues[winner] += blues
        if self.won_blues[t2] >= 2:
            self.status[1] = FAILED
        elif all(b in self.history for b in BLUES):
            self.status[1] = SUCCESS if self.won_blues[t2] == 1 else FAILED
        self.leader = winner
        self.trick = []

    def clone(self) -> TinyCrewState:
        other = TinyCrewState.__new__(TinyCrewState)
        other.params, other.owners = self.params, self.owners
        other.hands = list(self.hands)
        other.initial_hands = self.initial_hands
        other.first_leader, other.leader = self.first_leader, self.leader
        other.trick, other.history = list(self.trick), list(self.history)
        other.won_blues, other.status = list(self.won_blues), list(self.status)
        return other

    def __str__(self) -> str:
        hands = " | ".join(
            " ".join(card_name(c) for c in range(NUM_CARDS) if h >> c & 1) for h in self.hands)
        plays = " ".join(card_name(c) for c in self.history)
        return (f"hands {hands}; leader {self.first_leader}; plays {plays or '-'}; "
                f"T1 {STATUS_NAMES[self.status[0]]}, T2 {STATUS_NAMES[self.status[1]]}")


def all_deals():
    """Every deal once, as a [34650, 12] int8 array of owners (lexicographic order)."""

    out = []

    def extend(prefix: list[int], left: list[int]) -> None:
        if len(prefix) == NUM_CARDS:
            out.append(list(prefix))
            return
        for seat in range(NUM_SEATS):
            if left[seat]:
                left[seat] -= 1
                prefix.append(seat)
                extend(prefix, left)
                prefix.pop()
                left[seat] += 1

    extend([], [HAND_SIZE] * NUM_SEATS)
    return np.array(out, dtype=np.int8)
