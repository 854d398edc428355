"""Fish (Literature) rules as plain Python (docs/rules.md section 17): deal, asks, calls, turn
passing, score. The slow, obvious reference engine: it records public fish.events (Ask, Call)
and never calls players; it knows nothing of agents, torch or belief trackers. Where the
published rules are silent, the choices are listed in FishState's docstring.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from scrofazero.games.fish.cards import (
    CARD_CODES,
    TABLE_SIZES,
    card_code,
    hand_size,
    num_cards,
    num_sets,
    set_cards,
    set_name,
    set_of,
    team_of,
)
from scrofazero.games.fish.events import Ask, Call, Event

CALL_MODES = ("any_time", "own_turn")
NUM_TEAMS = 2


@dataclass(frozen=True)
class Params:
    """num_players: 6 or 8. ask_held_allowed: the asker may ask for a card it holds (standard
    "no trolling" forbids it). ask_needs_other: the asker must hold a card of the set besides
    the asked one (docs/rules.md section 17); False lets a held asked card count, as the recorded
    human games play (only matters with ask_held_allowed). calls: "any_time" (any seat may call
    between moves) or "own_turn" (only the player to move). public_counts: hand counts are
    public, so Call events carry `removed` per seat (else removed=None)."""

    num_players: int = 8
    ask_held_allowed: bool = False
    ask_needs_other: bool = True
    calls: str = "any_time"
    public_counts: bool = True

    def __post_init__(self):
        if self.num_players not in TABLE_SIZES:
            raise ValueError(f"num_players must be one of {TABLE_SIZES}, got {self.num_players!r}")
        if self.calls not in CALL_MODES:
            raise ValueError(f"calls must be one of {CALL_MODES}, got {self.calls!r}")
        for name in ("ask_held_allowed", "ask_needs_other", "public_counts"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")


class IllegalMove(ValueError):
    """A move that breaks a rule; `rule` is a short stable id (e.g. "ask-teammate"), the message
    says the rule in words. The state is left unchanged."""

    def __init__(self, rule: str, message: str):
        super().__init__(message)
        self.rule = rule


Assignment = Mapping[int, int] | Iterable[Sequence[int]]


def _normalise_assignment(assignment: Assignment) -> list[tuple[int, int]]:
    items = assignment.items() if isinstance(assignment, Mapping) else assignment
    return [(int(card), int(seat)) for card, seat in items]


@dataclass(frozen=True)
class AskMove:
    target: int
    card: int


@dataclass(frozen=True)
class CallMove:
    set_id: int
    assignment: tuple[tuple[int, int], ...]  # (card, seat) for the set's 6 cards


Move = AskMove | CallMove


@dataclass(frozen=True)
class FishView:
    """What seat `seat` knows right now besides the events: its hand, the public counts, the
    uncalled sets, its legal asks (empty when it is not to move) and whether it must call."""

    seat: int
    num_players: int
    hand: tuple[int, ...]
    hand_counts: tuple[int, ...]
    uncalled_sets: tuple[int, ...]
    legal_asks: tuple[tuple[int, int], ...]
    must_call: bool


class FishState:
    """One game after the deal, mutable: `ask` and `call` change it in place.

    Rule choices where the published rules are silent:
    - seat `first_player` (default 0) moves first;
    - calls="any_time": any seat may call between moves, even one with no cards left; any
      uncalled set may be called (a call the team cannot win just gives the set away);
    - after a call the turn stays with the player to move (not the caller, if different);
    - a player to move with no cards hands the turn to the next teammate with cards (seat + 2,
      + 4, ...); if the whole team is out, to the next seat clockwise with cards;
    - must_call: the player to move has no legal ask (opponents out of cards, or under no
      trolling it holds only whole sets); then only calls are legal.
    `turn_passed_from` is the empty-handed seat the current player got the turn from (None once
    it asks): the published rule says only "a teammate", so a replay may accept another
    teammate's ask.
    """

    def __init__(self, params: Params, hands: Sequence[Iterable[int]], first_player: int = 0):
        self.params = params
        n = params.num_players
        self.initial_hands = _check_hands(params, hands)
        if not _is_index(first_player, n):
            raise ValueError(f"first_player must be a seat 0..{n - 1}, got {first_player!r}")
        self.first_player = int(first_player)
        self._hands = [set(h) for h in self.initial_hands]
        self._holder = [-1] * num_cards(n)  # seat holding each card; -1 once its set is called
        for seat, hand in enumerate(self.initial_hands):
            for card in hand:
                self._holder[card] = seat
        self._set_team = [-1] * num_sets(n)  # team that got each set; -1 while uncalled
        self.call_order: list[int] = []
        self.events: list[Event] = []
        self._current = self.first_player
        self.turn_passed_from: int | None = None
        self._pass_turn_if_empty()

    @classmethod
    def new(cls, params: Params, hands: Sequence[Iterable[int]],
            first_player: int = 0) -> FishState:
        """hands[seat] = card ids dealt to that seat; checked to be a full deal."""
        return cls(params, hands, first_player)

    @classmethod
    def deal(cls, params: Params, seed_or_rng=None, first_player: int = 0) -> FishState:
        """A shuffled deal from an int seed or a numpy Generator (same seed, same deal)."""
        rng = seed_or_rng
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(seed_or_rng)
        n, size = params.num_players, hand_size(params.num_players)
        deck = rng.permutation(num_cards(n)).tolist()
        hands = [sorted(deck[seat * size:(seat + 1) * size]) for seat in range(n)]
        return cls(params, hands, first_player)

    # ---- reading the state

    @property
    def num_players(self) -> int:
        return self.params.num_players

    @property
    def current_player(self) -> int:
        return self._current

    def hand(self, seat: int) -> tuple[int, ...]:
        return tuple(sorted(self._hands[seat]))

    @property
    def hand_counts(self) -> tuple[int, ...]:
        return tuple(len(h) for h in self._hands)

    def holder(self, card: int) -> int:
        """Seat holding `card`, -1 once its set has been called."""
        return self._holder[card]

    @property
    def holders(self) -> tuple[int, ...]:
        """[num_cards] seat holding each card, -1 for cards of called sets."""
        return tuple(self._holder)

    @property
    def called(self) -> dict[int, int]:
        """{set_id: team that got it}, in the order the sets were called."""
        return {s: self._set_team[s] for s in self.call_order}

    def uncalled_sets(self) -> list[int]:
        return [s for s, team in enumerate(self._set_team) if team < 0]

    @property
    def is_terminal(self) -> bool:
        return len(self.call_order) == len(self._set_team)

    @property
    def score(self) -> tuple[int, int]:
        """Sets won by team 0 (seats 0, 2, ...) and team 1."""
        return (self._set_team.count(0), self._set_team.count(1))

    def returns(self) -> tuple[float, ...]:
        """One value per seat: +1 for the winning team, -1 for the losers, 0 for a draw or
        while the game is still running."""
        s0, s1 = self.score
        if not self.is_terminal or s0 == s1:
            return (0.0,) * self.num_players
        winner = 0 if s0 > s1 else 1
        return tuple(1.0 if team_of(seat) == winner else -1.0 for seat in range(self.num_players))

    def legal_asks(self) -> list[tuple[int, int]]:
        """(target, card) pairs the player to move may ask, by target then card id."""
        if self.is_terminal:
            return []
        me = self._current
        hand = self._hands[me]
        held_ok, needs_other = self.params.ask_held_allowed, self.params.ask_needs_other
        per_set: dict[int, int] = {}
        for card in hand:
            per_set[set_of(card)] = per_set.get(set_of(card), 0) + 1
        cards = []
        for set_id in sorted(per_set):
            for card in set_cards(set_id):
                # docs/rules.md section 17: the asker holds another card of the set, and (no
                # trolling) not this one; with trolling a held card needs a second card of its
                # set, unless ask_needs_other is off
                if card not in hand or (held_ok and (per_set[set_id] >= 2 or not needs_other)):
                    cards.append(card)
        targets = [t for t in range(self.num_players)
                   if team_of(t) != team_of(me) and self._hands[t]]
        return [(t, c) for t in targets for c in cards]

    @property
    def must_call(self) -> bool:
        """True when the player to move cannot ask (only calls are legal)."""
        return not self.is_terminal and not self.legal_asks()

    def legal_call_sets(self, seat: int) -> list[int]:
        """Sets `seat` may call now: every uncalled set, if calls are open to it."""
        if self.is_terminal or (self.params.calls == "own_turn" and seat != self._current):
            return []
        return self.uncalled_sets()

    def can_call(self, seat: int) -> bool:
        return bool(self.legal_call_sets(seat))

    # ---- moves

    def ask(self, target: int, card: int, asker: int | None = None) -> Ask:
        """The player to move asks `target` for `card`; `asker`, if given, must be the player
        to move. Success: the card moves and the asker keeps the turn; failure: the turn passes
        to the target. Returns the recorded event; IllegalMove (state unchanged) if illegal."""
        self._check_ask(target, card, asker)
        target, card, me = int(target), int(card), self._current
        self.turn_passed_from = None
        success = self._holder[card] == target
        if success:
            self._hands[target].remove(card)
            self._hands[me].add(card)
            self._holder[card] = me
        else:
            self._current = target
        event = Ask(asker=me, target=target, card=card, success=success)
        self.events.append(event)
        self._pass_turn_if_empty()
        return event

    def call(self, caller: int, set_id: int, assignment: Assignment) -> Call:
        """`caller` names a seat of its team for each of the 6 cards of `set_id` (a mapping
        card -> seat or (card, seat) pairs). Right iff every card is where named: the set goes
        to the caller's team, else to the other; either way its cards leave every hand."""
        pairs = self._check_call(caller, set_id, assignment)
        caller, set_id = int(caller), int(set_id)
        correct = all(self._holder[card] == seat for card, seat in pairs)
        removed = [0] * self.num_players
        for card in set_cards(set_id):
            seat = self._holder[card]
            removed[seat] += 1
            self._hands[seat].remove(card)
            self._holder[card] = -1
        team = team_of(caller)
        self._set_team[set_id] = team if correct else (team + 1) % NUM_TEAMS
        self.call_order.append(set_id)
        event = Call(caller=caller, set_id=set_id, assignment=tuple(sorted(pairs)), correct=correct,
                     removed=tuple(removed) if self.params.public_counts else None)
        self.events.append(event)
        self._pass_turn_if_empty()
        return event

    def set_turn(self, seat: int) -> None:
        """Hand the turn to `seat` (which must hold cards) outside the rules: for replaying
        recordings whose table passed the turn differently; not a game move."""
        if self.is_terminal or not 0 <= seat < self.num_players or not self._hands[seat]:
            raise ValueError(f"cannot give the turn to seat {seat}: "
                             "it holds no cards or the game is over")
        self._current = seat

    def _pass_turn_if_empty(self) -> None:
        # docs/rules.md section 17: a player with no cards does not ask; the turn goes to a teammate
        # with cards, and when the team is out, to the other team (which then must call).
        if self.is_terminal or self._hands[self._current]:
            return
        n, me = self.num_players, self._current
        order = [(me + k) % n for k in range(2, n, 2)] + [(me + k) % n for k in range(1, n, 2)]
        self._current = next(seat for seat in order if self._hands[seat])
        self.turn_passed_from = me

    def _check_ask(self, target: int, card: int, asker: int | None) -> None:
        me, n = self._current, self.num_players
        if self.is_terminal:
            raise IllegalMove("game-over", "the game is over: every set has been called")
        if asker is not None and asker != me:
            raise IllegalMove("not-your-turn", f"seat {asker} may not ask: it is seat {me}'s turn")
        if self.must_call:
            raise IllegalMove("must-call", f"seat {me} has no legal ask; a set must be called")
        if not _is_index(target, n):
            raise IllegalMove("no-such-seat", f"there is no seat {target!r} at a {n}-player table")
        if team_of(target) == team_of(me):
            raise IllegalMove("ask-teammate",
                              f"seat {me} may only ask an opponent, not seat {target} of its team")
        if not self._hands[target]:
            raise IllegalMove("target-has-no-cards",
                              f"seat {target} has no cards left and cannot be asked")
        if not _is_index(card, len(self._holder)) or self._holder[card] < 0:
            raise IllegalMove("card-not-in-play", f"card {_card_text(card)} is not in play "
                              "(not in this deck, or its set was called)")
        hand, code = self._hands[me], card_code(card)
        if card in hand and not self.params.ask_held_allowed:
            raise IllegalMove("asker-holds-card",
                              f"seat {me} may not ask for {code}: it holds it (no trolling)")
        needs_other = self.params.ask_needs_other
        if not any(c in hand for c in set_cards(set_of(card)) if c != card or not needs_other):
            other = "other " if needs_other else ""
            raise IllegalMove("asker-lacks-set", f"seat {me} may not ask for {code}: it holds "
                              f"no {other}card of the {set_name(set_of(card))} set")

    def _check_call(self, caller: int, set_id: int,
                    assignment: Assignment) -> list[tuple[int, int]]:
        n = self.num_players
        if self.is_terminal:
            raise IllegalMove("game-over", "the game is over: every set has been called")
        if not _is_index(caller, n):
            raise IllegalMove("no-such-seat", f"there is no seat {caller!r} at a {n}-player table")
        if self.params.calls == "own_turn" and caller != self._current:
            raise IllegalMove("call-not-your-turn", f"seat {caller} may not call: calls are made "
                              f"on one's own turn and it is seat {self._current}'s turn")
        if not _is_index(set_id, len(self._set_team)):
            raise IllegalMove("no-such-set", f"there is no set {set_id!r} with {n} players")
        if self._set_team[set_id] >= 0:
            raise IllegalMove("set-already-called",
                              f"the {set_name(set_id)} set has already been called")
        try:
            pairs = _normalise_assignment(assignment)
        except (TypeError, ValueError) as exc:
            raise IllegalMove("call-incomplete",
                              f"a call names (card, seat) pairs: {exc}") from None
        cards = sorted(card for card, _ in pairs)
        if cards != list(set_cards(set_id)):
            names = " ".join(_card_text(c) for c in cards) or "nothing"
            raise IllegalMove("call-incomplete", f"a call of the {set_name(set_id)} set must place "
                              f"each of its 6 cards exactly once, got: {names}")
        for card, seat in pairs:
            if not _is_index(seat, n) or team_of(seat) != team_of(caller):
                raise IllegalMove("call-names-opponent", f"seat {caller} placed {card_code(card)} "
                                  f"with seat {seat}, who is not on its team")
        return pairs

    # ---- copies and comparison

    def view(self, seat: int, force_call: bool = False) -> FishView:
        """What `seat` knows now besides the public events: legal asks only on its turn;
        must_call when the rules force a call (or the caller does, `force_call`: a match
        runner's move cap)."""
        to_move = seat == self.current_player
        asks = tuple(self.legal_asks()) if to_move and not force_call else ()
        return FishView(seat=seat, num_players=self.num_players, hand=self.hand(seat),
                        hand_counts=self.hand_counts, uncalled_sets=tuple(self.uncalled_sets()),
                        legal_asks=asks, must_call=to_move and (force_call or self.must_call))

    def clone(self) -> FishState:
        other = FishState.__new__(FishState)
        other.params, other.initial_hands = self.params, self.initial_hands
        other.first_player = self.first_player
        other._hands = [set(h) for h in self._hands]
        other._holder = list(self._holder)
        other._set_team = list(self._set_team)
        other.call_order = list(self.call_order)
        other.events = list(self.events)
        other._current = self._current
        other.turn_passed_from = self.turn_passed_from
        return other

    def snapshot(self) -> tuple:
        """Everything that defines the state, as a hashable tuple (for tests and comparisons)."""
        hands = tuple(self.hand(s) for s in range(self.num_players))
        return (self.params, self.initial_hands, self.first_player, hands, self._current,
                self.turn_passed_from, tuple(self._set_team), tuple(self.call_order),
                tuple(self.events))

    def __str__(self) -> str:
        hands = " | ".join(" ".join(card_code(c) for c in self.hand(s)) or "-"
                           for s in range(self.num_players))
        s0, s1 = self.score
        return f"to move: seat {self._current}; score {s0}-{s1}; hands {hands}"


