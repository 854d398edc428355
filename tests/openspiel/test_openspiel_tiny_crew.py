"""python_tiny_crew for OpenSpiel (scrofazero/openspiel/tiny_crew.py).

Invariants: importing scrofazero.openspiel registers the game and pyspiel.random_sim_test
passes for both leader rules; the chance nodes reach every deal exactly once with probability
1/34650 (the product of the chance probabilities along a deal, and their count); play agrees
with TinyCrewState; OpenSpiel's expected_game_score.policy_value on a dealt state equals our
exact value of the uniform policy; its external-sampling MCCFR runs and its average policy,
read back through key_from_info_string, evaluates exactly with our tools; the information state
string is exactly our compiled key; bad parameters are named.
"""

import math
import random

import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")
import scrofazero.openspiel  # noqa: E402,F401
from scrofazero.games.tiny_crew.rules import Params, TinyCrewState  # noqa: E402
from scrofazero.openspiel.tiny_crew import key_from_info_string  # noqa: E402
from scrofazero.tiny_crew import fast  # noqa: E402
from scrofazero.tiny_crew.exact import Setting, TabularPolicy, deals_table  # noqa: E402


def deal(state, owners):
    for seat in owners:
        state.apply_action(int(seat))
    return state


@pytest.mark.parametrize("params", [{}, {"leader": "captain", "t1": 2, "t2": 0}])
def test_random_sim(params):
    game = pyspiel.load_game("python_tiny_crew", params)
    pyspiel.random_sim_test(game, num_sims=30, serialize=False, verbose=False)


def test_each_deal_once_with_equal_probability():
    game = pyspiel.load_game("python_tiny_crew")
    rng = np.random.default_rng(0)
    for owners in deals_table()[rng.choice(34650, 50, replace=False)]:
        state, prob = game.new_initial_state(), 1.0
        for seat in owners:
            outcomes = dict(state.chance_outcomes())
            prob *= outcomes[int(seat)]
            state.apply_action(int(seat))
        assert prob == pytest.approx(1 / 34650)
    # Counting the chance tree's leaves: multinomial(12; 4, 4, 4).
    assert math.factorial(12) // math.factorial(4) ** 3 == 34650 == len(deals_table())


def test_play_and_keys_agree_with_rules():
    game = pyspiel.load_game("python_tiny_crew", {"leader": "captain"})
    rng = random.Random(1)
    for owners in deals_table()[:: 3000]:
        state = deal(game.new_initial_state(), owners)
        ref = TinyCrewState(owners, Params(leader="captain"))
        row = np.zeros(fast.ROW, dtype=np.int64)
        fast.start_row(owners.astype(np.int64), int(owners[11]), 0, 1, row)
        while not state.is_terminal():
            p = state.current_player()
            assert p == ref.current_player and state.legal_actions() == ref.legal_actions()
            assert key_from_info_string(state.information_state_string(p)) == fast.info_key(row)
            card = rng.choice(ref.legal_actions())
            state.apply_action(card)
            ref.apply(card)
            nxt = np.zeros_like(row)
            fast.step(row, card, nxt)
            row = nxt
        assert state.returns() == ref.returns()


def test_policy_value_on_a_dealt_state_matches_exact_tools():
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import expected_game_score

    game = pyspiel.load_game("python_tiny_crew")
    uniform = os_policy.UniformRandomPolicy(game)
    for index in (0, 777, 20000):
        state = deal(game.new_initial_state(), deals_table()[index])
        value = expected_game_score.policy_value(state, [uniform] * 3)
        ours = Setting(Params(), deals=[index]).evaluate(TabularPolicy())
        assert value == pytest.approx([ours] * 3)


def test_mccfr_runs_and_its_policy_evaluates_exactly():
    from open_spiel.python.algorithms import external_sampling_mccfr as es

    from scrofazero.tiny_crew.mccfr import mccfr_to_tabular

    game = pyspiel.load_game("python_tiny_crew")
    solver = es.ExternalSamplingSolver(game, es.AverageType.SIMPLE)
    for _ in range(30):
        solver.iteration()
    policy = mccfr_to_tabular(solver)
    assert len(policy) == len(solver._infostates) - sum(
        1 for k in solver._infostates if "dealt" in k)
    setting = Setting(Params(), deals=np.arange(0, 34650, 500))
    value = setting.evaluate(policy)
    assert 0.0 <= value <= 1.0
    # Rows are distributions over legal cards.
    assert np.allclose(policy.probs.sum(axis=1), 1.0)


def test_bad_parameters_are_named():
    with pytest.raises(Exception, match="leader"):
        pyspiel.load_game("python_tiny_crew", {"leader": "dealer"})
    with pytest.raises(Exception, match="t2"):
        pyspiel.load_game("python_tiny_crew", {"t2": 5})
