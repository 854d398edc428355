"""Learned Fish player: one small scorer shared by every candidate move.

The network never sees seat numbers or set ids. Each candidate move of the seat to move, an ask
(target, card) or a call (set, the belief's most likely allocation within the team), becomes one
feature vector (FEATURES) built from the seat's exact belief (fish/belief/tracker.py: P(seat
holds card now)) and public counts, all invariant under relabelling the sets, the cards within a
set and the seats within a team; the same MLP scores every vector, and the policy is the softmax
over the candidates (illegal and masked ones are never candidates). So one set of weights plays
6 and 8 players, and permuting sets or seats within teams permutes the scores (tested).

Hard rules around the network (never learned, so never unlearned):
- calls: a set whose every card is certainly with the team (the belief gives each card's holder
  probability 1) is called at once, between any two moves where the rules allow it, else on the
  player's turn. Otherwise a call is made only when the player must call (no legal ask, or the
  match runner's move cap), or when every ask left is a certain miss (then its team certainly
  holds the sets it asks in) and the call is right with probability >= CALL_THRESHOLD; below
  that it hands the turn over with a certain miss that never failed, and calls only when none
  is left. The network picks which set; each call names the allocation most likely right under
  the exact belief (FishMind.best_allocation, exact probabilities of the likeliest few);
- asks: an ask that already failed in public, with the card not moved since (the same
  information state), is never repeated; nor is an ask the belief says cannot hit, except to
  hand the turn over as above.

`FishMind` is one seat's bookkeeping (the lazily updated exact tracker, public failed asks,
`FishMind` is one seat's bookkeeping (the lazily updated exact tracker, public failed asks,
sets won, what the seat has shown) and builds the candidates; `LearnedPlayer` (registered as
`learned` in fish/players/roster.py) plays from it with a `Scorer` (fish/players/scorer.py);
fish/learning/ trains the scorer by self-play through the same FishMind, so training and play
make the same decisions.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.fish.players.scorer import (
    DEFAULT_MODEL,
    FEATURES,
    NUM_FEATURES,
    Scorer,
    load_scorer,
)
from scrofazero.games.fish.cards import hand_size, num_sets, set_cards, set_of, team_of, teammates
from scrofazero.games.fish.events import Ask, Call, Event
from scrofazero.games.fish.rules import AskMove, CallMove, FishView, Move

EPS = 1e-9
CALL_THRESHOLD = 0.9  # a call not forced by the rules is made only when right this surely
ALLOCATIONS = 8  # allocations of a set scored exactly when choosing what to call
_F = {name: i for i, name in enumerate(FEATURES)}


@dataclass
class LearnedSettings:
    """The learned player's settings (`game.player.learned`; its scorer file is evaluate.py's
    checkpoint=)."""

    greedy: bool = True  # play the best-scored move (false: draw from the softmax)


class _LazyBelief:
    """The exact tracker, recounted only when asked (one count for all events since)."""

    def __init__(self, num_players, seat, hand, ask_held_allowed, ask_needs_other):
        self.tracker = BeliefTracker(num_players, seat, hand, ask_held_allowed=ask_held_allowed,
                                     ask_needs_other=ask_needs_other)
        self.pending: list[Event] = []
        self._probs: np.ndarray | None = None

    def observe(self, event: Event) -> None:
        self.pending.append(event)
        self._probs = None

    def probabilities(self) -> np.ndarray:
        if self.pending:
            self.tracker.extend(self.pending)
            self.pending = []
        if self._probs is None:
            self._probs = self.tracker.probabilities()
        return self._probs


class FishMind:
    """One seat's public bookkeeping and its candidate moves with their features."""

    def __init__(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
                 ask_needs_other: bool = True):
        self.num_players, self.seat = num_players, seat
        self.belief = _LazyBelief(num_players, seat, hand, ask_held_allowed, ask_needs_other)
        self.failed: set[tuple[int, int]] = set()  # (target, card) asks that failed in public
        self.shown: set[int] = set()  # sets of which a card reached me in public
        self.asked: set[int] = set()  # sets I asked in
        self.sets_won = [0, 0]  # by team
        self._allocations: dict = {}  # (events seen, set) -> best_allocation

    def observe(self, event: Event) -> None:
        self.belief.observe(event)
        self._allocations.clear()
        if isinstance(event, Ask):
            if event.success:
                # the card moved: asks for it are news again
                self.failed = {(t, c) for t, c in self.failed if c != event.card}
                if event.asker == self.seat:
                    self.shown.add(set_of(event.card))
            else:
                self.failed.add((event.target, event.card))
            if event.asker == self.seat:
                self.asked.add(set_of(event.card))
        elif isinstance(event, Call):
            team = team_of(event.caller) if event.correct else 1 - team_of(event.caller)
            self.sets_won[team] += 1
            self.failed = {(t, c) for t, c in self.failed if set_of(c) != event.set_id}

    def certain_call(self, view: FishView) -> CallMove | None:
        """A call of the first uncalled set whose every card is certainly with my team."""
        probs = self.belief.probabilities()
        team = list(teammates(self.seat, self.num_players))
        for set_id in view.uncalled_sets:
            cards = list(set_cards(set_id))
            sub = probs[team][:, cards]
            if (sub.max(axis=0) >= 1.0 - EPS).all():
                seats = [team[int(i)] for i in sub.argmax(axis=0)]
                return CallMove(set_id, tuple(zip(cards, seats)))
        return None

    def best_allocation(self, set_id: int) -> tuple[CallMove, float]:
        """The allocation of the set within the team most likely to be right under the exact
        belief, and that probability. Each card may go to the teammates that may hold it; the
        ALLOCATIONS likeliest allocations by the product of the cards' marginals are scored
        exactly: the share of the consistent deals in which the set lies as named (a correct
        call of it added to a copy of the tracker). The per-card argmax alone can name more
        cards for a seat than it holds."""
        key = (len(self.belief.tracker.events) + len(self.belief.pending), set_id)
        if key in self._allocations:
            return self._allocations[key]
        probs = self.belief.probabilities()
        team = list(teammates(self.seat, self.num_players))
        cards = list(set_cards(set_id))
        options = []
        for card in cards:
            seats = sorted((s for s in team if probs[s, card] > EPS),
                           key=lambda s: -probs[s, card])
            options.append(seats or [max(team, key=lambda s: probs[s, card])])
        combos = sorted(itertools.product(*options),
                        key=lambda combo: -np.prod([probs[s, c] for s, c in zip(combo, cards)]))
        if len(combos) == 1 and all(probs[s, c] >= 1.0 - EPS for s, c in zip(combos[0], cards)):
            best = (combos[0], 1.0)
        else:
            tracker = self.belief.tracker
            base = tracker.log_num_consistent_deals()
            best = (combos[0], -1.0)
            for combo in combos[:ALLOCATIONS]:
                removed = [0] * self.num_players
                for seat in combo:
                    removed[seat] += 1
                event = Call(caller=self.seat, set_id=set_id, assignment=tuple(zip(cards, combo)),
                             correct=True, removed=tuple(removed))
                copy = tracker.clone()
                try:
                    copy.update(event)
                    p = min(1.0, math.exp(copy.log_num_consistent_deals() - base))
                except ValueError:  # no consistent deal has the set so
                    p = 0.0
                if p > best[1] + 1e-12:
                    best = (combo, p)
        result = (CallMove(set_id, tuple(zip(cards, (int(s) for s in best[0])))),
                  max(best[1], 0.0))
        self._allocations[key] = result
        return result

    def candidates(self, view: FishView) -> tuple[list[Move], np.ndarray, str]:
        """(moves, features [K, F], kind) for the seat to move, certain calls aside (see
        certain_call). kind "ask": the asks that may hit and never failed. When every ask is a
        certain miss, its team certainly holds the sets it asks in: "call_team_set", the calls
        of those sets right with probability >= CALL_THRESHOLD, else "pass", the asks not
        failed before (a certain miss hands the turn over: a set held whole by the team cannot
        be taken meanwhile), else the calls of those sets anyway. "call": it must call, every
        uncalled set. Calls name the set's best_allocation."""
        probs = self.belief.probabilities()
        stats = _Stats(self, view, probs)
        if not view.must_call and view.legal_asks:
            asks = [(t, c) for t, c in view.legal_asks
                    if (t, c) not in self.failed and probs[t, c] > EPS]
            if asks:
                return [AskMove(t, c) for t, c in asks], stats.ask_rows(asks), "ask"
            team_sets = [k for k in view.uncalled_sets if stats.team_exp[k] >= 6 - 1e-6]
            moves, rows = stats.call_rows(team_sets)
            sure = [i for i, row in enumerate(rows) if row[_F["p_success"]] >= CALL_THRESHOLD]
            if sure:
                return [moves[i] for i in sure], rows[sure], "call_team_set"
            passes = [(t, c) for t, c in view.legal_asks if (t, c) not in self.failed]
            if passes:
                return [AskMove(t, c) for t, c in passes], stats.ask_rows(passes), "pass"
            if team_sets:
                return moves, rows, "call_team_set"
        moves, rows = stats.call_rows(list(view.uncalled_sets))
        return moves, rows, "call"


