"""Fish players: random-legal and a logic player built on the exact belief tracker.

A player sees only its own view (its hand, the public hand counts, the public events it is told
about) and answers `act` on its turn and `call_now` between moves (calls at any time). The match
runner (fish/match.py) owns the engine; players never touch it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.games.fish.cards import set_cards, set_of, team_of, teammates
from scrofazero.games.fish.events import Ask, Event
from scrofazero.games.fish.rules import AskMove, CallMove, FishView, Move
from scrofazero.settings import Fraction, NonNegative


@dataclass
class RandomSettings:
    """The random player's settings (`game.player.random`)."""

    call_prob: Fraction = 0.05  # chance of a random call on its turn


@dataclass
class LogicSettings:
    """The logic players' settings (`game.player.logic`; logic_open takes them too, and never
    hides, so hide_margin does nothing there)."""

    soft: NonNegative = 0.0  # its tracker's soft ask evidence (0: pure logic)
    # hit probability it may give up to ask in a set it has already shown
    hide_margin: Fraction = 0.0


class RandomPlayer:
    """Asks a uniformly random legal ask; on its turn calls a random uncalled set with
    probability `call_prob` (naming random teammates that hold cards), and always when it must.
    Never calls out of turn."""

    def __init__(self, seed: int = 0, call_prob: float = 0.05, **_):
        if not 0.0 <= call_prob <= 1.0:
            raise ValueError(f"call_prob must be in [0, 1], got {call_prob!r}")
        self.rng = np.random.default_rng(seed)
        self.call_prob = call_prob

    def reset(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
              ask_needs_other: bool = True) -> None:
        self.seat = seat

    def observe(self, event: Event) -> None:
        pass

    def call_now(self, view: FishView) -> CallMove | None:
        return None

    def belief(self) -> None:
        return None  # it keeps none

    def act(self, view: FishView) -> Move:
        if view.must_call or not view.legal_asks or self.rng.random() < self.call_prob:
            set_id = int(self.rng.choice(view.uncalled_sets))
            seats = [s for s in teammates(view.seat, view.num_players) if view.hand_counts[s]]
            seats = seats or list(teammates(view.seat, view.num_players))
            picks = self.rng.choice(seats, size=6)
            return CallMove(set_id, tuple(zip(set_cards(set_id), (int(s) for s in picks))))
        target, card = view.legal_asks[int(self.rng.integers(len(view.legal_asks)))]
        return AskMove(target, card)


class LogicPlayer:
    """Plays from the exact belief of its seat (fish/belief/tracker.py):

    - calls a set as soon as every card of it is certainly with its team (at any time when the
      rules allow, else on its turn); when it must call, the set whose most likely allocation
      is most probable (product of marginals, its team's seats only);
    - otherwise asks for the card most likely to be with the target (a hit keeps the turn);
      with `hide`, among asks within `hide_margin` of the best hit probability (default: only
      asks as likely as the best, so hiding never costs a hit) it prefers a set
      in which a card already reached it in public (asking then tells the table nothing new),
      then the likelier hit, then the set its team holds most of, then the lowest (target,
      card). `hide=False` ("logic_open") takes the likeliest hit outright (ties within `tie`
      by the same later keys), to measure what hiding is worth.
    """

    def __init__(self, seed: int = 0, soft: float = 0.0, tie: float = 1e-9, hide: bool = True,
                 hide_margin: float = 0.0, **_):
        self.soft, self.tie, self.hide = float(soft), float(tie), bool(hide)
        self.hide_margin = float(hide_margin)

    def reset(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
              ask_needs_other: bool = True) -> None:
        """A new game: the tracker must know the table's ask rules to read asks right."""
        self.seat, self.num_players = seat, num_players
        self.tracker = BeliefTracker(num_players, seat, hand, ask_held_allowed=ask_held_allowed,
                                     ask_needs_other=ask_needs_other, soft=self.soft)
        self.public_holdings: set[int] = set()  # own cards the table has seen arrive

    def observe(self, event: Event) -> None:
        self.tracker.update(event)
        if isinstance(event, Ask) and event.success and event.asker == self.seat:
            self.public_holdings.add(event.card)

    def belief(self) -> np.ndarray:
        return self.tracker.probabilities()

    def call_now(self, view: FishView) -> CallMove | None:
        return self.certain_call(view, self.tracker.probabilities())

    def certain_call(self, view: FishView, probs: np.ndarray) -> CallMove | None:
        """A call of the first set whose every card is certainly with this team. probs [P, C]."""
        for set_id in view.uncalled_sets:
            cards = list(set_cards(set_id))
            holders = probs[:, cards].argmax(axis=0)
            certain = probs[holders, cards] >= 1.0 - 1e-9
            if certain.all() and all(team_of(int(h)) == team_of(self.seat) for h in holders):
                return CallMove(set_id, tuple(zip(cards, (int(h) for h in holders))))
        return None

    def act(self, view: FishView) -> Move:
        probs = self.tracker.probabilities()  # [P, C]
        call = self.first_call(view, probs)
        return call if call is not None else self.choose_ask(view, probs)

    def first_call(self, view: FishView, probs: np.ndarray) -> CallMove | None:
        """What comes before any ask: a set certainly with the team is called; when the seat
        must call (or has no legal ask), the likeliest allocation; else None."""
        certain = self.certain_call(view, probs)
        if certain is not None:
            return certain
        if view.must_call or not view.legal_asks:
            return self.likeliest_call(view, probs)
        return None

    def choose_ask(self, view: FishView, probs: np.ndarray) -> Move:
        """The logic player's move once no call comes first (see act)."""
        hits = np.array([probs[t, c] for t, c in view.legal_asks])
        best = hits.max()
        if best <= self.tie:
            # every ask is a certain miss: hand the turn over only if no set can be called
            return self.likeliest_call(view, probs) if self.team_holds_a_set(view, probs) \
                else AskMove(*view.legal_asks[0])
        team = list(teammates(self.seat, self.num_players))
        margin = max(self.hide_margin, self.tie) if self.hide else self.tie
        candidates = [i for i in np.flatnonzero(hits >= best - margin)]

        def preference(i: int | np.integer) -> tuple:
            target, card = view.legal_asks[i]
            # the ask tells the table "I hold a card of this set": news unless a card of it
            # reached me publicly
            revealing = self.hide and not any(
                c in self.public_holdings and set_of(c) == set_of(card) for c in view.hand)
            team_mass = probs[team][:, list(set_cards(set_of(card)))].sum()
            return (revealing, -round(hits[i] / self.tie), -team_mass, target, card)

        return AskMove(*view.legal_asks[min(candidates, key=preference)])

    def team_holds_a_set(self, view: FishView, probs: np.ndarray) -> bool:
        team = list(teammates(self.seat, self.num_players))
        return any(probs[team][:, list(set_cards(s))].sum() > 6 - 1e-6 for s in view.uncalled_sets)

    def likeliest_call(self, view: FishView, probs: np.ndarray) -> CallMove:
        team = list(teammates(self.seat, self.num_players))
        best, best_p = None, -1.0
        for set_id in view.uncalled_sets:
            cards = list(set_cards(set_id))
            sub = probs[team][:, cards]  # [T, 6]
            seats = [team[int(i)] for i in sub.argmax(axis=0)]
            p = float(np.prod(sub.max(axis=0)))
            if p > best_p:
                best, best_p = CallMove(set_id, tuple(zip(cards, seats))), p
        assert best is not None  # a game in play has a set left to call
        return best
