"""Test helpers: positions of seeded random Gongzhu games."""

import random

from scrofazero.games.gongzhu.rules import GongzhuState


def random_positions(num_games: int, seed: int, deal_stride: int = 1000) -> list[GongzhuState]:
    """States after 0..52 random plies of `num_games` games (deal seeds seed*stride + g)."""
    rng = random.Random(seed)
    states = []
    for g in range(num_games):
        s = GongzhuState(seed=seed * deal_stride + g, leader=g % 4)
        while True:
            states.append(s.clone())
            if s.is_terminal():
                break
            s.apply(rng.choice(s.legal_actions()))
    return states


def random_position(seed: int, plies: int) -> GongzhuState:
    """The state after `plies` random plies of the game with deal seed `seed` (leader seed % 4)."""
    state = GongzhuState(seed=seed, leader=seed % 4)
    rng = random.Random(seed)
    for _ in range(plies):
        state.apply(rng.choice(state.legal_actions()))
    return state
