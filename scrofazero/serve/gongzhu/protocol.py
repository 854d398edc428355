"""The Gongzhu table protocol: JSON messages over a WebSocket (docs/protocol.md), checked here.

`parse_client_message` turns one received text frame into its message model (messages.py) or
raises ProtocolError (common/protocol.py) with the error code and the one-line message sent back
to that client; `parse_claim` checks the body of a claim.
`SeatTracker` rebuilds a seat's information view from the messages it receives; our own bots
play through it, so they see exactly what an outside bot sees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pydantic import ValidationError

from scrofazero.games.gongzhu.cards import (
    SCORING_BIT,
    card_code,
    card_index,
    cards_to_mask,
    scoring_bits_to_cards,
)
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.games.gongzhu.scoring import pile_scores
from scrofazero.serve.common.messages import ClientMessage
from scrofazero.serve.common.protocol import ProtocolError, first_problem, load_json, parse_frame
from scrofazero.serve.gongzhu.messages import CLIENT_MESSAGES, Claim, PublicState


def parse_client_message(text: str | bytes) -> ClientMessage:
    """One client frame of /ws -> its checked message. Raises ProtocolError (nothing is
    changed)."""
    return parse_frame(text, CLIENT_MESSAGES)


def parse_claim(body: bytes) -> Claim:
    """The body of POST /api/tables/{table}/claim -> its checked Claim. Raises ProtocolError."""
    asked = load_json(body)
    if not isinstance(asked, dict):
        raise ProtocolError("bad_message", 'a claim is a JSON object {"seat": 0..3, "name": ...}')
    try:
        return Claim.model_validate(asked)
    except ValidationError as err:
        raise ProtocolError("bad_message", first_problem("claim", Claim, err)) from None


def public_state(state: GongzhuState) -> PublicState:
    """What every seat sees of a state: trick with seats, captured scoring cards, scores."""
    start = len(state.history) - len(state.trick)
    scores = pile_scores(state.piles)
    return PublicState(leader=state.leader,
                       trick=[(seat, card_code(c)) for seat, c in state.history[start:]],
                       captured=[card_codes(scoring_bits_to_cards(p)) for p in state.piles],
                       scores=scores, team=[scores[0] + scores[2], scores[1] + scores[3]])


@dataclass
class SeatTracker:
    """A seat's information view rebuilt from the server's messages (welcome, played, trick).

    Trick winners and captured cards come from the server's `trick` messages; this class only
    records what it is told and what it saw (a seat that did not follow the led suit is void).
    """

    seat: int = -1
    hand: int = 0
    first_leader: int = 0
    leader: int = 0
    trick: list[int] = field(default_factory=list)
    history: list[tuple[int, int]] = field(default_factory=list)
    piles: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    voids: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    played_by: list[int] = field(default_factory=lambda: [0, 0, 0, 0])

    def on_message(self, msg: dict) -> None:
        kind = msg.get("type")
        if kind == "welcome":
            type(self).__init__(self)
            self.seat = msg["seat"]
            self.hand = cards_to_mask(card_index(c) for c in msg["hand"])
            self.first_leader = self.leader = msg["first_leader"]
            for i, (seat, code) in enumerate(msg["history"]):  # hand: already the current one
                if i % 4 == 0:
                    self.trick = []
                self._played(seat, card_index(code), from_hand=False)
            self.leader = msg["leader"]
            self.trick = [card_index(c) for _, c in msg["trick"]]
            self.piles = [_scoring_bits(card_index(c) for c in cards) for cards in msg["captured"]]
        elif kind == "played":
            self._played(msg["seat"], card_index(msg["card"]), from_hand=True)
        elif kind == "trick":
            self.leader = msg["winner"]
            self.trick = []
            for card in msg["cards"]:
                self.piles[msg["winner"]] |= SCORING_BIT[card_index(card)]

    def _played(self, seat: int, card: int, from_hand: bool) -> None:
        if self.trick and card // 13 != self.trick[0] // 13:
            self.voids[seat] |= 1 << (self.trick[0] // 13)  # failed to follow: void in that suit
        if from_hand and seat == self.seat:
            self.hand &= ~(1 << card)
        self.trick.append(card)
        self.history.append((seat, card))
        self.played_by[seat] += 1

    def view(self) -> InfoView:
        return InfoView(seat=self.seat, hand=self.hand, first_leader=self.first_leader,
                        leader=self.leader, trick=tuple(self.trick), history=tuple(self.history),
                        piles=tuple(self.piles), voids=tuple(self.voids),
                        hand_sizes=tuple(13 - n for n in self.played_by))


def _scoring_bits(cards) -> int:
    bits = 0
    for card in cards:
        bits |= SCORING_BIT[card]
    return bits


def card_codes(cards) -> list[str]:
    return [card_code(int(c)) for c in cards]
