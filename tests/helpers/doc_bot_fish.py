"""A Fish bot written from docs/protocol.md's "Fish" section (and the rules it links, docs/rules.md
section 17) alone: JSON over a WebSocket, no project code.

`FishDocBot` joins a seat of a Fish table before the first move and plays to `fish_over`. It keeps
its own state from `fish_welcome`, `fish_start`, `asked` and `called`: its hand, every seat's
hand count, the sets and who got them, the score, the seat to move and every move; and what it
knows of where the other cards are (a card handed over in public is with its asker; after a miss
neither the target nor, under no trolling, the asker holds the card; a card that only one seat
can still hold is there). It works out its legal asks by the rules and checks every claim of the
document it relies on as it goes: `fish_turn` comes only to the seat to move, its `move` is the
next move, its `asks` are the bot's own legal asks in the documented order and `must_call` says
there are none; each `asked` and `called` is the next move, by a seat allowed to make it, with the
hand counts, the turn, the team and the score the rules give; a call the bot's knowledge decides
is `right` or not as it says; `fish_over` has the bot's score, winner and returns and the hand it
was dealt. A claim that fails raises DocMismatch naming it.

The bot calls a set on its turn once its team certainly holds it (all six placed by its own
knowledge), asks otherwise (for the card likeliest to be a hit), and, when it must call without a
certain set, places what it does not know with a teammate that may hold it.

READS lists every field of a server message the bot reads; the bot can read no other (a
received message is a `Seen` dict that refuses unlisted keys), and tests/serve/test_doc_bot_fish.py
checks each listed field against the document's Fish message tables. The socket plumbing and
that guard are doc_bot_wire.py's, shared with the Gongzhu bot.

    python tests/helpers/doc_bot_fish.py --write-example   # re-capture the document's example

plays one game through a real server (tests/helpers/serve_thread.py) and writes what went over
the socket into the example of docs/protocol.md's "Fish" section.
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import doc_bot_wire
from doc_bot_wire import DocMismatch, WireBot

READS = {  # server message type -> the fields the bot reads
    "fish_created": {"table", "game_id", "tokens"},
    "fish_welcome": {"seat", "num_players", "calls", "first_player", "hand", "hand_counts",
                     "sets", "score", "move"},
    "fish_start": {"turn"},
    "fish_turn": {"move", "asks", "must_call"},
    "asked": {"move", "seat", "target", "card", "hit", "turn", "hand_counts"},
    "called": {"move", "seat", "set", "holders", "right", "team", "removed", "turn",
               "hand_counts", "score"},
    "fish_over": {"game_id", "score", "winner", "returns", "deal"},
    "error": {"code", "message", "rule"},
}
MOVE_CAP = 1000  # past this many moves the seat to move must call
SET_COUNT = {6: 9, 8: 8}  # sets in play by table size
RETRY = ("stale_move",)  # refusals the bot answers by waiting for its next fish_turn


class Seen(doc_bot_wire.Seen):
    """A received message; FishDocBot reads only the fields READS lists for its type."""

    READS = READS
    BOT = "FishDocBot"


class FishDocBot(WireBot):
    """One seat's bot; `play` plays to fish_over. Invariants between messages: `where` holds
    only cards of uncalled sets, each with a seat that certainly holds it (the bot's own cards
    with its seat); `lacks[card]` are seats that certainly do not hold `card`; `counts`,
    `turn`, `moves` and `score` are the table's."""

    SEEN = Seen
    CREATE, CREATED, JOIN, UNTIL = "fish_create", "fish_created", "fish_join", "fish_over"

    def __init__(self, log: list[tuple[str, str]] | None = None):
        super().__init__(log)
        self.seat = -1
        self.n = 0
        self.calls = "any_time"
        self.first = 0
        self.sets: dict[int, list[str]] = {}  # set id -> its cards, in card id order
        self.set_of: dict[str, int] = {}
        self.rank: dict[str, int] = {}  # card -> its place in card id order
        self.team_of_set: dict[int, int | None] = {}  # the team that got each set
        self.dealt: list[str] = []
        self.hand: set[str] = set()
        self.counts: list[int] = []
        self.where: dict[str, int] = {}
        self.lacks: dict[str, set[int]] = {}
        self.turn: int | None = None
        self.moves = 0
        self.score = [0, 0]
        self.history: list[tuple] = []  # every move: ("ask", seat, target, card, hit) or
        #                                 ("call", seat, set, holders, right)
        self.sent: dict[int, dict] = {}  # move number -> the ask or call the bot sent for it
        self.turns: list[tuple[int, list[list]]] = []  # each fish_turn: its move and asks
        self.certain: list[int] = []  # the sets the bot called knowing every holder
        self.choice: dict | None = None  # the move answering the open fish_turn
        self.game_id: int | None = None  # the records' id, told by fish_over
        self.stale: set[int] = set()  # moves the bot sent that another seat's move took

    def team(self, seat: int) -> int:
        return seat % 2

    def uncalled(self) -> list[int]:
        return [s for s, team in self.team_of_set.items() if team is None]

    async def on_fish_welcome(self, _ws, msg: Seen) -> None:
        if msg["move"] != 0:
            raise ValueError("FishDocBot joins a table before its first move")
        self.seat, self.n, self.calls = msg["seat"], msg["num_players"], msg["calls"]
        self.first, self.hand = msg["first_player"], set(msg["hand"])
        self.dealt, self.counts = sorted(self.hand), list(msg["hand_counts"])
        sets = msg["sets"]
        if [s["set"] for s in sets] != list(range(SET_COUNT[self.n])) or \
                any(len(s["cards"]) != 6 or s["team"] is not None for s in sets):
            raise DocMismatch(f"a {self.n}-seat table's sets: {sets}")
        self.sets = {s["set"]: list(s["cards"]) for s in sets}
        self.set_of = {c: s for s, cards in self.sets.items() for c in cards}
        self.rank = {c: i for i, c in enumerate(c for s in sorted(self.sets)
                                                for c in self.sets[s])}
        self.team_of_set = {s: None for s in self.sets}
        size = 6 * len(sets) // self.n
        if self.counts != [size] * self.n or len(self.hand) != size or \
                not self.hand <= set(self.set_of) or msg["score"] != [0, 0]:
            raise DocMismatch(f"a fresh table dealt {sorted(self.hand)} with counts "
                              f"{self.counts}, score {msg['score']}")
        self.where = {c: self.seat for c in self.hand}

    async def on_fish_start(self, _ws, msg: Seen) -> None:
        self.turn = self.passed(self.first)
        if msg["turn"] != self.turn:
            raise DocMismatch(f"fish_start gives the turn to {msg['turn']}; first_player is "
                              f"{self.first}, so the bot expected {self.turn}")

    def passed(self, seat: int) -> int | None:
        """Docs/rules.md section 17: who moves when the turn reaches `seat`: itself if it holds
        cards, else the next teammate with cards (seat + 2, + 4, ...), else the next seat
        clockwise with cards; None once every set is called."""
        if not self.uncalled():
            return None
        order = [seat] + [(seat + k) % self.n for k in range(2, self.n, 2)] + \
            [(seat + k) % self.n for k in range(1, self.n)]
        return next(s for s in order if self.counts[s] > 0)

    def legal_asks(self) -> list[list]:
        """Docs/rules.md section 17: an opponent with cards, a card the bot lacks of a set it
        holds a card of (no trolling); by target, then card id."""
        if self.moves >= MOVE_CAP:
            return []
        mine = {self.set_of[c] for c in self.hand}
        cards = sorted((c for s in mine for c in self.sets[s] if c not in self.hand),
                       key=self.rank.__getitem__)
        targets = [t for t in range(self.n) if self.team(t) != self.team(self.seat)
                   and self.counts[t] > 0]
        return [[t, c] for t in targets for c in cards]

    def candidates(self, card: str, where: dict[str, int], known_at: Counter) -> list[int]:
        """The seats that may hold `card` (not placed in `where`): not the bot, holding a card
        not yet placed, not known to lack it."""
        return [s for s in range(self.n) if s != self.seat and self.counts[s] > known_at[s]
                and s not in self.lacks.get(card, ())]

    def deduced(self) -> dict[str, int]:
        """`where` and what follows from it: a card only one seat may hold is there (repeated
        until nothing changes). DocMismatch when no seat may hold a card."""
        where = dict(self.where)
        cards = [c for s in self.uncalled() for c in self.sets[s] if c not in where]
        changed = True
        while changed:
            changed = False
            known_at = Counter(where.values())
            for card in [c for c in cards if c not in where]:
                seats = self.candidates(card, where, known_at)
                if not seats:
                    raise DocMismatch(f"by the messages no seat can hold {card}")
                if len(seats) == 1:
                    where[card] = seats[0]
                    known_at[seats[0]] += 1
                    changed = True
        return where

    async def on_fish_turn(self, ws, msg: Seen) -> None:
        self.choice = {**self.pick(self.checked_turn(msg)), "move": msg["move"]}
        self.sent[msg["move"]] = self.choice
        await self.send(ws, self.choice)

    def checked_turn(self, msg: Seen) -> list[list]:
        """The legal asks of a fish_turn, checked against the bot's own."""
        mine = self.legal_asks()
        if self.turn != self.seat or msg["move"] != self.moves + 1:
            raise DocMismatch(f"fish_turn for move {msg['move']}; the bot is at move "
                              f"{self.moves + 1} with seat {self.turn} to move")
        asks = [list(a) for a in msg["asks"]]
        if asks != mine or msg["must_call"] != (not mine):
            raise DocMismatch(f"fish_turn asks {asks}, must_call {msg['must_call']}; the bot's "
                              f"legal asks are {mine}")
        self.turns.append((msg["move"], mine))
        return mine

    def pick(self, asks: list[list]) -> dict:
        """A call of a set the team certainly holds, else the ask likeliest to hit, else (it
        must call) the best guess of a call."""
        where = self.deduced()
        own = [s for s in self.uncalled()
               if all(c in where and self.team(where[c]) == self.team(self.seat)
                      for c in self.sets[s])]
        if own:
            self.certain.append(own[0])
            return {"type": "call", "set": own[0],
                    "holders": {c: where[c] for c in self.sets[own[0]]}}
        if asks:
            known_at = Counter(where.values())

            def chance(ask: list) -> float:
                target, card = ask
                if card in where:
                    return float(where[card] == target)
                seats = self.candidates(card, where, known_at)
                return 1 / len(seats) if target in seats else 0.0

            target, card = max(asks, key=chance)
            return {"type": "ask", "target": target, "card": card}
        return self.guess(where)

    def guess(self, where: dict[str, int]) -> dict:
        """A call of the uncalled set with most cards placed on the team, each other card with
        the first teammate that may hold it (the bot itself when none may)."""
        mine = self.team(self.seat)
        set_id = max(self.uncalled(), key=lambda s: sum(
            c in where and self.team(where[c]) == mine for c in self.sets[s]))
        known_at = Counter(where.values())
        holders = {}
        for card in self.sets[set_id]:
            if card in where and self.team(where[card]) == mine:
                holders[card] = where[card]
            else:
                team = [s for s in self.candidates(card, where, known_at) if self.team(s) == mine]
                holders[card] = team[0] if team else self.seat
        return {"type": "call", "set": set_id, "holders": holders}

    def next_move(self, msg: Seen, kind: str) -> None:
        """Check that an asked/called message is the next move."""
        if msg["move"] != self.moves + 1:
            raise DocMismatch(f"{kind} move {msg['move']}; the bot is at move {self.moves + 1}")
        self.moves += 1
        mine = self.sent.get(msg["move"]) if msg["seat"] == self.seat else None
        if msg["seat"] == self.seat and (mine is None or mine["type"] != kind):
            raise DocMismatch(f"{kind} by the bot's seat at move {msg['move']}; it sent {mine}")

    def after(self, msg: Seen, turn: int | None) -> None:
        """Check the hand counts and the seat to move a move's message gives."""
        self.turn = self.passed(turn)
        if msg["hand_counts"] != self.counts or msg["turn"] != self.turn:
            raise DocMismatch(f"{msg['type']} move {self.moves}: hand counts "
                              f"{msg['hand_counts']}, turn {msg['turn']}; the bot counted "
                              f"{self.counts}, turn {self.turn}")

    async def on_asked(self, _ws, msg: Seen) -> None:
        seat, target, card, hit = msg["seat"], msg["target"], msg["card"], msg["hit"]
        self.next_move(msg, "ask")
        if seat != self.turn or self.team(target) == self.team(seat) or \
                self.counts[target] == 0 or card not in self.set_of or \
                self.team_of_set[self.set_of[card]] is not None:
            raise DocMismatch(f"seat {seat} asked seat {target} for {card} with seat {self.turn} "
                              f"to move and counts {self.counts}")
        if seat == self.seat and self.sent[self.moves] != {"type": "ask", "target": target,
                                                           "card": card, "move": self.moves}:
            raise DocMismatch(f"asked {target} {card} for the bot; it sent {self.sent}")
        if (target == self.seat and hit != (card in self.hand)) or \
                (seat == self.seat and card in self.hand):
            raise DocMismatch(f"seat {seat} asked seat {target} for {card}: hit {hit}, the bot "
                              f"holds {sorted(self.hand)}")
        if hit:
            self.hand.discard(card)
            if seat == self.seat:
                self.hand.add(card)
            self.where[card] = seat
            self.counts[seat] += 1
            self.counts[target] -= 1
        else:
            self.lacks.setdefault(card, set()).update((seat, target))
        self.history.append(("ask", seat, target, card, hit))
        self.after(msg, seat if hit else target)

    async def on_called(self, _ws, msg: Seen) -> None:
        seat, set_id, holders, right = msg["seat"], msg["set"], msg["holders"], msg["right"]
        to_move = self.turn
        self.next_move(msg, "call")
        cards = self.sets.get(set_id, [])
        if self.calls == "own_turn" and seat != to_move or not cards or \
                self.team_of_set[set_id] is not None or sorted(holders) != sorted(cards) or \
                any(self.team(s) != self.team(seat) for s in holders.values()):
            raise DocMismatch(f"seat {seat} called set {set_id} as {holders} ({self.calls} "
                              f"calls, seat {to_move} to move)")
        if seat == self.seat and holders != self.sent[self.moves]["holders"]:
            raise DocMismatch(f"called {holders} for the bot; it sent {self.sent[self.moves]}")
        where = self.deduced()
        placed = [where.get(c) for c in cards]
        removed = msg["removed"]
        if None not in placed and right != (placed == [holders[c] for c in cards]):
            raise DocMismatch(f"set {set_id} called as {holders}: right {right}, but the bot "
                              f"knows it lies as {dict(zip(cards, placed))}")
        if sum(removed) != 6 or removed[self.seat] != len(self.hand & set(cards)) or any(
                removed[s] < placed.count(s) for s in range(self.n)):
            raise DocMismatch(f"set {set_id} removed {removed}; the bot placed {placed}")
        team = self.team(seat) if right else 1 - self.team(seat)
        self.team_of_set[set_id] = team
        self.score[team] += 1
        if msg["team"] != team or msg["score"] != self.score:
            raise DocMismatch(f"set {set_id} (right {right}) to team {msg['team']}, score "
                              f"{msg['score']}; the bot has team {team}, score {self.score}")
        self.hand -= set(cards)
        self.counts = [c - r for c, r in zip(self.counts, removed)]
        for card in cards:
            self.where.pop(card, None)
            self.lacks.pop(card, None)
        self.history.append(("call", seat, set_id, dict(holders), right))
        self.after(msg, to_move)

    async def on_fish_over(self, _ws, msg: Seen) -> None:
        self.game_id = msg["game_id"]
        score, winner = msg["score"], msg["winner"]
        mine = None if self.score[0] == self.score[1] else int(self.score[1] > self.score[0])
        returns = [0 if mine is None else 1 if self.team(s) == mine else -1
                   for s in range(self.n)]
        if self.uncalled() or (score, winner, msg["returns"]) != (self.score, mine, returns):
            raise DocMismatch(f"fish_over score {score}, winner {winner}, returns "
                              f"{msg['returns']}; the bot has {self.score}, {mine}, {returns} "
                              f"with sets {self.uncalled()} uncalled")
        if sorted(msg["deal"][self.seat]) != self.dealt:
            raise DocMismatch(f"fish_over deals seat {self.seat} {msg['deal'][self.seat]}; its "
                              f"welcome said {self.dealt}")

    async def on_error(self, ws, msg: Seen) -> None:
        """A stale move is answered by the next fish_turn; any other refusal is a mismatch."""
        stale = [m for m in sorted(self.sent) if m <= self.moves and m not in self.stale
                 and self.history[m - 1][1] != self.seat]
        if msg["code"] not in RETRY or not stale:
            raise DocMismatch(f"refused: {msg['code']} ({msg['rule']}): {msg['message']}")
        self.stale.add(stale[0])


