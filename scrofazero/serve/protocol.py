"""The table protocol: JSON messages over a WebSocket (docs/protocol.md), validated here.

`parse_client_message` turns one received text frame into a checked dict or raises
ProtocolError with the error code and message sent back to that client. `SeatTracker` rebuilds a
seat's information view from the messages it receives; our own bots play through it, so they see
exactly what an outside bot sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from scrofazero.games.gongzhu.cards import (
    SCORING_BIT,
    card_code,
    card_index,
    cards_to_mask,
)
from scrofazero.games.gongzhu.rules import InfoView

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 4096  # a client message above this is refused as too_large
SEAT_KINDS = ("open", "scrofazero", "raw", "greed", "if", "random")  # what a seat can hold
MAX_NAME = 40

# Error codes sent in {"type": "error", "code": ...}; docs/protocol.md explains each.
ERROR_CODES = ("bad_json", "too_large", "bad_message", "unsupported_version", "unknown_table",
               "unknown_seat", "bad_token", "not_joined", "not_your_turn", "illegal_card",
               "not_started", "game_over", "replaced")


class ProtocolError(Exception):
    """A message refused; `code` is one of ERROR_CODES. Nothing changes on the server."""

    def __init__(self, code: str, message: str):
        assert code in ERROR_CODES, code
        super().__init__(message)
        self.code = code
        self.message = message

    def to_message(self) -> dict:
        return {"v": PROTOCOL_VERSION, "type": "error", "code": self.code, "message": self.message}


def _need(msg: dict, key: str, kind, what: str):
    if key not in msg:
        raise ProtocolError("bad_message", f"'{msg['type']}' needs '{key}' ({what})")
    value = msg[key]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ProtocolError("bad_message", f"'{key}' must be {what}, got {value!r}")
    if kind is not int and not isinstance(value, kind):
        raise ProtocolError("bad_message", f"'{key}' must be {what}, got {value!r}")
    return value


def _check_create(msg: dict) -> None:
    seats = _need(msg, "seats", list, "a list of 4 seat kinds")
    if len(seats) != 4 or not all(isinstance(s, str) and s in SEAT_KINDS for s in seats):
        raise ProtocolError("bad_message", f"'seats' must be 4 of {', '.join(SEAT_KINDS)}, "
                                           f"got {seats!r}"[:300])
    if msg.get("deal") is not None:
        _need(msg, "deal", int, "a standard deal number or null")
    if "leader" in msg:
        leader = _need(msg, "leader", int, "a seat 0..3")
        if not 0 <= leader < 4:
            raise ProtocolError("bad_message", f"'leader' must be a seat 0..3, got {leader}")
    if "thinking" in msg:
        _need(msg, "thinking", bool, "true or false")


def parse_client_message(text: str | bytes) -> dict:
    """One client frame -> a checked message dict. Raises ProtocolError (nothing is changed)."""
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > MAX_MESSAGE_BYTES:
        raise ProtocolError("too_large", f"message of {size} bytes; the limit is "
                                         f"{MAX_MESSAGE_BYTES}")
    try:
        msg = json.loads(text)
    except (ValueError, UnicodeDecodeError) as err:
        raise ProtocolError("bad_json", f"not JSON: {err}") from None
    if not isinstance(msg, dict):
        raise ProtocolError("bad_message", "a message must be a JSON object")
    version = msg.get("v", PROTOCOL_VERSION)
    if version != PROTOCOL_VERSION:
        raise ProtocolError("unsupported_version", f"protocol version {version!r}; this server "
                                                   f"speaks {PROTOCOL_VERSION}")
    kind = msg.get("type")
    if kind == "join":
        _need(msg, "table", str, "a table id")
        _need(msg, "seat", int, "a seat 0..3")
        _need(msg, "token", str, "the seat's token")
        if "name" in msg:
            name = _need(msg, "name", str, "a display name")
            if len(name) > MAX_NAME:
                raise ProtocolError("bad_message", f"'name' longer than {MAX_NAME} characters")
    elif kind == "play":
        code = _need(msg, "card", str, "a card code such as 'SQ' or 'H10'")
        try:
            msg["card_index"] = card_index(code)
        except ValueError as err:
            raise ProtocolError("bad_message", str(err)) from None
        if "ply" in msg:
            _need(msg, "ply", int, "the ply number of your_turn")
    elif kind == "create":
        _check_create(msg)
    elif kind == "watch":
        _need(msg, "table", str, "a table id")
    elif kind != "ping":
        raise ProtocolError("bad_message", f"unknown message type {kind!r}; expected join, "
                                           "play, create, watch or ping")
    return msg


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
            self.__init__()
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
