"""Illegal chance actions in python_gongzhu and python_tiny_crew (scrofazero/openspiel/).

Invariant: at a chance node every action that is not one of chance_outcomes() (out of range,
negative, an already dealt card, a seat whose hand is full) raises ValueError (-1, OpenSpiel's
kInvalidAction, gets OpenSpiel's own SpielError) and leaves the
state exactly as it was: its string, history, move number and legal outcomes, and the deal still
completes normally afterwards.
"""

import pytest

pyspiel = pytest.importorskip("pyspiel")
import scrofazero.openspiel  # noqa: E402,F401  (registers the games)

# Deal prefixes reaching several kinds of chance node. Tiny Crew: the first card, seat 0 full
# after four cards (a fifth for it is illegal), two seats full (only seat 2 left), the last card.
# Gongzhu: the first card, some cards dealt, one card left.
NODES = {
    "python_tiny_crew": [[], [0, 0, 0, 0], [0, 1, 0, 1, 0, 1, 0, 1], [0, 1, 2] * 3 + [0, 1]],
    "python_gongzhu": [[], [7, 0, 51, 13], list(range(51))],
}


def _snapshot(state):
    return (str(state), state.history(), state.move_number(), state.chance_outcomes(),
            state.is_chance_node())


@pytest.mark.parametrize("name", sorted(NODES))
def test_every_illegal_chance_action_raises_and_leaves_the_state_unchanged(name):
    game = pyspiel.load_game(name)
    top = max(game.num_distinct_actions(), game.max_chance_outcomes())
    for prefix in NODES[name]:
        state = game.new_initial_state()
        for action in prefix:
            state.apply_action(action)
        assert state.is_chance_node()
        before = _snapshot(state)
        legal = {a for a, _ in state.chance_outcomes()}
        illegal = [a for a in range(-3, top + 4) if a not in legal]
        assert illegal
        for action in illegal:
            if action == -1:
                # -1 is OpenSpiel's kInvalidAction: its C++ side refuses it before our code runs
                with pytest.raises(pyspiel.SpielError, match="kInvalidAction"):
                    state.apply_action(action)
            else:
                with pytest.raises(ValueError, match=f"chance action {action} "):
                    state.apply_action(action)
            assert _snapshot(state) == before, (name, prefix, action)
        # the state still works: the deal completes and play starts
        while state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        assert not state.is_terminal() and state.legal_actions()