class _Stats:
    """Per-set and per-seat quantities of one decision, and the candidate rows built from them."""

    def __init__(self, mind: FishMind, view: FishView, probs: np.ndarray):
        n, seat = mind.num_players, mind.seat
        self.probs, self.mind, self.n = probs, mind, n
        self.team = list(teammates(seat, n))
        self.mates = [s for s in self.team if s != seat]
        self.opps = [s for s in range(n) if team_of(s) != team_of(seat)]
        self.certain = probs >= 1.0 - EPS  # [P, C]
        sets = num_sets(n)
        per_set = probs.reshape(n, sets, 6)
        cert_set = self.certain.reshape(n, sets, 6)
        self.team_exp = per_set[self.team].sum(axis=(0, 2))  # [S]
        self.team_cert = cert_set[self.team].any(axis=0).sum(axis=1)  # [S]
        self.known = cert_set.any(axis=0).sum(axis=1)  # [S]
        self.seat_exp = per_set.sum(axis=2)  # [P, S]
        self.seat_cert = cert_set.sum(axis=2)  # [P, S]
        hand = set(view.hand)
        self.mine = np.zeros(sets)
        for c in hand:
            self.mine[set_of(c)] += 1
        hs = hand_size(n)
        counts = np.array(view.hand_counts, dtype=float)
        half = n // 2
        g = np.zeros(NUM_FEATURES)
        g[_F["my_hand"]] = counts[seat] / hs
        g[_F["team_cards"]] = counts[self.team].sum() / (half * hs)
        g[_F["opponent_cards"]] = counts[self.opps].sum() / (half * hs)
        g[_F["teammates_with_cards"]] = (counts[self.team] > 0).sum() / half
        g[_F["opponents_with_cards"]] = (counts[self.opps] > 0).sum() / half
        g[_F["sets_left"]] = len(view.uncalled_sets) / sets
        g[_F["sets_mine"]] = mind.sets_won[team_of(seat)] / sets
        g[_F["sets_theirs"]] = mind.sets_won[1 - team_of(seat)] / sets
        g[_F["eight_players"]] = float(n == 8)
        self.globals, self.counts, self.hs, self.hand = g, counts, hs, hand

    def _set_part(self, rows: np.ndarray, sets: np.ndarray) -> None:
        m = self.mind
        rows[:, _F["mine_in_set"]] = self.mine[sets] / 6
        rows[:, _F["team_expected_in_set"]] = self.team_exp[sets] / 6
        rows[:, _F["team_certain_in_set"]] = self.team_cert[sets] / 6
        rows[:, _F["known_in_set"]] = self.known[sets] / 6
        rows[:, _F["set_shown"]] = [float(k in m.shown) for k in sets]
        rows[:, _F["set_asked"]] = [float(k in m.asked) for k in sets]

    def ask_rows(self, asks: list[tuple[int, int]]) -> np.ndarray:
        probs = self.probs
        t = np.array([a[0] for a in asks])
        c = np.array([a[1] for a in asks])
        k = c // 6
        rows = np.tile(self.globals, (len(asks), 1))
        p = probs[t, c]
        rows[:, _F["p_success"]] = p
        rows[:, _F["certain"]] = p >= 1.0 - EPS
        opp_p = probs[self.opps][:, c]  # [O, K]
        rows[:, _F["card_with_opponents"]] = opp_p.sum(axis=0)
        rows[:, _F["card_with_teammates"]] = probs[self.mates][:, c].sum(axis=0) \
            if self.mates else 0.0
        rows[:, _F["card_best_other_opponent"]] = np.max(
            np.where(np.array(self.opps)[:, None] == t[None, :], 0.0, opp_p), axis=0)
        rows[:, _F["card_possible_holders"]] = (probs[:, c] > EPS).sum(axis=0) / self.n
        self._set_part(rows, k)
        rows[:, _F["target_expected_in_set"]] = self.seat_exp[t, k] / 6
        rows[:, _F["target_certain_in_set"]] = self.seat_cert[t, k] / 6
        rows[:, _F["target_hand"]] = self.counts[t] / self.hs
        lacks = []
        for target, card in asks:
            wanted = [x for x in set_cards(set_of(card)) if x not in self.hand]
            lacks.append(sum(probs[target, x] <= EPS for x in wanted) / max(len(wanted), 1))
        rows[:, _F["target_lacks_set"]] = lacks
        return rows.astype(np.float32)

    def call_rows(self, sets: list[int]) -> tuple[list[Move], np.ndarray]:
        """Calls of `sets`, each with its best allocation (FishMind.best_allocation)."""
        best = [self.mind.best_allocation(k) for k in sets]
        moves: list[Move] = [move for move, _ in best]
        rows = np.tile(self.globals, (len(sets), 1))
        p = np.array([p for _, p in best])
        rows[:, _F["p_success"]] = p
        rows[:, _F["is_call"]] = 1.0
        rows[:, _F["certain"]] = p >= 1.0 - EPS
        if sets:
            self._set_part(rows, np.array(sets))
        return moves, rows.astype(np.float32)


