"""A plain minimax over the rules engine: the slow, obviously right reference of the exact
endgame (scrofazero/agents/endgame.py). Every terminal is scored by GongzhuState.returns."""

from __future__ import annotations

from scrofazero.games.gongzhu.rules import GongzhuState


def minimax(state: GongzhuState) -> int:
    """Team 0's final difference under perfect play by both teams, by brute force."""
    if state.is_terminal():
        return state.returns()[0]
    values = []
    for card in state.legal_actions():
        child = state.clone()
        child.apply(card)
        values.append(minimax(child))
    return max(values) if state.current_player % 2 == 0 else min(values)


def reference_card_values(state: GongzhuState) -> list[int]:
    """Each legal card's minimax value from the mover's seat, in legal_actions order."""
    sign = 1 if state.current_player % 2 == 0 else -1
    out = []
    for card in state.legal_actions():
        child = state.clone()
        child.apply(card)
        out.append(sign * minimax(child))
    return out
