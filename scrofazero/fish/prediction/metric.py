"""Hand-prediction accuracy of fish.belief on recorded games (the figure docs/rules.md section 19
quotes: about 35%
for the original LSTM). After the deal and after every event but the last, every observer seat
predicts the holder of each in-play card it does not know for certain as its most likely other
seat (ties: lowest seat), scored against the true holder at that moment.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scrofazero.fish.belief.evidence import AskModel
from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.games.fish.cards import num_cards, set_cards
from scrofazero.games.fish.events import Ask, Call, Event
from scrofazero.games.fish.transcripts import (
    parse_transcript,
    recording_params,
    recording_paths,
    replay,
)

_CERTAIN = 1.0 - 1e-9  # a probability this close to 1 is a certainty, not a prediction
LOG_FLOOR = 1e-6  # log-loss floor for a true holder given (almost) no probability
_TIE = 1e-12


@dataclass(frozen=True)
class RecordedGame:
    """A finished game as the predictor needs it. holders[t][card]: true seat before event t
    (holders[0]: after the deal), -1 once its set is called; the rule flags are the table's."""

    name: str
    num_players: int
    hands: tuple[tuple[int, ...], ...]
    events: tuple[Event, ...]
    holders: tuple[tuple[int, ...], ...]  # [T + 1][num_cards]
    ask_held_allowed: bool = False
    ask_needs_other: bool = True


def true_holders(num_players: int, hands: Sequence[Sequence[int]],
                 events: Sequence[Event]) -> tuple[tuple[int, ...], ...]:
    """[len(events) + 1][num_cards] seat holding each card before each event and at the end
    (-1 once its set is called), by replaying the events on the real deal."""
    holder = [-1] * num_cards(num_players)
    for seat, cards in enumerate(hands):
        for c in cards:
            holder[c] = seat
    history = [tuple(holder)]
    for event in events:
        if isinstance(event, Ask) and event.success:
            holder[event.card] = event.asker
        elif isinstance(event, Call):
            for c in set_cards(event.set_id):
                holder[c] = -1
        history.append(tuple(holder))
    return tuple(history)


def game_from_events(name: str, num_players: int, hands, events, **rules) -> RecordedGame:
    """A RecordedGame from a deal and its events (an engine game, say); rules: the ask flags."""
    hands = tuple(tuple(int(c) for c in h) for h in hands)
    events = tuple(events)
    return RecordedGame(name, num_players, hands, events,
                        true_holders(num_players, hands, events), **rules)


def load_recordings(paths=None, tolerant: bool = True) -> tuple[list[RecordedGame], list]:
    """Recorded games (default: the shipped human games, fish.transcripts) replayed under the
    rules humans play by (fish.transcripts.recording_params); tolerant mode repairs or skips
    slips, which are returned as TranscriptIssues beside the games, so every file loads."""

    games, issues = [], []
    for path in (recording_paths() if paths is None else paths):
        transcript = parse_transcript(path, tolerant=tolerant)
        params = recording_params(transcript.num_players)
        result = replay(transcript, params, tolerant=tolerant)
        events = tuple(step.event for step in result.steps)  # flags as applied, counts filled
        holders = (result.initial_state.holders,) + tuple(step.holders for step in result.steps)
        games.append(RecordedGame(Path(path).name, transcript.num_players, transcript.hands,
                                  events, holders, params.ask_held_allowed,
                                  params.ask_needs_other))
        issues += result.issues  # the parse's issues come first
    return games, issues


def predict_holders(probs: np.ndarray, observer: int, cards: Iterable[int]) -> dict[int, int]:
    """{card: predicted seat} for the given cards that are not certain: the most likely seat
    other than the observer, ties to the lowest seat. probs: [num_players, num_cards]."""
    out = {}
    for card in cards:
        column = probs[:, card].copy()
        if column.max() >= _CERTAIN:
            continue
        column[observer] = -1.0
        out[card] = int(np.flatnonzero(column >= column.max() - _TIE)[0])
    return out


