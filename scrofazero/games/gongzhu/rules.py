"""Gongzhu single-game state: the reference rules engine and what one seat may see of it.

`GongzhuState` holds one game with full information (hands as 52-bit masks, piles as 16-bit
scoring masks) and follows docs/rules.md sections 2-4: follow suit if able, highest card of the led
suit wins, the winner collects the scoring cards and leads next. `InfoView` is one seat's
information (own hand, public history, shown voids): what agents receive. The batched engines
(batch.py, and benchmarks/lockstep_random.py) are checked move by move against this class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scrofazero.games.gongzhu.cards import (
    CHUNK_CARDS,
    FULL_MASK,
    NUM_CARDS,
    SCORING_BIT,
    SUIT_MASK,
    SUITS,
    card_code,
    check_card,
    format_cards,
    mask_to_cards,
)
from scrofazero.games.gongzhu.deals import check_deal, hands_of, random_deal
from scrofazero.games.gongzhu.scoring import pile_scores, team_returns


def _mask_cards(mask: int) -> list[int]:
    # Inlined mask_to_cards: this runs once per move in the hot loop.
    return [
        *CHUNK_CARDS[0][mask & 0x1FFF],
        *CHUNK_CARDS[1][(mask >> 13) & 0x1FFF],
        *CHUNK_CARDS[2][(mask >> 26) & 0x1FFF],
        *CHUNK_CARDS[3][mask >> 39],
    ]


def legal_bits(hand: int, trick: Sequence[int]) -> int:
    """Legal cards (52-bit mask) for a hand given the cards already in the trick."""
    if trick:
        follow = hand & SUIT_MASK[trick[0] // 13]
        if follow:
            return follow
    return hand


@dataclass(frozen=True)
class InfoView:
    """What `seat` knows: its own hand and everything public.

    hand: 52-bit mask of the seat's current cards. trick: cards of the current trick in play
    order, led by `leader`. history: every (seat, card) played so far, in order. piles: each
    seat's captured scoring cards (16-bit masks). voids: per seat, a 4-bit mask of the suits it
    has shown to be void in (it failed to follow them). hand_sizes: cards left per seat.
    """

    seat: int
    hand: int
    first_leader: int
    leader: int
    trick: tuple[int, ...]
    history: tuple[tuple[int, int], ...]
    piles: tuple[int, ...]  # these three: one per seat
    voids: tuple[int, ...]
    hand_sizes: tuple[int, ...]

    @property
    def current_player(self) -> int:
        return (self.leader + len(self.trick)) % 4

    @property
    def played(self) -> int:
        """52-bit mask of every card already played (finished tricks and the current one)."""
        mask = 0
        for _, card in self.history:
            mask |= 1 << card
        return mask

    @property
    def unseen(self) -> int:
        """52-bit mask of the cards held by the other seats (unknown to this seat)."""
        return FULL_MASK & ~self.hand & ~self.played

    def legal_actions(self) -> list[int]:
        """Legal cards for this seat, ascending (meaningful when it is this seat's turn)."""
        return _mask_cards(legal_bits(self.hand, self.trick))


def views_before_plays(view: InfoView) -> list[InfoView]:
    """The information each play of `view.history` was made from, rebuilt from public facts.

    Replays first_leader and history (trick winners, piles, shown voids, hand sizes); the
    playing seat's hand is not public, so it is left 0 for the caller to fill in
    (dataclasses.replace(v, hand=...)). Raises ValueError when a play is out of turn.

    Args:
        view: any seat's information; only its public fields are read.

    Returns:
        [len(view.history)] the view of the seat making play t just before it: equal to
        GongzhuState.view(seat) at that moment except hand = 0.
    """
    leader = view.first_leader
    trick: list[int] = []
    best = 0  # position in `trick` of the card currently winning it
    piles, voids, sizes = [0, 0, 0, 0], [0, 0, 0, 0], [13, 13, 13, 13]
    views = []
    for t, (seat, card) in enumerate(view.history):
        if seat != (leader + len(trick)) & 3:
            raise ValueError(f"play {t} by seat {seat} is out of turn")
        views.append(InfoView(
            seat=seat, hand=0, first_leader=view.first_leader, leader=leader, trick=tuple(trick),
            history=view.history[:t], piles=tuple(piles), voids=tuple(voids),
            hand_sizes=tuple(sizes),
        ))
        if trick:
            led = trick[0] // 13
            if card // 13 != led:
                voids[seat] |= 1 << led  # a legal off-suit play shows the void
            elif card > trick[best]:
                best = len(trick)
        trick.append(card)
        sizes[seat] -= 1
        if len(trick) == 4:
            leader = (leader + best) & 3
            for c in trick:
                piles[leader] |= SCORING_BIT[c]
            trick, best = [], 0
    return views


class GongzhuState:
    """One game of Gongzhu with full information. Mutable: `apply` advances it in place."""

    __slots__ = ("hands", "first_leader", "leader", "trick", "_best", "piles", "history", "voids")

    def __init__(self, deal=None, leader: int = 0, seed: int | None = None):
        """deal: 52 card indices (seat i gets positions 13i..13i+12); random from `seed` if None."""
        if deal is None:
            deal = random_deal(seed)
        else:
            deal = check_deal(deal)
        self._start(hands_of(deal), leader)

    @classmethod
    def from_hands(cls, hands: Sequence[int], leader: int = 0) -> GongzhuState:
        """A new game from four disjoint 13-card hands given as 52-bit masks."""
        union = 0
        for seat, hand in enumerate(hands):
            if bin(hand).count("1") != 13:
                raise ValueError(f"seat {seat} must hold 13 cards, holds {bin(hand).count('1')}")
            if union & hand:
                raise ValueError(f"hands overlap on {format_cards(mask_to_cards(union & hand))}")
            union |= hand
        if len(hands) != 4 or union != FULL_MASK:
            raise ValueError("four hands of 13 cards covering the deck are required")
        state = cls.__new__(cls)
        state._start(list(hands), leader)
        return state

    def _start(self, hands: list[int], leader: int) -> None:
        # A membership test alone would take 1.0 or True (both == 1) and then store a float or
        # bool as a seat; numpy integers (from seeded arrays of leaders) are fine.
        if (isinstance(leader, bool) or not isinstance(leader, (int, np.integer))
                or not 0 <= leader < 4):
            raise ValueError(f"leader must be an integer seat 0..3, got {leader!r}")
        leader = int(leader)
        self.hands = hands
        self.first_leader = leader
        self.leader = leader
        self.trick: list[int] = []
        self._best = 0  # position in `trick` of the card currently winning it
        self.piles = [0, 0, 0, 0]
        self.history: list[tuple[int, int]] = []
        self.voids = [0, 0, 0, 0]

    # --- queries -------------------------------------------------------------------------
    @property
    def current_player(self) -> int:
        return (self.leader + len(self.trick)) & 3

    @property
    def num_played(self) -> int:
        return len(self.history)

    def is_terminal(self) -> bool:
        return len(self.history) == NUM_CARDS

    def legal_bits(self) -> int:
        """Legal cards of the player to move as a 52-bit mask (0 at the end of the game)."""
        return legal_bits(self.hands[(self.leader + len(self.trick)) & 3], self.trick)

    def legal_actions(self) -> list[int]:
        """Legal cards of the player to move, ascending."""
        return _mask_cards(self.legal_bits())

    def legal_mask(self) -> np.ndarray:
        """Legal cards of the player to move as a bool array [52]."""
        bits = self.legal_bits()
        return ((bits >> np.arange(NUM_CARDS, dtype=np.uint64)) & 1).astype(bool)

    def pile_scores(self) -> list[int]:
        """Each seat's pile score (final rule at the end, the mid-game rule before)."""
        return pile_scores(self.piles)

    def returns(self) -> list[int]:
        """Per seat: own team's score - other team's score. Final at the end of the game;
        before it, the documented mid-game valuation of the piles captured so far."""
        return team_returns(pile_scores(self.piles))

    def view(self, seat: int) -> InfoView:
        """What `seat` knows of this state."""
        return InfoView(
            seat=seat,
            hand=self.hands[seat],
            first_leader=self.first_leader,
            leader=self.leader,
            trick=tuple(self.trick),
            history=tuple(self.history),
            piles=tuple(self.piles),
            voids=tuple(self.voids),
            hand_sizes=tuple(bin(h).count("1") for h in self.hands),
        )

    # --- moves ---------------------------------------------------------------------------
    def apply(self, card: int) -> None:
        """Play `card` for the player to move. Raises ValueError, leaving the state unchanged,
        for an unknown card, a card not in hand, a revoke, or a finished game."""
        if card.__class__ is not int or not 0 <= card < NUM_CARDS:
            card = check_card(card)
        trick = self.trick
        seat = (self.leader + len(trick)) & 3
        hand = self.hands[seat]
        bit = 1 << card
        if not hand & bit:
            if len(self.history) == NUM_CARDS:
                raise ValueError("the game is over: no card can be played")
            raise ValueError(f"{card_code(card)} is not in seat {seat}'s hand")
        if trick:
            led = trick[0] // 13
            if card // 13 != led:
                if hand & SUIT_MASK[led]:
                    raise ValueError(
                        f"seat {seat} must follow {SUITS[led]}: {card_code(card)} is illegal"
                    )
                self.voids[seat] |= 1 << led
            elif card > trick[self._best]:
                self._best = len(trick)
        self.hands[seat] = hand ^ bit
        trick.append(card)
        self.history.append((seat, card))
        if len(trick) == 4:
            winner = (self.leader + self._best) & 3
            self.piles[winner] |= (
                SCORING_BIT[trick[0]] | SCORING_BIT[trick[1]]
                | SCORING_BIT[trick[2]] | SCORING_BIT[trick[3]]
            )
            self.leader = winner
            self.trick = []
            self._best = 0

    apply_action = apply

    def clone(self) -> GongzhuState:
        other = GongzhuState.__new__(GongzhuState)
        other.hands = self.hands.copy()
        other.first_leader = self.first_leader
        other.leader = self.leader
        other.trick = self.trick.copy()
        other._best = self._best
        other.piles = self.piles.copy()
        other.history = self.history.copy()
        other.voids = self.voids.copy()
        return other

    @classmethod
    def from_view(cls, view: InfoView, hands: Sequence[int]) -> GongzhuState:
        """A full-information state matching `view` whose current hands are `hands` (52-bit
        masks; the viewer's own must equal view.hand). Used to search sampled deals."""
        if hands[view.seat] != view.hand:
            raise ValueError(f"hands[{view.seat}] differs from the viewing seat's own hand")
        union = 0
        for seat, hand in enumerate(hands):
            if bin(hand).count("1") != view.hand_sizes[seat]:
                raise ValueError(f"seat {seat} must hold {view.hand_sizes[seat]} cards")
            if union & hand:
                raise ValueError("sampled hands overlap")
            union |= hand
        if union & view.played or union | view.played != FULL_MASK:
            raise ValueError("sampled hands do not complete the deck with the played cards")
        state = cls.__new__(cls)
        state.hands = list(hands)
        state.first_leader = view.first_leader
        state.leader = view.leader
        state.trick = list(view.trick)
        best = 0
        for i, card in enumerate(state.trick):
            if card // 13 == state.trick[0] // 13 and card > state.trick[best]:
                best = i
        state._best = best
        state.piles = list(view.piles)
        state.history = list(view.history)
        state.voids = list(view.voids)
        return state

    def __repr__(self) -> str:
        lines = [f"GongzhuState(first leader {self.first_leader}, {len(self.history)} played)"]
        for seat in range(4):
            lines.append(f"  seat {seat}: {format_cards(mask_to_cards(self.hands[seat]))}")
        lines.append(f"  trick (led by {self.leader}): {format_cards(self.trick)}")
        return "\n".join(lines)
