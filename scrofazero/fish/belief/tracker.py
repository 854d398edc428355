"""Exact belief over the hidden Fish hands from one seat's view (docs/rules.md section 19):
uniform over the initial deals consistent with the public events (belief_evidence), optionally
weighted by a soft ask likelihood. Sets are coupled only through seat capacities, so counts and
marginals are a DP over sets on the vector of remaining capacities (belief_fast); the brute-force
check is belief_reference.enumerate_consistent_deals (re-exported here)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scrofazero.fish.belief import fast
from scrofazero.fish.belief.evidence import (
    AskModel,
    AskRules,
    Evidence,
    Impossible,
    compile_evidence,
    describe,
)
from scrofazero.games.fish.cards import check_num_players, hand_size, num_cards, set_cards, set_of
from scrofazero.games.fish.events import Ask, Call, Event

_FACT = np.array([math.factorial(k) for k in range(60)], dtype=np.float64)
_CACHE_LIMIT = 512


@dataclass
class _Solution:
    initial: np.ndarray  # [P, C] P(card dealt to seat), exact 0/1 for known cards
    current: np.ndarray  # [P, C] P(card held by seat now), zero columns out of play
    log_total: float  # log of the (weighted) number of consistent initial deals
    evidence: Evidence


class BeliefTracker:
    """Belief of seat `observer` (dealt `hand`) over where every card is.

    ask_held_allowed: asks for a held card are legal (so a failed ask clears only the target).
    ask_needs_other: the asker holds a set card besides the asked one (False: the asked card may
    count, as in the recorded games; only matters with ask_held_allowed). soft: tempering
    exponent of the ask likelihood factor (h / (6 - h)) ** soft per ask, h = the asker's cards
    of the set (0: pure logic). ask_evidence=False ignores what asks say beyond transfers (plain
    counting, the baseline). The 1 / H part of the likelihood is dropped: with public counts H
    is the same in every deal. model: how people ask (belief_evidence.AskModel), likelihood
    factors per ask on top of the hard rules; still an exact count."""

    def __init__(self, num_players: int, observer: int, hand: Sequence[int], *,
                 ask_held_allowed: bool = False, soft: float = 0.0, ask_needs_other: bool = True,
                 ask_evidence: bool = True, model: AskModel | None = None):
        check_num_players(num_players)
        if not 0 <= observer < num_players:
            raise ValueError(f"observer must be a seat 0..{num_players - 1}, got {observer!r}")
        hand = tuple(sorted(int(c) for c in hand))
        deck = num_cards(num_players)
        if len(set(hand)) != hand_size(num_players) or not all(0 <= c < deck for c in hand):
            raise ValueError(f"the observer's hand must be {hand_size(num_players)} distinct card "
                             f"ids 0..{deck - 1}, got {hand}")
        if soft < 0:
            raise ValueError(f"soft must be >= 0, got {soft!r}")
        self.num_players, self.observer, self.hand = num_players, observer, hand
        self.soft = float(soft)
        self.rules = AskRules(held_allowed=bool(ask_held_allowed),
                              needs_other=bool(ask_needs_other), evidence=bool(ask_evidence),
                              model=model)
        self.events: list[Event] = []
        self._tables: dict = {}  # set-table cache: input key -> arrays
        self._solution = self._solve(self.events)

    def update(self, event: Event) -> None:
        """Adds a public event. ValueError (state unchanged) if no deal is consistent with it."""
        _check_event(event, self.num_players)
        events = self.events + [event]
        try:
            solution = self._solve(events)
        except Impossible as exc:
            reason = exc.reason if exc.index in (None, len(self.events)) else str(exc)
            raise ValueError(f"impossible event #{len(self.events)} ({describe(event)}) for "
                             f"observer {self.observer}: {reason}") from None
        self.events, self._solution = events, solution

    def extend(self, events) -> None:
        """Adds several events with one count (faster than update on each); on an impossible
        one, the events before it are kept and its ValueError is raised."""
        events = list(events)
        for event in events:
            _check_event(event, self.num_players)
        try:
            self._solution = self._solve(self.events + events)
            self.events = self.events + events
        except Impossible:
            for event in events:  # find and name the culprit
                self.update(event)

    def clone(self) -> BeliefTracker:
        """An independent tracker in the same state (sharing only the immutable table cache)."""
        other = BeliefTracker.__new__(BeliefTracker)
        other.__dict__.update(self.__dict__)
        other.events = list(self.events)
        return other

    def probabilities(self) -> np.ndarray:
        """[num_players, num_cards] P(card held by seat now); zero columns for cards out of play."""
        return self._solution.current.copy()

    def initial_probabilities(self) -> np.ndarray:
        """[num_players, num_cards] P(card was dealt to seat)."""
        return self._solution.initial.copy()

    def certain_holder(self, card: int, tol: float = 1e-9):
        """The seat holding `card` for certain (known or deduced); None if uncertain or out of
        play."""
        column = self._solution.current[:, card]
        seat = int(np.argmax(column))
        return seat if column[seat] >= 1.0 - tol else None

    def known(self, card: int) -> bool:
        """True when the observer knows where `card` is: a certain holder, or out of play."""
        called = self._solution.evidence.called
        return set_of(card) in called or self.certain_holder(card) is not None

    def hand_counts(self) -> np.ndarray:
        """[num_players] expected cards in hand (exact integers when counts are public)."""
        return self.probabilities().sum(axis=1)

    def num_consistent_deals(self) -> float:
        """Number of initial deals consistent with the events (weighted by the soft factors;
        may overflow to inf with large soft, see log_num_consistent_deals)."""
        log_total = self._solution.log_total
        return math.exp(log_total) if log_total < 709.0 else math.inf

    def log_num_consistent_deals(self) -> float:
        """Natural log of num_consistent_deals (finite for any soft)."""
        return self._solution.log_total

    def _solve(self, events) -> _Solution:
        ev = compile_evidence(self.num_players, self.observer, self.hand, events, self.rules)
        layout = _Layout(ev, self.num_players, self.observer)
        items, log_const = self._items(ev, layout)
        initial, total = _count(layout, items)
        if not total > 0:
            raise Impossible("no initial deal is consistent with the events")
        for card, seat in ev.init.items():
            initial[seat, card] = 1.0
        current = np.zeros_like(initial)
        for card in range(initial.shape[1]):
            if set_of(card) in ev.called:
                continue
            if card in ev.loc:
                current[ev.loc[card], card] = 1.0
            else:
                current[:, card] = initial[:, card]  # a free card never moved
        return _Solution(initial, current, math.log(total) + log_const, ev)

    def _items(self, ev: Evidence, layout: _Layout):
        """Splits the free cards into set tables, single cards with restricted seats and the pool
        of cards with no constraint at all; also the log of the constant factors (soft factors of
        known hands, table scales)."""
        items, log_const = [], 0.0
        for set_id, sev in enumerate(ev.sets):
            free = [c for c in set_cards(set_id) if c not in ev.init]
            masks = [layout.mask(ev.forbid.get(c, ())) for c in free]
            if 0 in masks:
                raise Impossible(f"card {free[masks.index(0)]} can be with no seat")
            soft = []
            for seat, known in sev.soft if self.soft > 0 else ():
                if seat in layout.pos and free:
                    soft.append((layout.pos[seat], known))
                elif known > 0:
                    log_const += math.log(fast.soft_factor(known, self.soft))
                else:  # only free cards could explain the ask, and the seat can hold none
                    raise Impossible(f"seat {seat} asked in set {set_id} without holding a card")
            likely = []
            for seat, known, cards, a, b in sev.likely:
                cards = [c for c in cards if c in free]
                if seat in layout.pos and cards:
                    likely.append((layout.pos[seat], known, sum(1 << free.index(c)
                                                                for c in cards), a, b))
                else:  # the seat can hold none of the free cards: the factor is a constant
                    factor = a if known > 0 else b
                    if factor == 0.0:
                        raise Impossible(f"seat {seat} could not have asked as it did in set "
                                         f"{set_id} under the ask model")
                    log_const += math.log(factor)
            if sev.atleast or sev.not_named or sev.exact is not None or soft or likely:
                item, log_scale = self._table(layout, set_id, free, masks, sev, soft, likely)
                items.append(item)
                log_const += log_scale
            else:
                for card, mask in zip(free, masks):
                    items.append(("pool", card) if mask == layout.full else ("card", card, mask))
        return items, log_const

    def _table(self, layout, set_id, free, masks, sev, soft, likely):
        """(("table", free cards, (dvec [n, A], didx [n], weight [n], card_weight [n, f, A])),
        log scale) for the rows that fit the capacities, weights divided by their maximum (soft
        factors multiply up past float range); the capacity-free part is cached."""
        key = _table_key(layout, free, masks, sev, soft, self.soft) + (tuple(sorted(likely)),)
        if key not in self._tables:
            if len(self._tables) >= _CACHE_LIMIT:
                self._tables.clear()
            args = _table_args(layout, free, masks, sev, soft)
            self._tables[key] = fast.set_table(*args, self.soft, _slots(len(free), layout),
                                                      *_likely_args(likely))
        dvec, weight, card_weight = self._tables[key]
        fits = np.all(dvec < layout.radix, axis=1)
        if not fits.any() or not weight[fits].max() > 0:
            raise Impossible(f"no seats have room for set {set_id}'s cards as required")
        dvec, weight, card_weight = dvec[fits], weight[fits], card_weight[fits]
        scale = weight.max()
        item = ("table", tuple(free), (dvec, dvec @ layout.strides, weight / scale,
                                       card_weight / scale))
        return item, math.log(scale)


def _check_event(event: Event, num_players: int) -> None:
    deck = num_cards(num_players)
    if isinstance(event, Ask):
        seats, cards = (event.asker, event.target), (event.card,)
    elif isinstance(event, Call):
        seats = (event.caller,) + tuple(seat for _, seat in event.assignment)
        cards = tuple(card for card, _ in event.assignment)
        if event.removed is not None and len(event.removed) != num_players:
            raise ValueError(f"{event!r}: removed must give one count per seat")
    else:
        raise ValueError(f"not a Fish event: {event!r}")
    if not all(isinstance(s, (int, np.integer)) and 0 <= s < num_players for s in seats):
        raise ValueError(f"{event!r}: seats must be 0..{num_players - 1}")
    if not all(isinstance(c, (int, np.integer)) and 0 <= c < deck for c in cards):
        raise ValueError(f"{event!r}: cards must be ids 0..{deck - 1}")


class _Layout:
    """Active seats (not the observer, some free cards) and the mixed-radix box of capacities."""

    def __init__(self, ev: Evidence, num_players: int, observer: int):
        self.num_players, self.num_cards = num_players, len(ev.sets) * 6
        self.seats = [s for s in range(num_players) if s != observer and ev.capacity[s] > 0]
        self.pos = {seat: i for i, seat in enumerate(self.seats)}
        self.radix = np.array([ev.capacity[s] + 1 for s in self.seats], np.int64)  # [A]
        self.strides = np.ones(len(self.seats), np.int64)  # [A]
        for i in range(1, len(self.seats)):
            self.strides[i] = self.strides[i - 1] * self.radix[i - 1]
        self.box = int(np.prod(self.radix))
        self.start = int(np.dot(self.radix - 1, self.strides))
        self.full = (1 << len(self.seats)) - 1

    def mask(self, forbidden) -> int:
        return sum(1 << i for i, seat in enumerate(self.seats) if seat not in forbidden)


def _slots(f: int, layout: _Layout) -> int:
    return math.comb(f + len(layout.seats) - 1, max(len(layout.seats) - 1, 0)) if f else 1


def _table_key(layout, free, masks, sev, soft, exponent):
    atleast = tuple(sorted((seat, tuple(free.index(c) for c in sorted(cards)))
                           for seat, cards in sev.atleast))
    named = tuple(tuple(sorted((free.index(c), seat) for c, seat in nn.items()))
                  for nn in sev.not_named)
    return (tuple(layout.seats), tuple(masks), atleast, named, sev.exact, tuple(sorted(soft)),
            exponent)


def _table_args(layout: _Layout, free, masks, sev, soft):
    """numba arrays for fast.set_table (see its docstring)."""
    pos, num_seats = layout.pos, len(layout.seats)
    al_seat, al_cards = [], []
    for seat, cards in sev.atleast:
        if seat not in pos:
            raise Impossible(f"seat {seat} must hold a card of the set but has no unknown cards")
        al_seat.append(pos[seat])
        al_cards.append(sum(1 << free.index(c) for c in cards))
    nn_cards, nn_seat = [], []
    for named in sev.not_named:
        if any(seat not in pos for seat in named.values()):
            continue  # a named seat that cannot hold free cards: "not all as named" holds anyway
        nn_cards.append(sum(1 << free.index(c) for c in named))
        row = [-1] * len(free)
        for c, seat in named.items():
            row[free.index(c)] = pos[seat]
        nn_seat.append(row)
    exact = [-1] * num_seats
    if sev.exact is not None:
        if any(n for seat, n in enumerate(sev.exact) if n and seat not in pos):
            raise Impossible("a seat with no unknown cards gave up an unknown card")
        exact = [sev.exact[seat] for seat in layout.seats]
    as_int = lambda xs: np.array(xs, np.int64)  # noqa: E731
    return (as_int(masks), num_seats, as_int(al_seat), as_int(al_cards),
            as_int(nn_cards), np.array(nn_seat, np.int64).reshape(len(nn_cards), len(free)),
            as_int(exact), as_int([s for s, _ in soft]), as_int([k for _, k in soft]))


def _likely_args(likely):
    """numba arrays of the AskModel factors for fast.set_table."""
    return (np.array([e[0] for e in likely], np.int64),
            np.array([e[1] for e in likely], np.int64),
            np.array([e[2] for e in likely], np.int64),
            np.array([e[3] for e in likely], np.float64),
            np.array([e[4] for e in likely], np.float64))


def _count(layout: _Layout, items):
    """Runs the DP; returns ([P, C] marginals of the free cards' initial holders, total)."""
    tables = sorted((it for it in items if it[0] == "table"), key=lambda it: -len(it[2][1]))
    singles = [it for it in items if it[0] == "card"]
    pool = [it[1] for it in items if it[0] == "pool"]
    num_seats = len(layout.seats)
    rows_d, rows_idx, rows_w, offsets = [], [], [], [0]
    for _, _, (dvec, didx, weight, _) in tables:
        rows_d.append(dvec)
        rows_idx.append(didx)
        rows_w.append(weight)
        offsets.append(offsets[-1] + len(didx))
    eye = np.eye(num_seats, dtype=np.int64)
    for _, _, mask in singles:
        seats = [p for p in range(num_seats) if (mask >> p) & 1]
        rows_d.append(eye[seats])
        rows_idx.append(layout.strides[seats])
        rows_w.append(np.ones(len(seats)))
        offsets.append(offsets[-1] + len(seats))
    dvec = np.concatenate(rows_d) if rows_d else np.zeros((0, num_seats), np.int64)  # [n, A]
    didx = np.concatenate(rows_idx) if rows_idx else np.zeros(0, np.int64)  # [n]
    weight = np.concatenate(rows_w) if rows_w else np.zeros(0)  # [n]
    scratch = (np.zeros(layout.box), np.zeros(layout.box), np.zeros(layout.box),
               np.zeros(layout.box, np.int64))
    total, rest, pool_sum = fast.count_deals(
        layout.radix, layout.strides, layout.start, np.array(offsets, np.int64), dvec, didx,
        weight, len(pool), _FACT, scratch)
    initial = np.zeros((layout.num_players, layout.num_cards))  # [P, C]
    if not total > 0:
        return initial, 0.0
    seats = np.array(layout.seats, np.int64)
    for k, (_, free, (_, _, _, card_weight)) in enumerate(tables):
        share = np.einsum("sip,s->ip", card_weight, rest[offsets[k]:offsets[k + 1]]) / total
        initial[seats[:, None], np.array(free, np.int64)[None, :]] = share.T  # [A, f]
    for k, (_, card, mask) in enumerate(singles, start=len(tables)):
        for row, p in enumerate(p for p in range(num_seats) if (mask >> p) & 1):
            initial[seats[p], card] = rest[offsets[k] + row] / total
    for card in pool:
        initial[seats, card] = pool_sum / total
    return initial, total
