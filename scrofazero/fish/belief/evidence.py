"""What one seat's public history says about the initial deal (fish.belief's first stage). A
card is known once its initial holder is: the observer's own, the target of its first successful
ask (it never moved before), or its seat in a correct call. The rest are free: never moved, so
still with their initial holder; `compile_evidence` replays the events along the known
trajectories, checks them, and leaves per-set constraints on the free cards."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from scrofazero.games.fish.cards import card_code, hand_size, num_sets, set_cards, set_of
from scrofazero.games.fish.events import Ask, Call, Event

OUT = -1  # location of a card whose set has been called


class Impossible(Exception):
    """No initial deal is consistent with the events: `reason` says why, `index` names the
    event (None when only the count as a whole shows it)."""

    def __init__(self, reason: str, index: int | None = None, event: Event | None = None):
        where = "" if index is None else f"event #{index} ({describe(event)}): "
        super().__init__(where + reason)
        self.reason, self.index = reason, index


@dataclass
class SetEvidence:
    """Constraints on one set's free cards (all within the set).
    atleast: {(seat, cards)}: seat holds at least one of cards (an ask by seat, not already
    explained by a card it was known to hold). not_named: [{card: seat}]: not every listed card
    is with its seat (a wrong call). exact: free cards of the set per seat (a wrong call with
    public counts), or None. soft: [(seat, known)] per ask by seat: known = set cards it was
    known to hold then (the rest of h is its free cards of the set). likely: [(seat, known,
    cards, a, b)] per behaviour factor of an ask (AskModel): the deal's weight is multiplied by
    a if the seat held at least one card then (known of them known, or one of the free `cards`),
    else by b."""

    atleast: set = field(default_factory=set)
    not_named: list = field(default_factory=list)
    exact: tuple[int, ...] | None = None
    soft: list = field(default_factory=list)
    likely: list = field(default_factory=list)


@dataclass
class Evidence:
    """init[card]: known initial holder (absent: free). loc[card]: known card's current seat or
    OUT. forbid[card]: seats a free card was never with. capacity[seat]: free cards dealt to it.
    called: sets out of play."""

    init: dict
    loc: dict
    forbid: dict
    capacity: list
    called: set
    sets: list


def describe(event: Event | None) -> str:
    if isinstance(event, Ask):
        outcome = "got it" if event.success else "did not get it"
        return (f"seat {event.asker} asked seat {event.target} for {card_code(event.card)} "
                f"({outcome})")
    if isinstance(event, Call):
        outcome = "correct" if event.correct else "wrong"
        return f"seat {event.caller} called set {event.set_id} ({outcome})"
    return repr(event)


@dataclass(frozen=True)
class AskModel:
    """How people ask, as likelihood factors of each ask given the deal (behaviour-aware belief).

    Each field is a probability-like weight w: deals where the behaviour holds get weight w,
    the others 1 - w; w = 1 makes it a hard rule, w = 0.5 makes the ask say nothing about it.
    other: the asker holds another card of the asked set (the ask-needs-another-card rule).
    lacks: the asker does not hold the asked card (the no-trolling rule).
    target: the target holds another card of the asked set (people ask whom they expect to hold
    the set). The hard rules of AskRules still apply on top.
    """

    other: float = 0.5
    lacks: float = 0.5
    target: float = 0.5

    def __post_init__(self):
        for name in ("other", "lacks", "target"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"AskModel.{name} must be in [0, 1], got {value!r}")

    @property
    def neutral(self) -> bool:
        return self.other == self.lacks == self.target == 0.5


@dataclass(frozen=True)
class AskRules:
    """held_allowed: one may ask for a card one holds (no "no trolling"); needs_other: the asker
    holds a card of the set besides the asked one (else the asked card itself may count; only
    matters with held_allowed); evidence=False ignores what asks say beyond transfers (the
    plain counting baseline); model: the behaviour factors of every ask (None: none)."""

    held_allowed: bool = False
    needs_other: bool = True
    evidence: bool = True
    model: AskModel | None = None


def compile_evidence(num_players: int, observer: int, hand: Sequence[int], events: Sequence[Event],
                     rules: AskRules = AskRules()) -> Evidence:
    """Raises Impossible (naming the event) when the known cards contradict an event."""
    init = _initial_holders(num_players, observer, hand, events)
    capacity = [hand_size(num_players)] * num_players
    for seat in init.values():
        capacity[seat] -= 1
    for seat, room in enumerate(capacity):
        if room < 0 or (seat == observer and room != 0):
            raise Impossible(f"seat {seat} would have been dealt more than "
                             f"{hand_size(num_players)} cards")
    ev = Evidence(init=init, loc=dict(init), forbid={}, capacity=capacity, called=set(),
                  sets=[SetEvidence() for _ in range(num_sets(num_players))])
    for i, event in enumerate(events):
        try:
            if isinstance(event, Ask):
                _apply_ask(ev, event, observer, rules)
            elif isinstance(event, Call):
                _apply_call(ev, event, observer)
            else:
                raise Impossible(f"not a Fish event: {event!r}")
        except Impossible as exc:
            raise Impossible(exc.reason, i, event) from None
    return ev


def _initial_holders(num_players, observer, hand, events) -> dict:
    """Known initial holders: the observer's hand, the target of each card's first successful
    ask, the named seat of a never-moved card in a correct call."""
    init = {int(c): observer for c in hand}
    moved = set()
    for i, event in enumerate(events):
        if isinstance(event, Ask) and event.success:
            card = event.card
            if card not in moved:
                moved.add(card)
                if init.get(card, event.target) != event.target:
                    raise Impossible(f"that card was with seat {init[card]} from the deal", i,
                                     event)
                init[card] = event.target
        elif isinstance(event, Call) and event.correct:
            for card, seat in event.assignment:
                if card not in moved:
                    if init.get(card, seat) != seat:
                        raise Impossible(f"{card_code(card)} was with seat {init[card]} from "
                                         "the deal", i, event)
                    init[card] = seat
    return init


def _apply_ask(ev: Evidence, event: Ask, observer: int, rules: AskRules) -> None:
    asker, target, card = event.asker, event.target, event.card
    set_id = set_of(card)
    if set_id in ev.called:
        raise Impossible("that set has already been called")
    # Cards of the set that entitle the asker to ask (without trolling the asked card is not
    # held, so "another card" and "a card" say the same).
    needs_other = rules.needs_other or not rules.held_allowed
    entitling = [c for c in set_cards(set_id) if c != card or not needs_other]
    known_with_asker = [c for c in set_cards(set_id) if ev.loc.get(c) == asker]
    if rules.evidence:
        if not any(c in entitling for c in known_with_asker):
            # Nothing known explains the ask, so one of the asker's free cards of the set does.
            free = frozenset(c for c in entitling if c not in ev.init)
            if asker == observer or not free:
                other = "other " if needs_other else ""
                raise Impossible(f"the asker held no {other}card of that set")
            ev.sets[set_id].atleast.add((asker, free))
        ev.sets[set_id].soft.append((asker, len(known_with_asker)))
        if rules.model is not None and not rules.model.neutral:
            _add_behaviour(ev, event, rules.model)
    if event.success:
        if ev.loc[card] != target:
            raise Impossible(f"that card was with seat {ev.loc[card]}, not the target")
        ev.loc[card] = asker
        return
    if card in ev.loc:
        if ev.loc[card] == target:
            raise Impossible("the target held that card")
        if ev.loc[card] == asker and not rules.held_allowed:
            raise Impossible("the asker held that card (no trolling)")
    elif rules.evidence:
        seats = ev.forbid.setdefault(card, set())
        seats.add(target)
        if not rules.held_allowed:
            seats.add(asker)


def _add_behaviour(ev: Evidence, event: Ask, model: AskModel) -> None:
    """The AskModel factors of one ask, on the cards' places just before it."""
    asker, target, card = event.asker, event.target, event.card
    others = [c for c in set_cards(set_of(card)) if c != card]
    free_others = frozenset(c for c in others if c not in ev.init)
    likely = ev.sets[set_of(card)].likely
    for seat, weight in ((asker, model.other), (target, model.target)):
        if weight != 0.5:
            known = sum(1 for c in others if ev.loc.get(c) == seat)
            likely.append((seat, known, free_others, weight, 1.0 - weight))
    if model.lacks != 0.5:  # "holds the asked card" is the condition: weights swap
        known = 1 if ev.loc.get(card) == asker else 0
        free = frozenset((card,)) if card not in ev.init else frozenset()
        likely.append((asker, known, free, 1.0 - model.lacks, model.lacks))


