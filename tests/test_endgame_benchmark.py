"""benchmarks/endgame.py: the audit's figures of one decision are what they claim to be.

Invariants: a world's best cards are its highest values, an unsearched (NaN) card never best;
on a late decision of the full player (tiny network) the audit's exact figures are computed
from the same worlds the decision searched: regret and loss are zero where the MCTS values are
replaced by the exact ones, and positive where the played card is not an exact best; the
per-trick means carry their standard errors; the speed part counts every timed decision's
nodes.
"""

import math
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from endgame_reference import reference_card_values
from positions import random_position

from scrofazero.agents.endgame import EndgameConfig
from scrofazero.agents.mr_greed import MrGreed
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.iec import IECConfig
from scrofazero.sampling.sampler import SamplingConfig
from scrofazero.sampling.uniform import owners_to_hands

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from endgame import audit_decision, best_cards, by_trick, properties, speed  # noqa: E402


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


def test_the_properties_against_brute_force_and_the_deal_count():
    """Leaf correlation and bias of the last tricks equal what the brute-force minimax
    (tests/helpers/endgame_reference.py) says of the same decisions of the same games; the
    information sets start at the 39 unseen cards' 39! / 13!^3 deals and shrink."""
    deals = load_deals(limit=2)
    props = properties(deals, start=11)
    correlated, favours = [], []
    for i, deal in enumerate(deals):  # the same games: Mr. Greed everywhere, the same rng
        state, rng, greed = GongzhuState(deal), np.random.default_rng(i), MrGreed()
        while not state.is_terminal():
            view = state.view(state.current_player)
            if len(view.legal_actions()) > 1 and state.num_played >= 40:
                values = reference_card_values(state)
                correlated.append(len(set(values)) == 1)
                favours.append(max(values) > 0)
            state.apply(greed.act(view, rng))
    late = [r for t, r in props.items() if t >= 11 and "choices" in r]
    assert sum(r["choices"] for r in late) == len(correlated) > 0
    assert sum(r["correlated"] * r["choices"] for r in late) == pytest.approx(sum(correlated))
    assert sum(r["favours_mover"] * r["choices"] for r in late) == pytest.approx(sum(favours))
    assert all("choices" not in r for t, r in props.items() if t < 11)
    first_trick = math.log10(math.factorial(39) / math.factorial(13) ** 3)
    sizes = [r["log10_size"] for r in props.values()]
    assert sizes[0] < first_trick and sizes == sorted(sizes, reverse=True)
    assert all(r["plays"] == 2 * 4 * 3 and 0 <= r["shrinks"] <= 1 for r in props.values())


def test_the_gap_table_pairs_each_part_deal_by_deal():
    """benchmarks/gap.py: each part is B - A per deal over the rows played; a part whose rows
    were not both played is left out; rows of other deals are refused."""
    from gap import PARTS, ROWS, table

    assert {row for pair in PARTS.values() for row in pair} <= set(ROWS)
    result = lambda values: {"values": values, "deals": len(values), "seed": 0,  # noqa: E731
                             "wpg": float(np.mean(values)), "stderr": 1.0}
    results = {"default": result([10.0, 20.0, 30.0]), "oracle": result([40.0, 20.0, 60.0]),
               "mcts_to_the_end": result([10.0, 10.0, 10.0])}
    gaps = table(results)
    assert set(gaps) == {"seeing the cards", "search error, tricks 9-13"}
    seeing = gaps["seeing the cards"]
    assert seeing["rows"] == ["default", "oracle"] and seeing["diff"] == pytest.approx(20.0)
    assert seeing["diff_stderr"] == pytest.approx(np.std([30, 0, 30], ddof=1) / np.sqrt(3))
    assert gaps["search error, tricks 9-13"]["diff"] == pytest.approx(10.0)
    results["oracle"] = result([1.0, 2.0])
    with pytest.raises(ValueError, match="differ in deals"):
        table(results)
