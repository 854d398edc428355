"""A Gongzhu bot written from docs/protocol.md alone: JSON over a WebSocket, no project code.

`DocBot` joins a seat and plays the table's match (one hand unless it was made with `hands`
or `target`), answering each `hand_over` with `next`. It keeps its own state from `welcome`,
`played` and `trick` (its hand, the current trick with the seat of each card, who leads, the
scoring cards each seat has taken), works out its legal cards by the rules the protocol links
(docs/rules.md section 2) and checks every claim of the document it relies on as it goes: plays
go clockwise from the trick's leader, `trick.cards` are the `played` cards in play order, the
winner is the highest card of the led suit, `captured` is what the bot counted,
`your_turn.legal` is its own legal set in the documented order, a `your_turn` comes for every
move (forced ones too), `returns` are team differences of the `scores`, and `hand_over` and
`match_over` agree with the totals of its own game_overs.
A claim that fails raises DocMismatch naming it.

READS lists every field of a server message the bot reads; the bot can read no other (a
received message is a `Seen` dict that refuses unlisted keys), and tests/serve/test_doc_bot.py
checks each listed field against the document's message tables. The socket plumbing and that
guard are doc_bot_wire.py's, shared with the Fish bot.

    python tests/helpers/doc_bot.py --write-example   # re-capture the document's example

plays one hand through a real server (tests/helpers/serve_thread.py) and writes what went over
the socket into docs/protocol.md's "An example exchange".
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import doc_bot_wire
from doc_bot_wire import DocMismatch, WireBot

READS = {  # server message type -> the fields the bot reads
    "created": {"table", "tokens"},
    "welcome": {"seat", "hand", "hand_number", "leader", "trick", "history", "captured"},
    "played": {"seat", "card", "ply"},
    "trick": {"winner", "cards", "captured"},
    "your_turn": {"ply", "legal"},
    "game_over": {"scores", "returns"},
    "hand_over": {"hand", "totals", "next_leader"},
    "match_over": {"hands_played", "totals", "winner"},
    "error": {"code", "message"},
}
SUITS = "SHDC"  # the documented order of `legal`: suit S, H, D, C, then rank
RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SCORING = {"SQ", "DJ", "C10"} | {"H" + r for r in RANKS}  # the 16 cards that score
RETRY = ("illegal_card",)  # refusals the bot answers by playing its own legal choice


class Seen(doc_bot_wire.Seen):
    """A received message; DocBot reads only the fields READS lists for its type."""

    READS = READS
    BOT = "DocBot"


def suit(card: str) -> str:
    return card[0]


def rank(card: str) -> int:
    return RANKS.index(card[1:])


def sort_key(card: str) -> tuple[int, int]:
    return SUITS.index(suit(card)), rank(card)


def legal_cards(hand: set[str], trick: list[tuple[int, str]]) -> list[str]:
    """Docs/rules.md section 2: follow the led suit when you can, else any card; in the
    document's order of `legal`."""
    led = [c for c in hand if trick and suit(c) == suit(trick[0][1])]
    return sorted(led or hand, key=sort_key)


def trick_winner(trick: list[tuple[int, str]]) -> int:
    """The seat of the highest card of the led suit (no trumps)."""
    led = suit(trick[0][1])
    return max((rank(c), seat) for seat, c in trick if suit(c) == led)[1]


