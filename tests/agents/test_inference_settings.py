"""The players' ways of guessing the hidden hands beyond the paper's (belief, oracle).

Invariants: with sampling.method=belief the full player searches deals drawn from the
card-location network (consistent with the view, strata weighted by the belief) and explains its
move with the network's own probabilities; the raw player's belief deals are consistent; the
raw player with sampling=marginals (a registry setting) reads the given belief file's calibrated
marginals and draws no deals; an
oracle player searches exactly the true deal (oracle) or deals that put every unseen deciding
card with its true holder (oracle_important) when the evaluation arena gives the deal, and is
refused everywhere else: at its first move without the deal, by check_real_game, at a table.
"""

import numpy as np
import pytest
import torch

from scrofazero.agents import check_real_game, make_agent
from scrofazero.agents.registry import player_spec
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent, explain
from scrofazero.eval.arena import play_game
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.belief import BeliefNet, save_belief
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.belief import sample_belief, view_holders
from scrofazero.sampling.oracle import DECIDING, OracleError
from scrofazero.sampling.sampler import SamplingConfig
from scrofazero.sampling.uniform import owners_to_hands, view_constraints
from scrofazero.settings import check_bounds


@pytest.fixture(scope="module")
def belief_file(tmp_path_factory):
    torch.manual_seed(1)
    net = BeliefNet(32, 1)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.2)
    return str(save_belief(tmp_path_factory.mktemp("b") / "belief.pt", net, {"test": True}))


def tiny_net():
    torch.manual_seed(0)
    return PolicyValueNet(hidden=(32,), num_blocks=1)