def _apply_call(ev: Evidence, event: Call, observer: int) -> None:
    set_id = event.set_id
    if set_id in ev.called or not 0 <= set_id < len(ev.sets):
        raise Impossible("that set is not in play")
    named = dict(event.assignment)
    if sorted(named) != list(set_cards(set_id)):
        raise Impossible("a call must place each of the set's 6 cards once")
    cards = list(set_cards(set_id))
    free = [c for c in cards if c not in ev.init]
    if event.correct:
        wrong = [c for c in cards if ev.loc[c] != named[c]]
        if wrong:
            raise Impossible(f"{card_code(wrong[0])} was with seat {ev.loc[wrong[0]]}, not as "
                             "named")
    else:
        if all(ev.loc[c] == named[c] for c in cards if c in ev.init):
            if not free:
                raise Impossible("every card was where named, yet the call is marked wrong")
            ev.sets[set_id].not_named.append({c: named[c] for c in free})
        if event.removed is not None:
            ev.sets[set_id].exact = _free_counts(ev, event, cards, free, observer)
    for c in cards:
        if c in ev.loc:
            ev.loc[c] = OUT
    ev.called.add(set_id)


def _free_counts(ev: Evidence, event: Call, cards, free, observer) -> tuple[int, ...]:
    """Free cards of the set per seat, from the public counts of cards given up."""
    counts = []
    assert event.removed is not None  # the caller's condition
    for seat, removed in enumerate(event.removed):
        known = sum(1 for c in cards if ev.loc.get(c) == seat)
        n = removed - known
        if n < 0 or (seat == observer and n != 0):
            raise Impossible(f"seat {seat} gave up {removed} cards of the set, but {known} are "
                             "known to have been with it")
        counts.append(n)
    if sum(counts) != len(free):
        raise Impossible(f"the counts given up leave {sum(counts)} unknown cards of the set, "
                         f"not {len(free)}")
    return tuple(counts)

