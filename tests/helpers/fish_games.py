"""Fish for tests: seeded engine games that move many cards, hand-made deals, and a player
wrapper that checks every move."""

import numpy as np

from scrofazero.games.fish.cards import card_id, set_cards, team_of, teammates
from scrofazero.games.fish.events import Ask
from scrofazero.games.fish.rules import AskMove, CallMove, FishState, Params


def random_game(seed, num_players=8, p_hit=0.7, p_wrong=0.15, **params) -> FishState:
    """A seeded engine game that transfers many cards (asks hit with probability p_hit when
    some legal ask can), calls sets a team holds, and now and then makes a wrong call."""
    rng = np.random.default_rng(seed)
    state = FishState.deal(Params(num_players=num_players, **params), rng)
    while not state.is_terminal:
        me = state.current_player
        team = teammates(me, num_players)
        full = [s for s in state.uncalled_sets()
                if all(state.holder(c) in team for c in set_cards(s))]
        if state.must_call or (full and rng.random() < 0.5) or rng.random() < p_wrong * 0.1:
            if full and rng.random() > p_wrong:
                s = full[rng.integers(len(full))]
                state.call(me, s, [(c, state.holder(c)) for c in set_cards(s)])
            else:
                s = state.uncalled_sets()[rng.integers(len(state.uncalled_sets()))]
                state.call(me, s, [(c, team[rng.integers(len(team))]) for c in set_cards(s)])
            continue
        asks = state.legal_asks()
        hits = [a for a in asks if state.holder(a[1]) == a[0]]
        pick = hits if hits and rng.random() < p_hit else asks
        state.ask(*pick[rng.integers(len(pick))])
    return state


def deal_with(placed: dict, num_players: int = 6) -> list[list[int]]:
    """A deal with the cards in `placed` ({code: seat}) where given, the rest shuffled (fixed
    seed, so no seat happens to hold a whole set)."""
    hands = [[] for _ in range(num_players)]
    for code, seat in placed.items():
        hands[seat].append(card_id(code))
    rest = [c for c in range(54 if num_players == 6 else 48)
            if c not in {card_id(code) for code in placed}]
    np.random.default_rng(1).shuffle(rest)
    size = 9 if num_players == 6 else 6
    for seat in range(num_players):
        while len(hands[seat]) < size:
            hands[seat].append(rest.pop(0))
    return hands


class Checked:
    """Wraps a player: asserts every move it returns is legal in its view, and that an ask never
    repeats one of its own failed asks while the card has not moved since (unless every legal ask
    would). Counts its moves, its asks and the forced repeats."""

    def __init__(self, inner):
        self.inner, self.moves, self.asks, self.repeats_forced = inner, 0, 0, 0

    def reset(self, num_players, seat, hand, **kwargs):
        self.inner.reset(num_players, seat, hand, **kwargs)
        self.seat, self.failed, self.moved, self.t = seat, {}, {}, 0

    def observe(self, event):
        self.inner.observe(event)
        if isinstance(event, Ask):
            if event.success:
                self.moved[event.card] = self.t
            elif event.asker == self.seat:
                self.failed[(event.target, event.card)] = self.t
        self.t += 1

    def _repeat(self, ask):
        at = self.failed.get(ask)
        return at is not None and self.moved.get(ask[1], -1) < at

    def _check_call(self, view, move):
        assert isinstance(move, CallMove) and move.set_id in view.uncalled_sets
        assert sorted(c for c, _ in move.assignment) == list(set_cards(move.set_id))
        assert all(team_of(s) == team_of(view.seat) for _, s in move.assignment)
        self.moves += 1

    def call_now(self, view):
        move = self.inner.call_now(view)
        if move is not None:
            self._check_call(view, move)
        return move

    def act(self, view):
        move = self.inner.act(view)
        if isinstance(move, AskMove):
            assert not view.must_call and (move.target, move.card) in view.legal_asks
            self.moves += 1
            self.asks += 1
            if self._repeat((move.target, move.card)):
                assert all(self._repeat(a) for a in view.legal_asks), \
                    f"seat {self.seat} repeated its failed ask {move}"
                self.repeats_forced += 1
        else:
            self._check_call(view, move)
        return move