class ExampleBot(FishDocBot):
    """The FishDocBot of the document's example: at its first turn with a legal ask it first
    asks a teammate for that card (to show the refusal), then makes its own move."""

    shown = False

    async def on_fish_turn(self, ws, msg: Seen) -> None:
        if self.shown or msg["must_call"]:
            await super().on_fish_turn(ws, msg)
            return
        self.shown = True
        self.choice = {**self.pick(self.checked_turn(msg)), "move": msg["move"]}
        await self.send(ws, {"type": "ask", "target": (self.seat + 2) % self.n,
                             "card": msg["asks"][0][1], "move": msg["move"]})

    async def on_error(self, ws, msg: Seen) -> None:
        if msg["code"] == "illegal_ask" and msg["rule"] == "ask-teammate" and \
                self.choice is not None and self.choice["move"] not in self.sent:
            self.sent[self.choice["move"]] = self.choice
            await self.send(ws, self.choice)
            return
        await super().on_error(ws, msg)


def own_set_deal(seed: int = 17) -> list[list[str]]:
    """A 6-seat deal (the document's card codes in card id order) in which seat 0 holds the
    whole low D set and three other cards; the rest shuffled by `seed`."""
    deck = [s + r for s in "DCHS" for r in "234567"] + \
        [s + r for s in "DCHS" for r in "9TJQKA"] + ["D8", "C8", "H8", "S8", "*S", "*B"]
    rest = deck[6:]
    random.Random(seed).shuffle(rest)
    return [deck[:6] + rest[:3]] + [rest[3 + 9 * k:12 + 9 * k] for k in range(5)]


