"""Slow, obviously right reference for fish.belief: enumerate every initial deal that agrees with
the observer's hand and replay the events on it, checking each against the rules. Only for small
positions (a dozen unknown cards); the tests compare the fast tracker with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import factorial

import numpy as np

from scrofazero.games.fish.cards import hand_size, num_cards, set_cards, set_of
from scrofazero.games.fish.events import Ask, Call, Event


def enumerate_consistent_deals(num_players: int, observer: int, hand: Sequence[int],
                               events: Sequence[Event], *, ask_held_allowed: bool = False,
                               ask_needs_other: bool = True, soft: float = 0.0,
                               limit: int = 200_000, model=None):
    """[(deal, weight)]: deal[card] = seat it was dealt to, weight = product over asks of
    (h / max(6 - h, 1)) ** soft (h = the asker's cards of that set then; 1 when soft == 0),
    for every deal consistent with all events. A card that had never moved is pinned to the
    target of its first successful ask or to its seat in a correct call, which only skips
    deals the replay would reject; ValueError if more than `limit` candidate deals remain.
    model: a belief_evidence.AskModel whose factors multiply the weight (see replay_weight)."""
    size, deck = hand_size(num_players), num_cards(num_players)
    deal = [-1] * deck
    for card in hand:
        deal[card] = observer
    moved = set()
    for event in events:
        if isinstance(event, Ask) and event.success:
            if event.card not in moved and deal[event.card] < 0:
                deal[event.card] = event.target
            moved.add(event.card)
        elif isinstance(event, Call) and event.correct:
            for card, seat in event.assignment:
                if card not in moved and deal[card] < 0:
                    deal[card] = seat
    room = [size - deal.count(seat) for seat in range(num_players)]
    room[observer] = 0
    unknown = [c for c in range(deck) if deal[c] < 0]
    if min(room) < 0 or sum(room) != len(unknown):
        return []
    if _multinomial(room) > limit:
        raise ValueError(f"{_multinomial(room)} candidate deals, over the limit {limit}")
    out = []
    for full in _fill(deal, unknown, room, 0):
        weight = replay_weight(num_players, full, events, ask_held_allowed, ask_needs_other, soft,
                               model)
        if weight > 0:
            out.append((tuple(full), weight))
    return out


def reference_probabilities(num_players: int, deals) -> tuple[np.ndarray, float]:
    """([num_players, num_cards] P(card dealt to seat), total weight) from the enumerated deals."""
    probs = np.zeros((num_players, num_cards(num_players)))
    total = 0.0
    for deal, weight in deals:
        probs[list(deal), range(len(deal))] += weight
        total += weight
    return probs / total, total


def _multinomial(room) -> int:
    out = factorial(sum(room))
    for r in room:
        out //= factorial(r)
    return out


def _fill(deal, unknown, room, i):
    if i == len(unknown):
        yield list(deal)
        return
    for seat, left in enumerate(room):
        if left:
            deal[unknown[i]], room[seat] = seat, left - 1
            yield from _fill(deal, unknown, room, i + 1)
            room[seat] = left
    deal[unknown[i]] = -1


def replay_weight(num_players: int, deal, events, ask_held_allowed: bool, ask_needs_other: bool,
                  soft: float, model=None) -> float:
    """Plays the events on the initial deal: 0 if one of them could not have happened, else
    the product of the soft ask factors and, with an AskModel, per ask: model.other if the
    asker holds another card of the set (else 1 - other), model.lacks if it does not hold the
    asked card (else 1 - lacks), model.target if the target holds another card of the set
    (else 1 - target); a weight of exactly 0.5 contributes no factor (as in the tracker)."""
    holder = list(deal)
    weight = 1.0
    for event in events:
        if isinstance(event, Ask):
            set_id, asker = set_of(event.card), event.asker
            if holder[event.card] < 0:
                return 0.0  # its set was called
            held = [c for c in set_cards(set_id) if holder[c] == asker]
            if not any(c != event.card or not ask_needs_other for c in held):
                return 0.0
            if holder[event.card] == asker and not ask_held_allowed:
                return 0.0
            if (holder[event.card] == event.target) != event.success:
                return 0.0
            if soft:
                weight *= (len(held) / max(6 - len(held), 1)) ** soft
            if model is not None:  # a weight of exactly 0.5 is no factor at all
                others = [c for c in set_cards(set_id) if c != event.card]
                has_other = any(holder[c] == asker for c in others)
                if model.other != 0.5:
                    weight *= model.other if has_other else 1.0 - model.other
                if model.lacks != 0.5:
                    weight *= 1.0 - model.lacks if holder[event.card] == asker else model.lacks
                has_other = any(holder[c] == event.target for c in others)
                if model.target != 0.5:
                    weight *= model.target if has_other else 1.0 - model.target
            if event.success:
                holder[event.card] = asker
        elif isinstance(event, Call):
            cards = list(set_cards(event.set_id))
            if holder[cards[0]] < 0:
                return 0.0
            right = all(holder[c] == seat for c, seat in event.assignment)
            if right != event.correct:
                return 0.0
            if event.removed is not None:
                counts = [sum(1 for c in cards if holder[c] == s) for s in range(num_players)]
                if list(event.removed) != counts:
                    return 0.0
            for c in cards:
                holder[c] = -1
    return weight
