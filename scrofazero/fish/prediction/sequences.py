"""The predictor's inputs: one observer's view of one game in observer-relative seats
(`ObserverSequence`), padded batches of them (`collate`), and the game's symmetries
(`Symmetry`: relabellings of sets, cards within a set and seats that keep the teams; used to
augment training and in the equivariance tests)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from scrofazero.fish.prediction.data import GameArrays
from scrofazero.fish.prediction.metric import RecordedGame, game_from_events
from scrofazero.games.fish.cards import num_cards, num_sets
from scrofazero.games.fish.events import Ask, Call, Event


@dataclass
class ObserverSequence:
    """One observer's inputs and labels, seats relative to the observer (k = (seat - o) % P).
    probs [T, P, C] float32; events [T, EVENT_COLUMNS] int16, row t = the event seen just before
    step t (row 0 is empty); target [T, C] int64 true relative holder (-1 out of play)."""

    num_players: int
    probs: np.ndarray
    events: np.ndarray
    target: np.ndarray


def relative_seats(num_players: int, observer: int) -> np.ndarray:
    """[P] absolute seat of each relative seat k: (observer + k) % P."""
    return (observer + np.arange(num_players)) % num_players


def observer_sequence(arrays: GameArrays, observer: int) -> ObserverSequence:
    """The observer's ObserverSequence from a game's arrays (all seats' beliefs, absolute
    seats)."""
    n = arrays.num_players
    order = relative_seats(n, observer)
    probs = arrays.probs[observer][:, order, :].astype(np.float32)
    events = np.full_like(arrays.events, -1)
    events[:, 0] = 0
    events[1:] = rotate_events(arrays.events[:-1], n, observer)
    holders = arrays.holders.astype(np.int64)
    target = np.where(holders >= 0, (holders - observer) % n, -1)
    return ObserverSequence(n, probs, events, target)


def rotate_events(rows: np.ndarray, num_players: int, observer: int) -> np.ndarray:
    """Event rows (predictor_data.encode_events) with seats made relative to `observer`."""
    out = rows.copy()
    for col in (1, 2, 6, 7, 8, 9, 10, 11):
        seats = out[:, col]
        out[:, col] = np.where(seats >= 0, (seats - observer) % num_players, seats)
    removed = out[:, 12:12 + num_players].copy()
    out[:, 12:12 + num_players] = removed[:, relative_seats(num_players, observer)]
    return out


@dataclass
class Batch:
    num_players: int
    probs: torch.Tensor  # [B, T, P, C] float32
    events: torch.Tensor  # [B, T, EVENT_COLUMNS] int64
    target: torch.Tensor  # [B, T, C] int64, -1 out of play or padding
    valid: torch.Tensor  # [B, T] bool


def collate(seqs: Sequence[ObserverSequence]) -> Batch:
    """Pads sequences of one table size to the longest (padding: empty columns, invalid)."""
    n = seqs[0].num_players
    if any(s.num_players != n for s in seqs):
        raise ValueError("a batch holds sequences of one table size")
    T = max(len(s.target) for s in seqs)
    B, C = len(seqs), seqs[0].probs.shape[2]
    probs = np.zeros((B, T, n, C), np.float32)
    events = np.full((B, T, seqs[0].events.shape[1]), -1, np.int64)
    events[:, :, 0] = 0
    target = np.full((B, T, C), -1, np.int64)
    valid = np.zeros((B, T), bool)
    for i, s in enumerate(seqs):
        L = len(s.target)
        probs[i, :L], events[i, :L], target[i, :L], valid[i, :L] = s.probs, s.events, s.target, True
    return Batch(n, torch.from_numpy(probs), torch.from_numpy(events), torch.from_numpy(target),
                 torch.from_numpy(valid))


@dataclass(frozen=True)
class Symmetry:
    """A relabelling of a game that keeps its rules and teams: set s -> set_perm[s]; card at
    position i of set s -> position card_perm[s][i] of set_perm[s]; seat -> seat_perm[seat]
    (seats stay within a team or all teams swap, so teammates stay teammates)."""

    set_perm: tuple
    card_perm: tuple
    seat_perm: tuple

    def card(self, c: int) -> int:
        s, i = divmod(int(c), 6)
        return self.set_perm[s] * 6 + self.card_perm[s][i]

    def seat(self, s: int) -> int:
        return self.seat_perm[int(s)] if s >= 0 else s

    def card_index(self, num_players: int) -> np.ndarray:
        """[C] new id of each card."""
        return np.array([self.card(c) for c in range(num_cards(num_players))])


def keeps_teams(seat_perm: Sequence[int]) -> bool:
    """True when the seat permutation maps teammates to teammates (seat parity is kept for
    every seat, or flipped for every seat)."""
    flips = {(int(new) - s) % 2 for s, new in enumerate(seat_perm)}
    return sorted(seat_perm) == list(range(len(seat_perm))) and len(flips) == 1


def random_symmetry(rng: np.random.Generator, num_players: int, swap_teams: bool = True
                    ) -> Symmetry:
    """A uniformly random team-keeping relabelling: sets, cards within each set, the seats of
    each team, and (with swap_teams) a coin flip that swaps the two teams."""
    S = num_sets(num_players)
    sets = tuple(int(x) for x in rng.permutation(S))
    cards = tuple(tuple(int(x) for x in rng.permutation(6)) for _ in range(S))
    seats = np.empty(num_players, np.int64)
    flip = int(swap_teams and rng.random() < 0.5)
    for team in (0, 1):
        mine = np.arange(team, num_players, 2)
        seats[mine] = rng.permutation(np.arange((team + flip) % 2, num_players, 2))
    return Symmetry(sets, cards, tuple(int(x) for x in seats))


def permute_event(event: Event, g: Symmetry) -> Event:
    if isinstance(event, Ask):
        return Ask(g.seat(event.asker), g.seat(event.target), g.card(event.card), event.success)
    removed = None
    if event.removed is not None:
        removed = [0] * len(event.removed)
        for seat, k in enumerate(event.removed):
            removed[g.seat(seat)] = k
        removed = tuple(removed)
    return Call(g.seat(event.caller), g.set_perm[event.set_id],
                tuple(sorted((g.card(c), g.seat(s)) for c, s in event.assignment)),
                event.correct, removed)


def permute_game(game: RecordedGame, g: Symmetry) -> RecordedGame:
    """The same game relabelled by g (hands, events and true holders)."""
    hands: list[tuple[int, ...]] = [()] * game.num_players
    for seat, hand in enumerate(game.hands):
        hands[g.seat(seat)] = tuple(sorted(g.card(c) for c in hand))
    return game_from_events(game.name, game.num_players, hands,
                            [permute_event(e, g) for e in game.events],
                            ask_held_allowed=game.ask_held_allowed,
                            ask_needs_other=game.ask_needs_other)


def permute_arrays(arrays: GameArrays, g: Symmetry) -> GameArrays:
    """The same relabelling on cached arrays (no tracker rerun): observers, seats and cards of
    the beliefs, the event rows and the holders."""
    n = arrays.num_players
    cards = g.card_index(n)
    seats = np.array([g.seat(s) for s in range(n)])
    probs = np.empty_like(arrays.probs)
    probs[np.ix_(seats, np.arange(probs.shape[1]), seats, cards)] = arrays.probs
    holders = np.full_like(arrays.holders, -1)
    holders[:, cards] = np.where(arrays.holders >= 0, seats[np.clip(arrays.holders, 0, None)], -1)
    ev = arrays.events.copy()
    for col in (1, 2, 6, 7, 8, 9, 10, 11):
        ev[:, col] = np.where(ev[:, col] >= 0, seats[np.clip(ev[:, col], 0, None)], ev[:, col])
    ev[:, 3] = np.where(ev[:, 3] >= 0, cards[np.clip(ev[:, 3], 0, None)], -1)
    ev[:, 5] = np.where(ev[:, 5] >= 0, np.array(g.set_perm)[np.clip(ev[:, 5], 0, None)], -1)
    for t in np.flatnonzero(arrays.events[:, 0] == 2):  # named seats follow their cards
        old_set = int(arrays.events[t, 5])
        named = np.empty(6, np.int64)
        for i in range(6):
            named[g.card_perm[old_set][i]] = seats[arrays.events[t, 6 + i]]
        ev[t, 6:12] = named
    removed = np.empty_like(arrays.events[:, 12:12 + n])
    removed[:, seats] = arrays.events[:, 12:12 + n]
    ev[:, 12:12 + n] = removed
    hands = np.empty_like(arrays.hands)
    for seat in range(n):
        hands[seats[seat]] = np.sort(cards[arrays.hands[seat]])
    return GameArrays(n, probs, ev, holders, hands, arrays.kinds, arrays.name, arrays.rejected)
