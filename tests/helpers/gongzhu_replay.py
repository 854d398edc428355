"""A stored Gongzhu game (a dict from Records.game, or GET /api/games/ID) replayed on the rules
engine from its deal and moves alone, for tests that hold a record against the engine.

Every recorded move must be the move of the seat the engine has to play (else AssertionError).
"""

from __future__ import annotations

from scrofazero.games.gongzhu.cards import card_index
from scrofazero.games.gongzhu.rules import GongzhuState


def replayed(game: dict) -> GongzhuState:
    """The stored game replayed on the rules engine."""
    state = GongzhuState([card_index(c) for c in game["deal"].split()], leader=game["leader"])
    for move in game["moves"]:
        assert move["seat"] == state.current_player
        state.apply(card_index(move["card"]))
    return state


def replayed_team(game: dict) -> list[int]:
    """A finished stored hand's final team points (seats 0+2, seats 1+3), replayed."""
    state = replayed(game)
    assert state.is_terminal()
    scores = state.pile_scores()
    return [scores[0] + scores[2], scores[1] + scores[3]]
