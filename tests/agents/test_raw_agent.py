"""Raw network player 'raw' (scrofazero/agents/raw_net.py).

Invariants: over full games (value and policy mode, a small random net) every card played is
legal; forced moves make no network call and every other decision exactly one; with stub nets
whose value (or policy) prefers a known card the agent plays that card; value mode equals a
slow choice that steps and evaluates one (deal, card) at a time on the same deals; the same
rng seed gives the same game; a checkpoint path loads the same net as passing the model; bad
arguments raise. With sampling={"method": "marginals"} (no deals: the belief's marginals as the hand
blocks) full games are legal in both modes with one call per unforced decision and reproduce
from a seed, and value mode picks the card whose child, encoded from the view's holders with
that card gone, has the best value.
"""

import numpy as np
import pytest
import torch

from scrofazero.agents.raw_net import RawNetworkAgent
from scrofazero.games.gongzhu.batch import StateBatch, step
from scrofazero.games.gongzhu.cards import card_index
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.belief import load_belief
from scrofazero.nn.encoding import encode_holders
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.belief import view_holders
from scrofazero.sampling.uniform import sample_hands

PREFERRED = card_index("H9")  # held by seat 0 in the residue deal below (index 20)


def small_net(seed=0):
    torch.manual_seed(seed)
    return PolicyValueNet(hidden=(32,), num_blocks=1)


def play_game(agents, seed, game_seed=0):
    """Play one game; returns the cards and how many moves were forced."""
    state = GongzhuState(seed=game_seed, leader=game_seed % 4)
    rng = np.random.default_rng(seed)
    cards, forced = [], 0
    while not state.is_terminal():
        seat = state.current_player
        legal = state.legal_actions()
        forced += len(legal) == 1
        card = agents[seat].act(state.view(seat), rng)
        assert card in legal and isinstance(card, int)
        state.apply(card)
        cards.append(card)
    return cards, forced


def test_full_games_legal_one_call_per_unforced_decision():
    value = RawNetworkAgent(model=small_net(0))
    policy = RawNetworkAgent(model=small_net(1), mode="policy",
                             sampling={"method": "belief", "num_deals": 3})
    for game in range(2):
        calls = value.evaluator.calls + policy.evaluator.calls
        cards, forced = play_game([value, policy, value, policy], seed=game, game_seed=game)
        assert len(cards) == 52
        assert value.evaluator.calls + policy.evaluator.calls - calls == 52 - forced
        assert forced >= 4  # at least the whole last trick


def test_forced_move_needs_no_network_call():
    state = GongzhuState(seed=5)
    rng = np.random.default_rng(0)
    while len(state.legal_actions()) > 1 or state.num_played < 4:
        state.apply(state.legal_actions()[int(rng.integers(len(state.legal_actions())))])
    agent = RawNetworkAgent(model=small_net())
    assert agent.act(state.view(state.current_player), rng) == state.legal_actions()[0]
    assert agent.evaluator.calls == 0


class PreferValue(torch.nn.Module):
    """After our lead, the mover is an opponent: its team loses 100 when PREFERRED was led.
    Its policy points elsewhere, so only the value can select PREFERRED."""

    def forward(self, x):
        just_played = x[:, 272 + PREFERRED + 1]  # own slot of PREFERRED in trick block 0
        logits = torch.zeros(len(x), 52)
        logits[:, card_index("S2")] = 10.0
        return logits, -100.0 * just_played


class PreferPolicy(torch.nn.Module):
    def forward(self, x):
        logits = torch.zeros(len(x), 52)
        logits[:, PREFERRED] = 5.0
        logits[:, card_index("HA")] = 50.0  # huge but never legal for seat 0 here
        return logits, torch.zeros(len(x))


def residue_view():
    """Seat 0 leads holding every card with index = 0 mod 4 (13 legal leads)."""
    hands = [sum(1 << c for c in range(52) if c % 4 == seat) for seat in range(4)]
    return GongzhuState.from_hands(hands, leader=0).view(0)


def test_stub_value_and_policy_pick_the_known_card():
    view = residue_view()
    assert PREFERRED in view.legal_actions() and card_index("HA") not in view.legal_actions()
    for seed in range(3):
        rng = np.random.default_rng(seed)
        assert RawNetworkAgent(model=PreferValue()).act(view, rng) == PREFERRED
        assert RawNetworkAgent(model=PreferPolicy(), mode="policy").act(view, rng) == PREFERRED
    agent = RawNetworkAgent(model=PreferValue(), sampling={"method": "belief", "num_deals": 4})
    agent.act(view, np.random.default_rng(0))
    assert agent.evaluator.calls == 1 and agent.evaluator.states == 4 * 13


