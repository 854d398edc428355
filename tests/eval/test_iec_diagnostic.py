"""Belief-quality diagnostic (scrofazero/eval/iec_diagnostic.py).

Invariants: with a policy that says nothing (constant logits) the IEC belief equals the uniform
one: gain exactly 0 and equal accuracies; when the players really follow a known policy (always
the highest legal card) and the weighting uses that policy, the belief on important cards moves
towards the truth (gain > 0, accuracy not worse), which is what the diagnostic exists to show;
the effective sample size lies between 1 and the number of deals; `seats` scores the decisions
of those seats alone.
"""

import numpy as np
import pytest

from scrofazero.eval.iec_diagnostic import belief_quality
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.sampling.iec import IECConfig


class Highest:
    name = "highest"

    def act(self, view, rng):
        return max(view.legal_actions())


def highest_policy(x):
    # Own hand block first: a preference for the highest card index held.
    return x[:, :52] * np.arange(52)[None, :] * 2.0


def test_flat_policy_changes_nothing():
    deals = load_deals(limit=2)
    out = belief_quality([Highest()] * 4, lambda x: np.zeros((len(x), 52)), deals, seed=0)
    assert out["card_predictions"] > 20
    assert out["mean_log_likelihood_gain"] == pytest.approx(0, abs=1e-12)
    assert out["accuracy_iec"] == out["accuracy_uniform"]
    assert out["mean_ess"] == pytest.approx(out["mean_ess"])  # finite


def test_true_policy_moves_belief_to_the_truth():
    # Many deals per stratum: one deal per stratum makes a stratum's likelihood hostage to
    # where its other cards fell (measured: gain -0.45 (0.18) with 1, +0.07 (0.02) with 32).
    deals = load_deals(limit=8)
    out = belief_quality([Highest()] * 4, highest_policy, deals, seed=1, per_stratum=16,
                         iec=IECConfig(beta_post=0.2))
    assert out["mean_log_likelihood_gain"] > 2 * out["gain_stderr"] > 0
    assert out["accuracy_iec"] >= out["accuracy_uniform"]
    assert 1.0 <= out["mean_ess"] <= out["mean_deals"]
    assert out["informed_positions"] <= out["positions"]


@pytest.mark.parametrize("seats", [(0, 2), (1,)])
def test_seats_scores_those_decisions_alone(seats):
    deals = load_deals(limit=2)
    out = belief_quality([Highest()] * 4, highest_policy, deals, seed=0, seats=seats,
                         iec=IECConfig(plays="discards"))
    positions = 0  # reference: replay the games, count those seats' real decisions
    for deal in deals:
        state = GongzhuState(deal, 0)
        for _ in range(52):
            view = state.view(state.current_player)
            positions += (state.current_player in seats and len(view.legal_actions()) > 1
                          and bool(view.unseen))
            state.apply(max(view.legal_actions()))
    assert out["positions"] == positions > 0
    assert out["seats"] == list(seats) and out["plays"] == "discards"
    everyone = belief_quality([Highest()] * 4, highest_policy, deals, seed=0,
                              iec=IECConfig(plays="discards"))
    assert out["positions"] < everyone["positions"]