def choose(scores: np.ndarray, rng: np.random.Generator | None) -> int:
    """argmax (rng None: the first best) or a draw from softmax(scores)."""
    if rng is None:
        return int(np.argmax(scores))
    z = scores - scores.max()
    p = np.exp(z)
    p /= p.sum()
    return int(rng.choice(len(p), p=p))


class LearnedPlayer:
    """The scorer's player (a players/protocol.FishPlayer). `model`: a Scorer, else loaded from
    `checkpoint` (a model file or training checkpoint; None: DEFAULT_MODEL). greedy: the best
    scored move (default), else a draw from the softmax seeded by `seed`. `stats`: an optional
    dict shared by the players of a match, counting calls and right calls ("calls", "right",
    "certain_calls", "certain_right")."""

    def __init__(self, checkpoint: str | None = None, model: Scorer | None = None,
                 seed: int = 0, greedy: bool = True, stats: dict | None = None, **_):
        self.net = model if model is not None else load_scorer(checkpoint or DEFAULT_MODEL)
        self.rng = None if greedy else np.random.default_rng(seed)
        self.stats = stats

    def reset(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
              ask_needs_other: bool = True) -> None:
        self.seat, self.num_players = seat, num_players
        self.mind = FishMind(num_players, seat, hand, ask_held_allowed, ask_needs_other)
        self._pending_call: str | None = None

    def observe(self, event: Event) -> None:
        if isinstance(event, Call) and event.caller == self.seat and self._pending_call \
                and self.stats is not None:
            self.stats["calls"] = self.stats.get("calls", 0) + 1
            self.stats["right"] = self.stats.get("right", 0) + int(event.correct)
            if self._pending_call == "certain":
                self.stats["certain_calls"] = self.stats.get("certain_calls", 0) + 1
                self.stats["certain_right"] = (self.stats.get("certain_right", 0)
                                               + int(event.correct))
        self._pending_call = None
        self.mind.observe(event)

    def belief(self) -> np.ndarray:
        return self.mind.belief.probabilities()

    def call_now(self, view: FishView) -> CallMove | None:
        move = self.mind.certain_call(view)
        self._pending_call = "certain" if move is not None else None
        return move

    def act(self, view: FishView) -> Move:
        move = self.mind.certain_call(view)
        if move is not None:
            self._pending_call = "certain"
            return move
        moves, rows, _ = self.mind.candidates(view)
        move = moves[choose(self.net.scores(rows), self.rng)]
        self._pending_call = "forced" if isinstance(move, CallMove) else None
        return move