class DocBot(WireBot):
    """One seat's bot; `play` plays the match (`until`="game_over": one hand). The bot ducks:
    under the trick's best card when it can, shedding SQ and high hearts when void; the choice
    is incidental, the bookkeeping is the point."""

    SEEN = Seen
    CREATE, CREATED, JOIN, UNTIL = "create", "created", "join", "match_over"

    def __init__(self, log: list[tuple[str, str]] | None = None):
        super().__init__(log)
        self.seat = -1
        self.hand: set[str] = set()  # the bot's cards now
        self.leader = 0  # who leads the trick in progress
        self.trick: list[tuple[int, str]] = []  # the trick in progress as (seat, card)
        self.history: list[tuple[int, str]] = []  # every (seat, card) of the hand so far
        self.piles: list[set[str]] = [set(), set(), set(), set()]  # scoring cards taken
        self.turns: list[list[str]] = []  # the legal cards of each your_turn of the hand
        self.choice: dict | None = None  # the play answering the open your_turn
        self.hands: list[dict] = []  # per finished hand: its game_over, history and turns
        self.totals = [0, 0]  # team points of the finished hands (seats 0+2, seats 1+3)
        self.next_leader: int | None = None  # the leader hand_over announced

    @property
    def ply(self) -> int:
        return len(self.history)

    async def on_welcome(self, _ws, msg: Seen) -> None:
        """A seat's welcome: at a join, or opening each hand of a match."""
        if msg["hand_number"] != len(self.hands) + 1:
            raise DocMismatch(f"welcome to hand {msg['hand_number']} after {len(self.hands)} "
                              f"finished hands")
        if self.next_leader is not None and msg["leader"] != self.next_leader:
            raise DocMismatch(f"hand {msg['hand_number']} led by {msg['leader']}; hand_over "
                              f"said {self.next_leader}")
        self.seat, self.hand, self.leader = msg["seat"], set(msg["hand"]), msg["leader"]
        self.trick = [(s, c) for s, c in msg["trick"]]
        self.history = [(s, c) for s, c in msg["history"]]
        self.piles = [set(p) for p in msg["captured"]]
        self.turns, self.choice, self.next_leader = [], None, None

    async def on_played(self, _ws, msg: Seen) -> None:
        seat, card = msg["seat"], msg["card"]
        expected = (self.leader + len(self.trick)) % 4
        if seat != expected or msg["ply"] != self.ply + 1:
            raise DocMismatch(f"played {card} by seat {seat} at ply {msg['ply']}: expected seat "
                              f"{expected} (clockwise from leader {self.leader}) at ply "
                              f"{self.ply + 1}")
        self.trick.append((seat, card))
        self.history.append((seat, card))
        if seat == self.seat:
            self.hand.remove(card)
            self.choice = None

    async def on_trick(self, _ws, msg: Seen) -> None:
        cards = [c for _, c in self.trick]
        if msg["cards"] != cards or msg["winner"] != trick_winner(self.trick):
            raise DocMismatch(f"trick {msg['cards']} won by {msg['winner']}: the bot saw "
                              f"{self.trick}, won by {trick_winner(self.trick)}")
        self.piles[msg["winner"]] |= SCORING & set(cards)
        if [set(p) for p in msg["captured"]] != self.piles:
            raise DocMismatch(f"captured {msg['captured']}; the bot counted {self.piles}")
        self.leader, self.trick = msg["winner"], []

    async def on_your_turn(self, ws, msg: Seen) -> None:
        self.choice = {"type": "play", "card": self.pick(self.checked_turn(msg)),
                       "ply": msg["ply"]}
        await self.send(ws, self.choice)

    def checked_turn(self, msg: Seen) -> list[str]:
        """The legal cards of a your_turn, checked against the bot's own."""
        mine = legal_cards(self.hand, self.trick)
        if msg["legal"] != mine or msg["ply"] != self.ply + 1:
            raise DocMismatch(f"your_turn for ply {msg['ply']} with legal {msg['legal']}; the "
                              f"bot is at ply {self.ply + 1} with legal {mine}")
        self.turns.append(mine)
        return mine

    async def on_game_over(self, _ws, msg: Seen) -> None:
        scores, returns = msg["scores"], msg["returns"]
        team = [scores[0] + scores[2], scores[1] + scores[3]]
        if returns != [team[s % 2] - team[1 - s % 2] for s in range(4)]:
            raise DocMismatch(f"returns {returns} are not own team minus other team of the "
                              f"scores {scores}")
        self.totals = [self.totals[0] + team[0], self.totals[1] + team[1]]
        self.hands.append({"game_over": dict(msg), "history": self.history, "turns": self.turns})

    async def on_hand_over(self, ws, msg: Seen) -> None:
        if msg["hand"] != len(self.hands) or msg["totals"] != self.totals:
            raise DocMismatch(f"hand_over of hand {msg['hand']} with totals {msg['totals']}; "
                              f"the bot counted {len(self.hands)} hands, totals {self.totals}")
        self.next_leader = msg["next_leader"]
        await self.send(ws, {"type": "next"})

    async def on_match_over(self, _ws, msg: Seen) -> None:
        lead = self.totals[0] - self.totals[1]
        winner = None if lead == 0 else int(lead < 0)
        if (msg["hands_played"], msg["totals"], msg["winner"]) != (len(self.hands), self.totals,
                                                                   winner):
            raise DocMismatch(f"match_over {msg['hands_played']} hands, totals {msg['totals']}, "
                              f"winner {msg['winner']}; the bot counted {len(self.hands)}, "
                              f"{self.totals}, {winner}")

    async def on_error(self, ws, msg: Seen) -> None:
        if msg["code"] not in RETRY or self.choice is None:
            raise DocMismatch(f"refused: {msg['code']}: {msg['message']}")
        await self.send(ws, self.choice)

    def pick(self, legal: list[str]) -> str:
        if not self.trick:
            return min(legal, key=rank)
        led = suit(self.trick[0][1])
        if suit(legal[0]) == led:
            best = max(rank(c) for _, c in self.trick if suit(c) == led)
            under = [c for c in legal if rank(c) < best]
            return max(under, key=rank) if under else min(legal, key=rank)
        shed = [c for c in legal if c == "SQ"] or [c for c in legal if suit(c) == "H"] or legal
        return max(shed, key=rank)