def test_value_mode_matches_slow_one_state_at_a_time_choice():
    model = small_net(3)
    slow = NetworkEvaluator(model)
    state = GongzhuState(seed=21, leader=2)
    rng = np.random.default_rng(1)
    for _ in range(9):  # mid-trick in the third trick
        state.apply(state.legal_actions()[int(rng.integers(len(state.legal_actions())))])
    view = state.view(state.current_player)
    for seed in range(4):
        deals = sample_hands(view, 5, np.random.default_rng(seed))  # what the agent draws
        means = []
        for card in view.legal_actions():
            total = 0.0
            for hands in deals:
                child = GongzhuState.from_view(view, hands.tolist())
                child.apply(card)
                total += slow(StateBatch.from_states([child]))[1][0, view.seat]
            means.append(total / len(deals))
        want = view.legal_actions()[int(np.argmax(means))]
        agent = RawNetworkAgent(model=model)
        assert agent.act(view, np.random.default_rng(seed)) == want


def test_same_seed_same_game():
    agents = [RawNetworkAgent(model=small_net(s)) for s in range(4)]
    first, _ = play_game(agents, seed=7, game_seed=3)
    again, _ = play_game(agents, seed=7, game_seed=3)
    assert first == again


def test_checkpoint_path_loads_the_same_net(tmp_path):
    checkpoints = pytest.importorskip("scrofazero.nn.checkpoint")
    model = small_net(2)
    path = checkpoints.save_checkpoint(tmp_path, model=model, optimizer=None, step=1, config={})
    view = GongzhuState(seed=11).view(0)
    direct, loaded = RawNetworkAgent(model=model), RawNetworkAgent(checkpoint=str(path))
    a = direct.act(view, np.random.default_rng(4))
    b = loaded.act(view, np.random.default_rng(4))
    assert a == b
    x = torch.rand(3, 434)
    for u, v in zip(direct.evaluator.model(x), loaded.evaluator.model(x)):
        assert torch.equal(u, v)


def test_bad_arguments_raise():
    with pytest.raises(ValueError):
        RawNetworkAgent()
    with pytest.raises(ValueError):
        RawNetworkAgent(checkpoint="x.pt", model=small_net())
    with pytest.raises(ValueError, match="mode"):
        RawNetworkAgent(model=small_net(), mode="mcts")
    with pytest.raises(ValueError, match="sampling.num_deals"):
        RawNetworkAgent(model=small_net(), sampling={"num_deals": 0})
    with pytest.raises(ValueError, match="sampling.method"):
        RawNetworkAgent(model=small_net(), sampling={"method": "stratified"})


def test_marginals_full_games_legal_and_seeded():
    value = RawNetworkAgent(model=small_net(3), sampling={"method": "marginals"})
    policy = RawNetworkAgent(model=small_net(4), sampling={"method": "marginals"}, mode="policy")
    agents = [value, policy, value, policy]
    calls = value.evaluator.calls + policy.evaluator.calls
    cards, forced = play_game(agents, seed=2, game_seed=6)
    assert len(cards) == 52
    assert value.evaluator.calls + policy.evaluator.calls - calls == 52 - forced
    again, _ = play_game(agents, seed=2, game_seed=6)
    assert again == cards


def test_marginals_value_mode_picks_the_best_child_of_the_holders():
    model = small_net(5)
    evaluator = NetworkEvaluator(model)
    state = GongzhuState(seed=9)
    rng = np.random.default_rng(9)
    for _ in range(6):
        state.apply(int(rng.choice(state.legal_actions())))
    view = state.view(state.current_player)
    holders = view_holders(view, load_belief().probabilities(view))
    hands = np.zeros((1, 4), dtype=np.uint64)
    hands[0, view.seat] = view.hand
    values = []
    for card in view.legal_actions():
        child = step(StateBatch.from_view(view, hands), [card])
        h = holders.copy()
        h[card] = 0.0
        values.append(evaluator.evaluate(child, encode_holders(child, h[None]))[1][0, view.seat])
    want = view.legal_actions()[int(np.argmax(values))]
    agent = RawNetworkAgent(model=model, sampling={"method": "marginals"})
    assert agent.act(view, np.random.default_rng(0)) == want