def evaluate_game(game: RecordedGame, soft: float = 0.0, observers: Sequence[int] | None = None,
                  baseline: bool = False, model: AskModel | None = None,
                  stride: int = 1) -> dict:
    """{"accuracy", "predictions", "correct", "rejected", ...} over the game's observers
    (default: all seats); an accuracy is None when there was nothing to score (a game without
    events). rejected: events a tracker found impossible (skipped for that seat).
    accuracy_incl_certain: the same argmax scored over every in-play card outside the observer's
    hand, the cards it knows for certain included (the seed's metric). log_loss: mean -ln of the
    probability given to the true holder over the scored (uncertain) cards, each probability
    floored at LOG_FLOOR (zero_truth counts the floored ones). model: the behaviour-aware ask
    likelihood (belief_evidence.AskModel). stride: score every stride-th position only (the
    tracker still sees every event; for fitting)."""
    seats = range(game.num_players) if observers is None else observers
    predictions = correct = rejected = wide = wide_correct = zero_truth = 0
    loss = 0.0
    for seat in seats:
        tracker = BeliefTracker(game.num_players, seat, game.hands[seat], soft=soft,
                                ask_held_allowed=game.ask_held_allowed,
                                ask_needs_other=game.ask_needs_other, ask_evidence=not baseline,
                                model=model)
        fed = 0  # events the tracker has been given (or has rejected)
        for t in range(0, len(game.events), stride):
            rejected += _feed(tracker, game.events[fed:t])
            fed = t
            truth = game.holders[t]
            probs = tracker.probabilities()
            in_play = [c for c, holder in enumerate(truth) if holder >= 0]
            guesses = predict_holders(probs, seat, in_play)
            predictions += len(guesses)
            correct += sum(1 for card, guess in guesses.items() if truth[card] == guess)
            if guesses:
                cards = np.fromiter(guesses, np.int64)
                p_true = probs[np.asarray([truth[c] for c in cards]), cards]
                zero_truth += int((p_true < LOG_FLOOR).sum())
                loss -= float(np.log(np.maximum(p_true, LOG_FLOOR)).sum())
            # the wider count: every in-play card outside the observer's hand, certain or not
            others = [c for c in in_play if truth[c] != seat]
            best = np.delete(probs[:, others], seat, axis=0).argmax(axis=0)
            best = best + (best >= seat)  # back to seat numbers
            wide += len(others)
            wide_correct += int((best == np.asarray([truth[c] for c in others])).sum())
    return {"accuracy": _ratio(correct, predictions), "predictions": predictions,
            "correct": correct, "rejected": rejected,
            "accuracy_incl_certain": _ratio(wide_correct, wide),
            "predictions_incl_certain": wide, "correct_incl_certain": wide_correct,
            "log_loss": loss / predictions if predictions else None, "loss_sum": loss,
            "zero_truth": zero_truth}


def _feed(tracker: BeliefTracker, events) -> int:
    """Give the tracker these events (one count when possible); returns how many it rejected
    as impossible (a slip the rules allow but this tracker's rules do not: skipped)."""
    rejected = 0
    while events:
        before = len(tracker.events)
        try:
            tracker.extend(events)
            return rejected
        except ValueError:  # extend kept the events before the culprit
            rejected += 1
            events = events[len(tracker.events) - before + 1:]
    return rejected


def _ratio(hits: int, total: int) -> float | None:
    """hits / total, or None when nothing was scored: JSON null, where NaN would be invalid
    JSON and 0.0 a false score."""
    return hits / total if total else None


def evaluate_predictions(games: Sequence[RecordedGame], soft: float = 0.0,
                         observers: Sequence[int] | None = None, baseline: bool = False,
                         model: AskModel | None = None, stride: int = 1) -> dict:
    """Accuracy over all games: {"accuracy", "predictions", "correct", "per_file": {name:
    evaluate_game(...)}}; accuracy None when no game had a prediction. baseline=True: plain
    counting (own hand, transfers, calls and hand counts; no ask evidence), the floor the logic
    has to beat."""
    per_file = {game.name: evaluate_game(game, soft, observers, baseline, model, stride)
                for game in games}
    return summarize(per_file)


def summarize(per_file: dict) -> dict:
    """The totals over per-file results of evaluate_game."""
    predictions = sum(r["predictions"] for r in per_file.values())
    correct = sum(r["correct"] for r in per_file.values())
    wide = sum(r["predictions_incl_certain"] for r in per_file.values())
    wide_correct = sum(r["correct_incl_certain"] for r in per_file.values())
    loss = sum(r["loss_sum"] for r in per_file.values())
    return {"accuracy": _ratio(correct, predictions), "predictions": predictions,
            "correct": correct, "per_file": per_file,
            "accuracy_incl_certain": _ratio(wide_correct, wide),
            "log_loss": loss / predictions if predictions else None,
            "zero_truth": sum(r["zero_truth"] for r in per_file.values())}