class ExampleBot(DocBot):
    """The DocBot of the document's example: at its first turn where it must follow suit and
    holds another suit, it first tries a card of that other suit (to show the refusal)."""

    shown = False

    async def on_your_turn(self, ws, msg: Seen) -> None:
        wrong = sorted(self.hand - set(legal_cards(self.hand, self.trick)), key=sort_key)
        if self.shown or not wrong:
            await super().on_your_turn(ws, msg)
            return
        self.shown = True
        self.choice = {"type": "play", "card": self.pick(self.checked_turn(msg)),
                       "ply": msg["ply"]}
        await self.send(ws, {"type": "play", "card": wrong[0], "ply": msg["ply"]})


EXAMPLE_TABLE = {"seats": ["open", "greed", "if", "random"], "deal": 17, "leader": 0}


async def record_example(url: str) -> list[tuple[str, str]]:
    """One hand as the document shows it: create on a socket, join seat 0 on that same
    socket, play to the end of the (one-hand) match; every frame in order."""
    return await doc_bot_wire.record_example(ExampleBot([]), url, EXAMPLE_TABLE)


def example_block(log: list[tuple[str, str]]) -> str:
    """One frame a line, `v` and `type` first and the rest in the order sent, spaced for
    reading (the same JSON objects)."""
    lines = []
    for arrow, text in log:
        msg = json.loads(text)
        lines.append(arrow + json.dumps({"v": msg.pop("v"), "type": msg.pop("type"), **msg}))
    return "\n".join(lines)


def write_example(doc: Path) -> None:
    """Replace the first code block under "## An example exchange" with a fresh capture."""
    log = doc_bot_wire.capture(record_example)
    doc_bot_wire.write_example(doc, ["## An example exchange"], example_block(log))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-example"]:
        sys.exit("usage: python tests/helpers/doc_bot.py --write-example")
    write_example(Path(__file__).resolve().parents[2] / "docs" / "protocol.md")
