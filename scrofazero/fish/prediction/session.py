"""The learned predictor at prediction time: its probabilities over one observer's sequence or
game (`predict_sequence`, `predict_game`), a tracker-like session that takes public events one
at a time (`HandPredictor`) and the game so far at once (`predict`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.fish.prediction.data import GameArrays, encode_events
from scrofazero.fish.prediction.network import PredictorNet
from scrofazero.fish.prediction.sequences import ObserverSequence, observer_sequence, relative_seats
from scrofazero.games.fish.cards import hand_size, num_cards
from scrofazero.games.fish.events import Ask, Event


def predict_sequence(model: PredictorNet, seq: ObserverSequence) -> np.ndarray:
    """[T, P, C] the model's probabilities at every step of one observer's sequence (relative
    seats, as the sequence)."""
    with torch.no_grad():
        probs, _ = model(torch.from_numpy(seq.probs)[None],
                         torch.from_numpy(seq.events.astype(np.int64))[None])
    return probs[0].numpy()


def predict_game(model: PredictorNet, arrays: GameArrays, observer: int) -> np.ndarray:
    """[T, P, C] the model's probabilities before every event, absolute seats."""
    rel = predict_sequence(model, observer_sequence(arrays, observer))
    out = np.empty_like(rel)
    out[:, relative_seats(arrays.num_players, observer), :] = rel
    return out


_NO_EVENT = Ask(0, 1, 0, False)  # the placeholder last row of a session's sequence (never read)


class HandPredictor:
    """The learned predictor as a tracker-like session for seat `observer` (dealt `hand`):
    update(event) adds a public event, probabilities() gives [P, C] P(card held by seat now),
    absolute seats, like BeliefTracker.probabilities(). The rule flags default to the ones the
    model was trained with (the recordings' rules); its exact tracker is `self.tracker`. Each
    probabilities() call after an update reruns the model over the whole history (cheap)."""

    def __init__(self, model: PredictorNet, num_players: int, observer: int, hand: Sequence[int],
                 *, ask_held_allowed: bool | None = None,
                 ask_needs_other: bool | None = None):
        cfg = model.cfg
        self.model, self.num_players, self.observer = model, num_players, observer
        self.tracker = BeliefTracker(
            num_players, observer, hand,
            ask_held_allowed=cfg.ask_held_allowed if ask_held_allowed is None else ask_held_allowed,
            ask_needs_other=cfg.ask_needs_other if ask_needs_other is None else ask_needs_other)
        self.events: list[Event] = []
        self._probs = [self.tracker.probabilities()]  # before each step
        self._cache: np.ndarray | None = None

    def update(self, event: Event) -> None:
        """Adds a public event (ValueError, state unchanged, if the tracker finds it
        impossible)."""
        self.tracker.update(event)
        self.events.append(event)
        self._probs.append(self.tracker.probabilities())
        self._cache = None

    def probabilities(self) -> np.ndarray:
        if self._cache is None:
            n, T = self.num_players, len(self._probs)
            beliefs = np.zeros((n, T, n, num_cards(n)), np.float32)  # only the observer's read
            beliefs[self.observer] = np.stack(self._probs)
            arrays = GameArrays(n, beliefs, encode_events(self.events + [_NO_EVENT], n),
                                np.zeros((T, num_cards(n)), np.int8),
                                np.zeros((n, hand_size(n)), np.int8))
            self._cache = predict_game(self.model, arrays, self.observer)[-1].astype(np.float64)
        return self._cache.copy()


def predict(model: PredictorNet, num_players: int, observer: int, hand: Sequence[int],
            events: Sequence[Event], **rules) -> np.ndarray:
    """[P, C] the model's P(card held by seat now) for `observer` after `events` (the game so
    far), like BeliefTracker(...).probabilities() after the same updates."""
    session = HandPredictor(model, num_players, observer, hand, **rules)
    for event in events:
        session.update(event)
    return session.probabilities()