def _is_index(value: object, size: int) -> bool | np.bool_:
    return isinstance(value, (int, np.integer)) and 0 <= value < size


def _card_text(card) -> str:
    return card_code(card) if _is_index(card, len(CARD_CODES)) else repr(card)


def _check_hands(params: Params, hands: Sequence[Iterable[int]]) -> tuple[tuple[int, ...], ...]:
    """The deal as a tuple of card-id tuples per seat (sorted); ValueError saying what is wrong."""
    n, size, deck = params.num_players, hand_size(params.num_players), num_cards(params.num_players)
    dealt = tuple(tuple(int(c) for c in h) for h in hands)
    if len(dealt) != n:
        raise ValueError(f"a {n}-player deal has {n} hands, got {len(dealt)}")
    sizes = [len(h) for h in dealt]
    if sizes != [size] * n:
        raise ValueError(f"each of the {n} players is dealt {size} cards, got hand sizes {sizes}")
    seen: dict[int, int] = {}
    for seat, hand in enumerate(dealt):
        for card in hand:
            if not 0 <= card < deck:
                raise ValueError(f"seat {seat} was dealt card id {card}, "
                                 f"not in the {n}-player deck (ids 0..{deck - 1})")
            if card in seen:
                raise ValueError(f"card {card_code(card)} was dealt twice "
                                 f"(seats {seen[card]} and {seat})")
            seen[card] = seat
    return tuple(tuple(sorted(h)) for h in dealt)
