"""Test helper: every position (all 53 plies) of a few seeded random games."""

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