EXAMPLE_TABLE = {"seats": ["open", "random", "random", "random", "random", "random"],
                 "deal": own_set_deal(), "first": 0, "calls": "any_time"}
EXAMPLE_HEAD = 4  # the example shows the game up to the bot's 4th move, then its last 2 frames


async def record_example(url: str) -> list[tuple[str, str]]:
    """One game as the document shows it: fish_create on a socket, fish_join seat 0 on that
    same socket, play to fish_over; every frame in order."""
    return await doc_bot_wire.record_example(ExampleBot([]), url, EXAMPLE_TABLE)


def example_block(log: list[tuple[str, str]]) -> str:
    """The frames up to the answer to the bot's EXAMPLE_HEAD-th move, a `...` line, and the
    last two frames; one frame a line, `v` and `type` first (the same JSON objects)."""
    lines, moves, head = [], 0, len(log)
    for i, (arrow, text) in enumerate(log):
        msg = json.loads(text)
        if arrow == "> " and msg["type"] in ("ask", "call"):
            moves += 1
        if arrow == "< " and msg["type"] in ("asked", "called") and moves >= EXAMPLE_HEAD:
            head = i + 1
            break
    for arrow, text in log[:head] + [("", "...")] + log[-2:]:
        if arrow:
            msg = json.loads(text)
            text = json.dumps({"v": msg.pop("v"), "type": msg.pop("type"), **msg})
        lines.append(arrow + text)
    return "\n".join(lines)


def write_example(doc: Path) -> None:
    """Replace the code block after "An example:" in the "## Fish" section with a capture."""
    log = doc_bot_wire.capture(record_example, "/fish")
    doc_bot_wire.write_example(doc, ["## Fish", "An example:"], example_block(log))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-example"]:
        sys.exit("usage: python tests/helpers/doc_bot_fish.py --write-example")
    write_example(Path(__file__).resolve().parents[2] / "docs" / "protocol.md")
