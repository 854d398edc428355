"""benchmarks/endgame.py: the audit's figures of one decision are what they claim to be.

Invariants: a world's best cards are its highest values, an unsearched (NaN) card never best;
on a late decision of the full player (tiny network) the audit's exact figures are computed
from the same worlds the decision searched: regret and loss are zero where the MCTS values are
replaced by the exact ones, and positive where the played card is not an exact best; the
per-trick means carry their standard errors; the speed part counts every timed decision's
nodes.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from positions import random_position

from scrofazero.agents.endgame import EndgameConfig
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.iec import IECConfig
from scrofazero.sampling.sampler import SamplingConfig
from scrofazero.sampling.uniform import owners_to_hands

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from endgame import audit_decision, best_cards, by_trick, speed  # noqa: E402


def test_best_cards_are_the_highest_and_never_unsearched():
    values = np.array([[1.0, 3.0, 3.0], [np.nan, -1.0, -2.0]])
    assert best_cards(values).tolist() == [[False, True, True], [False, True, False]]


def late_agent(seed: int):
    for extra in range(8):
        state = random_position(seed, 37 + extra)
        if len(state.legal_actions()) > 1:
            break
    torch.manual_seed(seed)
    agent = ScrofaZeroAgent(model=PolicyValueNet(hidden=(32,), num_blocks=1),
                            sampling=SamplingConfig(method="uniform", num_deals=4),
                            weighting=IECConfig(enabled=False), endgame=EndgameConfig(trick=0))
    return agent, state.view(state.current_player)


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_the_audit_of_a_decision(seed):
    agent, view = late_agent(seed)
    card = agent.act(view, np.random.default_rng(seed))
    row = audit_decision(agent, view, card, exact_from=1)
    exact = agent.exact_values(view, owners_to_hands(agent.last.sample.owners))
    scores = agent.last.weights @ exact
    j = view.legal_actions().index(card)
    assert row["decision_loss"] == pytest.approx(scores.max() - scores[j])
    assert row["decision_differs"] == float(scores[j] < scores.max())
    assert 0 <= row["world_miss"] <= 1 and row["world_regret"] >= 0
    assert (row["world_regret"] > 0) == (row["world_miss"] > 0)
    # with the exact values in place of MCTS's, nothing is missed
    agent.last.values = exact
    best = view.legal_actions()[int(np.argmax(scores))]
    again = audit_decision(agent, view, best, exact_from=1)
    assert again["world_regret"] == 0 and again["abs_error"] == 0
    assert again["decision_loss"] == 0 and again["decision_differs"] == 0


def test_means_by_trick_and_the_speed_part():
    rows = [{"trick": 9, "disagree": 0.5}, {"trick": 9, "disagree": 0.0},
            {"trick": 10, "disagree": 1.0}]
    table = by_trick(rows)
    assert table[9] == {"decisions": 2, "disagree": 0.25, "disagree_se": 0.25}
    assert table[10]["decisions"] == 1 and table[10]["disagree_se"] == 0
    timing = speed(load_deals(limit=1), start=11, worlds=3)
    assert set(timing) <= {11, 12} and timing
    assert all(r["decisions"] >= 1 and r["nodes_mean"] > 0 for r in timing.values())
