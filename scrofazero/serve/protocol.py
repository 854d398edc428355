"""The table protocol: JSON messages over a WebSocket (docs/protocol.md), checked here.

`parse_client_message` turns one received text frame into its message model (serve/messages.py)
or raises ProtocolError with the error code and the one-line message sent back to that client;
`parse_frame` does the same for any protocol's messages and refusal (the Fish one's too).
`SeatTracker` rebuilds a seat's information view from the messages it receives; our own bots
play through it, so they see exactly what an outside bot sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import BaseModel, ValidationError

from scrofazero.games.gongzhu.cards import (
    SCORING_BIT,
    card_code,
    card_index,
    cards_to_mask,
    scoring_bits_to_cards,
)
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.games.gongzhu.scoring import pile_scores
from scrofazero.serve.messages import (
    CLIENT_MESSAGES,
    ERROR_CODES,
    PROTOCOL_VERSION,
    Claim,
    ClientMessage,
    Error,
    PublicState,
    echo,
)

MAX_MESSAGE_BYTES = 4096  # a client message above this is refused as too_large
MAX_DEPTH = 16  # arrays and objects nested deeper than this are refused as bad_json


class ProtocolError(Exception):
    """A message refused; `code` is one of ERROR_CODES. Nothing changes on the server."""

    def __init__(self, code: str, message: str):
        assert code in ERROR_CODES, code
        super().__init__(message)
        self.code = code
        self.message = message

    def to_message(self) -> dict:
        return Error(code=self.code, message=self.message).model_dump()


def _one_line(kind: str, model: type[BaseModel], err: ValidationError) -> str:
    """The first problem of a refused message, naming its field as the field's description
    says what it must be."""
    problem = err.errors()[0]
    name = str(problem["loc"][0]) if problem["loc"] else ""
    if problem["type"] == "value_error":  # a validator's own sentence
        return str(problem["ctx"]["error"])
    what = model.model_fields[name].description if name in model.model_fields else "valid"
    if problem["type"] == "missing":
        return f"'{kind}' needs '{name}' ({what})"
    return f"'{name}' must be {what}, got {echo(problem['input'])}"[:300]



def parse_frame(text: str | bytes, messages: dict, error=ProtocolError) -> ClientMessage:
    """One client frame -> its checked message (`messages`: type -> model, as CLIENT_MESSAGES).
    A refusal is raised as `error` (code, message): the protocol's ProtocolError (nothing is
    changed)."""
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > MAX_MESSAGE_BYTES:
        raise error("too_large", f"message of {size} bytes; the limit is {MAX_MESSAGE_BYTES}")
    msg = load_json(text, error)
    if not isinstance(msg, dict):
        raise error("bad_message", "a message must be a JSON object")
    version = msg.get("v", PROTOCOL_VERSION)
    if isinstance(version, bool) or version != PROTOCOL_VERSION:
        raise error("unsupported_version", f"protocol version {version!r}; this server speaks "
                                           f"{PROTOCOL_VERSION}")
    if "type" not in msg:
        raise error("bad_message", f"a message needs 'type', one of {', '.join(messages)}")
    kind = msg.get("type")
    model = messages.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise error("bad_message", f"unknown message type {kind!r}; expected "
                                   f"{', '.join(messages)}")
    try:
        return model.model_validate(msg)
    except ValidationError as err:
        raise error("bad_message", _one_line(kind, model, err)) from None


def parse_client_message(text: str | bytes) -> ClientMessage:
    """One client frame of /ws -> its checked message. Raises ProtocolError (nothing is
    changed)."""
    return parse_frame(text, CLIENT_MESSAGES)


def load_json(text: str | bytes, error=ProtocolError):
    """JSON text (or its UTF-8 bytes) -> its value. Refused as bad_json (raised as `error`)
    when it is not UTF-8, not JSON, or nested deeper than MAX_DEPTH (checked before parsing)."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        depth = nesting_depth(text)
        if depth > MAX_DEPTH:
            raise error("bad_json", f"JSON nested {depth} deep; the limit is {MAX_DEPTH}")
        return json.loads(text)
    except (ValueError, UnicodeDecodeError) as err:
        raise error("bad_json", f"not JSON: {err}") from None


def parse_claim(body: bytes) -> Claim:
    """The body of POST /api/tables/{table}/claim -> its checked Claim. Raises ProtocolError."""
    asked = load_json(body)
    if not isinstance(asked, dict):
        raise ProtocolError("bad_message", 'a claim is a JSON object {"seat": 0..3, "name": ...}')
    try:
        return Claim.model_validate(asked)
    except ValidationError as err:
        raise ProtocolError("bad_message", _one_line("claim", Claim, err)) from None


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON text (brackets inside strings do not
    count), found without parsing, so that deep input cannot exhaust the parser's stack."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


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
