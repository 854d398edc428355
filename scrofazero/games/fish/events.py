"""Public events of a Fish game: what every player sees happen at the table.

The rules engine emits them, transcripts parse into them, and belief trackers consume them, so a
tracker never needs the engine or the hidden deal. Seats are ints, cards are ids (fish.cards).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Ask:
    """`asker` asked `target` for `card`; success: the card was handed over face up."""

    asker: int
    target: int
    card: int
    success: bool


@dataclass(frozen=True)
class Call:
    """`caller` called set `set_id` naming holders: assignment = ((card, seat), ...) for all 6
    cards of the set, seats on the caller's team. correct: the team held all six where named,
    so the set goes to the caller's team; else to the other team. Either way the six cards leave
    the game. removed[seat] = how many cards each seat gave up (known when hand counts are
    public; None when they are not)."""

    caller: int
    set_id: int
    assignment: tuple[tuple[int, int], ...]
    correct: bool
    removed: tuple[int, ...] | None = None


Event = Ask | Call
