"""A Fish player that asks like the recorded humans (`ImitationPlayer`), for the learned hand
predictor's simulated games (fish/prediction/data.py), never played in matches.

It picks among its legal asks (recording rules: a held card may be asked for) by a conditional
logit on a few public-and-own features of each ask (HABIT_FEATURES); the coefficients
DEFAULT_HABITS were fitted by `measure_habits` on the recorded asks, from each asker's true
hand and exact belief at that moment (the only thing taken from the recordings: seven numbers).
It calls like the logic player, and also calls a set its team certainly holds whole, as the
humans do. `measure_habits(games)`: those rates and the fit (on the recordings, or on simulated
games to check the imitation).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scrofazero.fish.players.logic import LogicPlayer
from scrofazero.games.fish.cards import num_sets, set_cards, set_of, teammates
from scrofazero.games.fish.events import Ask, Event
from scrofazero.games.fish.rules import AskMove, CallMove, FishView, Move

HABIT_FEATURES = ("p_hit", "impossible", "own_in_set", "held", "target_asked_set",
                  "same_target", "same_set")
"""Features of one candidate ask (target, card) of the asker: p_hit = its exact belief that the
target holds the card (0 for a held card); impossible = p_hit is 0 and the card is not held;
own_in_set = its other cards of the set; held = it holds the card; target_asked_set = the
target asked for a card of this set before (public); same_target / same_set = its ask just
before (the turn went on) was to this target / in this set."""

# Fitted by measure_habits on the six shipped recordings (579 asks, log-likelihood -2.66 per
# ask against -4.05 for a uniform choice among the legal asks):
# python -c "from scrofazero.fish.prediction.metric import load_recordings; from
#   scrofazero.fish.prediction.habits import measure_habits;
#   print(measure_habits(load_recordings()[0]))"
DEFAULT_HABITS = (4.52, -0.18, 0.40, -0.83, 1.31, 1.80, 2.52)


def ask_features(asks: Sequence[tuple[int, int]], probs: np.ndarray, hand,
                 asked_sets: Sequence[set], last_ask: tuple[int, int] | None) -> np.ndarray:
    """[len(asks), len(HABIT_FEATURES)] features of the candidate asks (target, card) of one
    asker: probs [P, C] its exact belief, hand its cards, asked_sets[seat] the sets seat has
    asked in (public), last_ask (target, set) of its ask just before, if the turn went on."""
    targets = np.fromiter((a[0] for a in asks), np.int64, len(asks))
    cards = np.fromiter((a[1] for a in asks), np.int64, len(asks))
    sets = cards // 6
    hand = set(int(c) for c in hand)
    held = np.fromiter((c in hand for c in cards.tolist()), bool, len(asks))
    per_set = np.zeros(num_sets(probs.shape[0]), np.int64)
    for card in hand:
        per_set[set_of(card)] += 1
    p_hit = np.where(held, 0.0, probs[targets, cards])
    out = np.zeros((len(asks), len(HABIT_FEATURES)))
    out[:, 0] = p_hit
    out[:, 1] = (p_hit <= 1e-12) & ~held
    out[:, 2] = per_set[sets] - held
    out[:, 3] = held
    out[:, 4] = [s in asked_sets[t] for t, s in zip(targets.tolist(), sets.tolist())]
    if last_ask is not None:
        out[:, 5] = targets == last_ask[0]
        out[:, 6] = sets == last_ask[1]
    return out



class ImitationPlayer(LogicPlayer):
    """Asks like the recorded humans: samples its ask from softmax(ask_features @ weights) over
    its legal asks (weights: DEFAULT_HABITS, each multiplied per game by exp(N(0, jitter)) so
    that the table holds a spread of habits); calls like the logic player (a set as soon as its
    team's allocation is certain, and, as the humans do, with its likeliest allocation one its
    team certainly holds whole; the likeliest allocation when it must)."""

    def __init__(self, seed: int = 0, habits: Sequence[float] = DEFAULT_HABITS,
                 jitter: float = 0.0, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rng = np.random.default_rng(seed)
        self.base = np.asarray(habits, np.float64)
        if self.base.shape != (len(HABIT_FEATURES),):
            raise ValueError(f"habits needs {len(HABIT_FEATURES)} weights, got {habits!r}")
        self.jitter = float(jitter)

    def reset(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
              ask_needs_other: bool = True) -> None:
        super().reset(num_players, seat, hand, ask_held_allowed, ask_needs_other)
        self.weights = self.base * np.exp(self.rng.normal(0.0, self.jitter, self.base.shape))
        self.asked_sets: list[set[int]] = [set() for _ in range(num_players)]
        self.last: Event | None = None

    def observe(self, event: Event) -> None:
        super().observe(event)
        if isinstance(event, Ask):
            self.asked_sets[event.asker].add(set_of(event.card))
        self.last = event

    def call_now(self, view: FishView) -> CallMove | None:
        probs = self.tracker.probabilities()
        return self.certain_call(view, probs) or self._team_call(view, probs)

    def _team_call(self, view: FishView, probs: np.ndarray) -> CallMove | None:
        """The likeliest allocation of the first set its team certainly holds whole (the humans
        call such sets at once, allocation known or not)."""
        team = list(teammates(self.seat, self.num_players))
        for set_id in view.uncalled_sets:
            cards = list(set_cards(set_id))
            if probs[team][:, cards].sum(axis=0).min() >= 1.0 - 1e-9:
                seats = probs[team][:, cards].argmax(axis=0)
                return CallMove(set_id, tuple(zip(cards, (team[int(i)] for i in seats))))
        return None

    def act(self, view: FishView) -> Move:
        probs = self.tracker.probabilities()
        call = self.certain_call(view, probs) or self._team_call(view, probs)
        if call is not None:
            return call
        if view.must_call or not view.legal_asks:
            return self.likeliest_call(view, probs)
        last = self.last
        last_ask = ((last.target, set_of(last.card)) if isinstance(last, Ask)
                    and last.asker == self.seat else None)
        f = ask_features(view.legal_asks, probs, view.hand, self.asked_sets, last_ask)
        scores = f @ self.weights
        weights = np.exp(scores - scores.max())
        pick = self.rng.choice(len(weights), p=weights / weights.sum())
        return AskMove(*view.legal_asks[int(pick)])
