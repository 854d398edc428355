"""Fish positions for tests: seeded engine games that move many cards, and hand-made deals."""

import numpy as np

from scrofazero.games.fish.cards import card_id, set_cards, teammates
from scrofazero.games.fish.rules import FishState, Params


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
