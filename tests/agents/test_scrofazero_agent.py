"""The full ScrofaZero player (scrofazero/agents/scrofazero_agent.py).

Invariants: forced moves are played without sampling or search; a searched decision samples one
deal per stratum, weights them (summing to 1), and its scores equal a slow reference that
searches each deal on its own with the per-leaf MCTS and averages root Q with the same weights;
it plays the argmax; without weighting the weights are the priors; over full games against Mr.
Greed every card is legal and the same seed gives the same game; a checkpoint path loads; bad
settings raise with the setting's name.
"""

import numpy as np
import pytest
import torch
from endgame_reference import reference_card_values
from positions import random_position

from scrofazero.agents import make_agent
from scrofazero.agents.endgame import EndgameConfig
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent
from scrofazero.eval.arena import play_game
from scrofazero.games.gongzhu.batch import GongzhuRules, StateBatch
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn import checkpoint as checkpoints
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.iec import IECConfig, combine, iec_log_weights
from scrofazero.sampling.sampler import SamplingConfig
from scrofazero.sampling.stratified import sample_stratified
from scrofazero.sampling.uniform import owners_to_hands
from scrofazero.search.mcts import MCTSConfig
from scrofazero.search.sequential import run_mcts_sequential


def tiny_net(seed=0):
    torch.manual_seed(seed)
    return PolicyValueNet(hidden=(32,), num_blocks=1)


def unforced(seed, plies):
    for extra in range(8):
        state = random_position(seed, plies + extra)
        if len(state.legal_actions()) > 1:
            return state
    raise AssertionError("no unforced position")


@pytest.mark.parametrize("sampling,weighting", [("stratified", True), ("uniform", True),
                                                ("stratified", False)])
@pytest.mark.parametrize("seed,plies", [(1, 5), (2, 18), (3, 30)])
def test_decision_equals_per_deal_reference(sampling, weighting, seed, plies):
    state = unforced(seed, plies)
    view = state.view(state.current_player)
    agent = ScrofaZeroAgent(model=tiny_net(seed),
                            sampling=SamplingConfig(method=sampling, num_deals=4),
                            weighting=IECConfig(enabled=weighting, beta_post=0.05))
    card = agent.act(view, np.random.default_rng(seed))
    last = agent.last
    assert card in view.legal_actions()
    assert last.weights.sum() == pytest.approx(1.0)
    if not weighting:
        assert np.array_equal(last.weights, last.sample.weights) and last.queries == 0
    if sampling == "stratified":
        assert last.deals == len(last.sample.strata)
    # Reference: the same deals, each searched alone with one network call per leaf.
    legal = view.legal_actions()
    roots = StateBatch.from_states([GongzhuState.from_view(view, [int(h) for h in hands])
                                    for hands in owners_to_hands(last.sample.owners)])
    ref = run_mcts_sequential(GongzhuRules, agent.evaluator, roots, agent.mcts)
    q = ref.q[:, legal].astype(np.float64)
    assert not np.isnan(q).any()  # 10 + 2x visits every legal card in every deal
    scores = (last.weights[:, None] * q).sum(axis=0)
    np.testing.assert_allclose(last.scores, scores, rtol=1e-5, atol=1e-3)
    assert card == legal[int(np.argmax(last.scores))]


def test_forced_move_is_not_searched():
    agent = ScrofaZeroAgent(model=tiny_net())
    state = random_position(4, 48)
    while len(state.legal_actions()) > 1:
        state.apply(state.legal_actions()[0])
    calls = agent.evaluator.calls
    card = agent.act(state.view(state.current_player), np.random.default_rng(0))
    assert card == state.legal_actions()[0]
    assert agent.evaluator.calls == calls and agent.last is None


def test_full_games_against_greed_are_legal_and_reproducible(tmp_path):
    model = tiny_net(3)
    path = checkpoints.save_checkpoint(tmp_path, model=model, optimizer=None, step=1, config={})
    agent = make_agent("scrofazero", checkpoint=str(path))
    greed = make_agent("greed", num_samples=4)
    deal = np.random.default_rng(0).permutation(52)
    first = play_game(deal, 0, [agent, greed, agent, greed], 7)
    second = play_game(deal, 0, [agent, greed, agent, greed], 7)
    assert first == second and first[0] == -first[1] and first[0] == first[2]


def test_bfloat16_player_scores_close_to_float32():
    state = unforced(4, 14)
    view = state.view(state.current_player)
    model = tiny_net(5)
    full = ScrofaZeroAgent(model=model)
    low = make_agent("scrofazero", model=model, precision="bfloat16")
    assert low.evaluator.precision == "bfloat16" and full.evaluator.precision == "float32"
    full.act(view, np.random.default_rng(1))
    low.act(view, np.random.default_rng(1))
    a, b = full.last.scores, low.last.scores
    assert np.allclose(a, b, atol=0.5) and not np.array_equal(a, b)