def position(seed, plies):
    state = GongzhuState(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        state.apply(int(rng.choice(state.legal_actions())))
    while len(state.legal_actions()) < 2:
        state.apply(state.legal_actions()[0])
    return state


def consistent(view, owners):
    cards, sizes, voids, others = view_constraints(view)
    for j, seat in enumerate(others):
        held = cards[owners[cards] == seat]
        if len(held) != sizes[j] or any(voids[j] >> (c // 13) & 1 for c in held):
            return False
    return True


@pytest.mark.parametrize("seed,plies", [(1, 6), (2, 21), (3, 33)])
def test_full_player_searches_belief_deals(belief_file, seed, plies):
    state = position(seed, plies)
    view = state.view(state.current_player)
    agent = ScrofaZeroAgent(model=tiny_net(),
                            sampling=SamplingConfig(method="belief", beliefs=belief_file))
    card, why = agent.decide(view, np.random.default_rng(seed))
    assert card in view.legal_actions()
    sample = agent.last.sample
    assert all(consistent(view, o) for o in sample.owners)
    # The explanation's belief is the network's for every unseen card.
    probs = agent.sampler.beliefs.probabilities(view)
    unseen = [c for c in range(52) if view.unseen >> c & 1]
    np.testing.assert_allclose(why.belief[unseen], probs[unseen])
    assert np.allclose(explain(agent.last).belief[unseen].sum(axis=1), 1.0)


def test_raw_player_belief_deals_are_consistent(belief_file):
    agent = make_agent("raw", model=tiny_net(),
                       sampling={"method": "belief", "beliefs": belief_file})
    for seed in range(3):
        state = position(seed, 10 + 9 * seed)
        view = state.view(state.current_player)
        hands = agent._hands(view, np.random.default_rng(seed))
        assert hands.shape == (5, 4)
        assert all(int(h[view.seat]) == view.hand for h in hands)
        assert agent.act(view, np.random.default_rng(seed)) in view.legal_actions()


@pytest.mark.parametrize("calibrate,above,plies", [(0, 15, 17), (20, 15, 17), (20, 15, 40),
                                                   (20, 0, 40)])
def test_raw_player_calibrate_reaches_the_sampler(belief_file, calibrate, above, plies):
    agent = make_agent("raw", model=tiny_net(), sampling={
        "method": "belief", "beliefs": belief_file, "calibrate": calibrate,
        "calibrate_above": above})
    state = position(4, plies)
    view = state.view(state.current_player)
    owners = sample_belief(view, agent.sampler.beliefs.probabilities(view), (), 5,
                           np.random.default_rng(7), calibrate, above)[0]
    np.testing.assert_array_equal(agent._hands(view, np.random.default_rng(7)),
                                  owners_to_hands(owners))
    for bad in ({"calibrate": -1}, {"calibrate_above": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            make_agent("raw", model=tiny_net(),
                       sampling={"method": "belief", "beliefs": belief_file, **bad})
    with pytest.raises(ValueError, match="sampling.calibrate_above=-1: must be greater than"):
        check_bounds(SamplingConfig(method="belief", calibrate_above=-1), "sampling")


def test_raw_player_calibrate_above_changes_the_late_deals(belief_file):
    state = position(4, 40)  # 9 cards unseen
    view = state.view(state.current_player)
    hands = [make_agent("raw", model=tiny_net(), sampling={
                 "method": "belief", "beliefs": belief_file, "calibrate_above": above,
             })._hands(view, np.random.default_rng(7))
             for above in (0, 15)]
    assert not np.array_equal(hands[0], hands[1])


@pytest.mark.parametrize("calibrate", [0, 20])
def test_raw_player_marginals_read_the_belief(belief_file, calibrate):
    spec = player_spec("raw")
    settings = spec.settings_from({"sampling": {"method": "marginals", "beliefs": belief_file,
                                                "calibrate": calibrate}})
    agent = spec.make(settings, model=tiny_net())
    assert not agent.sampler.draws_deals and agent.sampler.beliefs is not None
    state = position(4, 17)
    view = state.view(state.current_player)
    root, holders = agent._marginal_root(view)
    assert len(root) == 1 and int(root.hands[0, view.seat]) == view.hand
    np.testing.assert_array_equal(
        holders[0], view_holders(view, agent.sampler.beliefs.probabilities(view), calibrate))
    assert agent.act(view, np.random.default_rng(0)) in view.legal_actions()


class Spy(ScrofaZeroAgent):
    """Records the deals each decision searched."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.searched = []

    def act(self, view, rng):
        card = super().act(view, rng)
        if self.last is not None:
            self.searched.append((view, owners_to_hands(self.last.sample.owners)))
        return card


def test_oracle_searches_the_true_deal_in_the_arena():
    spy = Spy(model=tiny_net(), sampling=SamplingConfig(method="oracle", num_deals=1))
    greed = make_agent("greed")
    deal = np.random.default_rng(3).permutation(52)
    true_state = GongzhuState(deal, 0)
    play_game(deal, 0, [spy, greed, spy, greed], 0)
    assert spy.searched
    for view, hands in spy.searched:
        assert hands.shape == (1, 4)
        # Replaying the history on the true deal gives exactly the hands it searched.
        replay = GongzhuState(deal, 0)
        for _, card in view.history:
            replay.apply(card)
        assert [int(h) for h in hands[0]] == replay.hands
    assert true_state.hands  # the deal itself was not changed


def test_oracle_important_pins_the_deciding_cards():
    spy = Spy(model=tiny_net(), sampling=SamplingConfig(method="oracle_important",
                                                       num_deals=4))
    deal = np.random.default_rng(4).permutation(52)
    play_game(deal, 0, [spy, make_agent("greed"), spy, make_agent("greed")], 1)
    for view, hands in spy.searched:
        replay = GongzhuState(deal, 0)
        for _, card in view.history:
            replay.apply(card)
        for card in DECIDING:
            if view.unseen >> card & 1:
                holder = next(s for s in range(4) if replay.hands[s] >> card & 1)
                assert all(int(h[holder]) >> card & 1 for h in hands)


@pytest.mark.parametrize("player,kwargs", [
    ("scrofazero", {"sampling": SamplingConfig(method="oracle")}),
    ("scrofazero", {"sampling": SamplingConfig(method="oracle_important")}),
    ("raw", {"sampling": {"method": "oracle"}}),
    ("raw", {"sampling": {"method": "oracle_important"}})])
def test_oracles_are_refused_outside_the_arena(player, kwargs):
    agent = make_agent(player, model=tiny_net(), **kwargs)
    with pytest.raises(ValueError, match="evaluation only"):
        check_real_game(agent, "a table")
    state = position(5, 12)
    with pytest.raises(OracleError, match="evaluation only"):
        agent.act(state.view(state.current_player), np.random.default_rng(0))
    check_real_game(make_agent(player, model=tiny_net()))  # the defaults play for real


def test_belief_needs_a_readable_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.pt"):
        ScrofaZeroAgent(model=tiny_net(), sampling=SamplingConfig(
            method="belief", beliefs=str(tmp_path / "missing.pt")))
    with pytest.raises(ValueError, match="sampling"):
        make_agent("raw", model=tiny_net(), sampling={"method": "bogus"})