def test_bad_settings_are_named():
    with pytest.raises(ValueError, match="sampling"):
        ScrofaZeroAgent(model=tiny_net(), sampling=SamplingConfig(method="bogus"))
    with pytest.raises(ValueError, match="per_stratum"):
        ScrofaZeroAgent(model=tiny_net(), sampling=SamplingConfig(per_stratum=0))
    with pytest.raises(ValueError, match="stratum_weights"):
        ScrofaZeroAgent(model=tiny_net(), sampling=SamplingConfig(stratum_weights="bogus"))
    with pytest.raises(ValueError, match="exactly one"):
        ScrofaZeroAgent()
    with pytest.raises(ValueError, match="form"):
        ScrofaZeroAgent(model=tiny_net(), weighting=IECConfig(form="cubic"))
    with pytest.raises(ValueError, match="selection"):
        ScrofaZeroAgent(model=tiny_net(), search=MCTSConfig(selection="bogus"))
    with pytest.raises(ValueError, match="precision"):
        ScrofaZeroAgent(model=tiny_net(), precision="float8")
    with pytest.raises(ValueError, match="plays"):
        ScrofaZeroAgent(model=tiny_net(), weighting=IECConfig(plays="some"))
    changed = SamplingConfig()
    changed.num_deals = 0  # a config changed after it was built is checked too
    with pytest.raises(ValueError, match="num_deals"):
        ScrofaZeroAgent(model=tiny_net(), sampling=changed)


def test_iec_draws_weigh_strata_by_mean_likelihood():
    state = unforced(6, 21)
    view = state.view(state.current_player)
    agent = ScrofaZeroAgent(model=tiny_net(2), sampling=SamplingConfig(per_stratum=2),
                            weighting=IECConfig(beta_post=0.2, draws=6))
    sample, weights, queries = agent.weigh(view, np.random.default_rng(5))
    big = sample_stratified(view, 2, 12, np.random.default_rng(5))  # the same first draws
    policy = lambda x: agent.evaluator.forward_features(x)[0]  # noqa: E731
    log_factor, n = iec_log_weights(view, owners_to_hands(big.owners), policy, agent.iec)
    assert queries == n > 0
    full = combine(big.weights, log_factor)
    S = len(big.strata)
    assert len(weights) == 2 * S and weights.sum() == pytest.approx(1.0)
    for s in range(S):
        assert weights[sample.stratum == s].sum() == pytest.approx(full[big.stratum == s].sum())
        # The searched deals of a stratum are some of its weighed draws.
        drawn = {tuple(o) for o in big.owners[big.stratum == s]}
        assert all(tuple(o) in drawn for o in sample.owners[sample.stratum == s])


def test_one_default_player_everywhere():
    """The player's defaults are set once (play_search, play_sampling) and reach every way of
    building it: the agent's own defaults and evaluate.py's `scrofazero` settings."""
    from scrofazero.agents.scrofazero_agent import play_sampling, play_search
    from scrofazero.config import EvaluateConfig

    agent = ScrofaZeroAgent(model=tiny_net())
    settings = EvaluateConfig().scrofazero
    assert agent.mcts == settings.search == play_search()
    assert agent.sampling == settings.sampling == play_sampling()
    assert (play_search().budget_base, play_search().budget_per_legal) == (5, 1)
    assert play_sampling().per_stratum == 2 and play_sampling().num_important == 2
    assert settings.search is not EvaluateConfig().scrofazero.search  # a fresh config each time


@pytest.mark.parametrize("seed,plies", [(4, 40), (5, 42), (6, 46)])
def test_the_endgame_scores_are_the_exact_values_of_the_worlds(seed, plies):
    """From the endgame's trick on, a decision's score of each card is the weighted mean over the
    sampled worlds of the card's minimax value (tests/helpers/endgame_reference.py); before it,
    and with endgame.trick=0, the decision is the MCTS one."""
    state = unforced(seed, plies)
    view = state.view(state.current_player)
    sampling = SamplingConfig(method="uniform", num_deals=3)
    agent = ScrofaZeroAgent(model=tiny_net(seed), sampling=sampling,
                            weighting=IECConfig(enabled=False),
                            endgame=EndgameConfig(trick=len(view.history) // 4 + 1))
    agent.act(view, np.random.default_rng(seed))
    last = agent.last
    exact = np.array([reference_card_values(GongzhuState.from_view(view, hands))
                      for hands in owners_to_hands(last.sample.owners)], dtype=np.float64)
    assert np.allclose(last.scores, last.weights @ exact)
    late = ScrofaZeroAgent(model=tiny_net(seed), sampling=sampling,
                           weighting=IECConfig(enabled=False),
                           endgame=EndgameConfig(trick=len(view.history) // 4 + 2))
    off = ScrofaZeroAgent(model=tiny_net(seed), sampling=sampling,
                          weighting=IECConfig(enabled=False), endgame=EndgameConfig(trick=0))
    for mcts in (late, off):
        mcts.act(view, np.random.default_rng(seed))
        assert np.array_equal(mcts.last.sample.owners, last.sample.owners)  # the same worlds
        assert not np.allclose(mcts.last.scores, last.scores)  # the network's guesses


def test_past_the_endgame_node_budget_the_decision_is_the_mcts_one():
    state = unforced(7, 36)
    view = state.view(state.current_player)
    sampling = SamplingConfig(method="uniform", num_deals=3)
    decisions = []
    for endgame in (EndgameConfig(trick=9, nodes=1), EndgameConfig(trick=0),
                    EndgameConfig(trick=9)):
        agent = ScrofaZeroAgent(model=tiny_net(7), sampling=sampling,
                                weighting=IECConfig(enabled=False), endgame=endgame)
        agent.act(view, np.random.default_rng(7))
        decisions.append(agent.last)
    budget, mcts, exact = decisions
    assert np.array_equal(budget.scores, mcts.scores) and not budget.exact and not mcts.exact
    assert exact.exact and not np.allclose(exact.scores, mcts.scores)
