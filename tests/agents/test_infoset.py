"""The search over the player's own information (scrofazero/agents/infoset.py) against a brute
force over every combination of the worlds' own lines of play, kept only where the player
plays one card per information state, played out on the rules engine and scored by
GongzhuState.returns; at depth 0 it is the exact endgame's PIMC."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from infoset_reference import brute_force, fused

from scrofazero.agents.endgame import EndgameConfig, EndgameSolver
from scrofazero.agents.infoset import InfosetSearch
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent
from scrofazero.games.gongzhu.batch import StateBatch
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.behaviour import BehaviourModel, BehaviourNet, load_behaviour
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.iec import IECConfig
from scrofazero.sampling.sampler import SamplingConfig
from scrofazero.sampling.uniform import owners_to_hands


def play_model(seed: int = 0) -> BehaviourModel:
    """A small behaviour network with random weights (an untrained one plays uniformly)."""
    torch.manual_seed(seed)
    net = BehaviourNet(hidden=32, num_blocks=1)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.3)
    return BehaviourModel(net)


def position(seed: int, cards_left: int) -> GongzhuState:
    """A random game played at random until `cards_left` cards remain, the player to move with
    a choice."""
    rng = np.random.default_rng(seed)
    for attempt in range(50):
        state = GongzhuState(seed=seed * 100 + attempt, leader=int(rng.integers(4)))
        while 52 - state.num_played > cards_left:
            state.apply(int(rng.choice(state.legal_actions())))
        if len(state.legal_actions()) > 1:
            return state
    raise AssertionError("no position with a choice")


def worlds_of(seed: int, cards_left: int, count: int) -> tuple[GongzhuState, list[GongzhuState]]:
    """A position and `count` worlds of it: the true one, and others with one card of one other
    seat swapped for one of another's (worlds alike enough that the player often cannot tell
    them apart at its next decision)."""
    state = position(seed, cards_left)
    rng = np.random.default_rng(seed + 1000)
    view = state.view(state.current_player)
    others = [s for s in range(4) if s != view.seat]
    worlds = [state]
    while len(worlds) < count:
        a, b = rng.choice(others, 2, replace=False)
        x = int(rng.choice([c for c in range(52) if state.hands[a] >> c & 1]))
        y = int(rng.choice([c for c in range(52) if state.hands[b] >> c & 1]))
        if view.voids[b] >> (x // 13) & 1 or view.voids[a] >> (y // 13) & 1:
            continue  # a seat never gets a suit it has shown to be void in
        hands = list(state.hands)
        hands[a] ^= (1 << x) | (1 << y)
        hands[b] ^= (1 << x) | (1 << y)
        worlds.append(GongzhuState.from_view(view, hands))
    return state, worlds


# Seeds 4, 5, 9 and 29 share a later decision that fusion would split; 1-3 need not.
@pytest.mark.parametrize("seed,cards_left,count,binds", [
    (4, 12, 4, True), (5, 12, 4, True), (9, 12, 4, True), (29, 12, 4, True),
    (1, 11, 3, False), (2, 10, 2, False), (3, 9, 3, False)])
def test_the_shared_plan_is_the_best_one_card_per_information_state(seed, cards_left, count,
                                                                    binds):
    state, worlds = worlds_of(seed, cards_left, count)
    model = play_model(seed)
    weights = np.random.default_rng(seed).dirichlet(np.ones(count))
    view = state.view(state.current_player)
    hands = np.array([w.hands for w in worlds], dtype=np.uint64)
    search = InfosetSearch(EndgameSolver(12), model, depth=12)
    values = search.card_values(view, hands, weights)
    assert values.shape == (count, len(view.legal_actions()))
    best = brute_force(model, worlds, weights)
    np.testing.assert_allclose(weights @ values, best, atol=1e-9)
    assert search.model_calls > 0
    twin = InfosetSearch(EndgameSolver(12), model, depth=12, fused=True)
    np.testing.assert_allclose(weights @ twin.card_values(view, hands, weights),
                               fused(model, worlds, weights), atol=1e-9)
    if binds:  # where the player could tell the worlds apart, fusion would promise more
        assert (fused(model, worlds, weights) > best + 1e-6).any()


@pytest.mark.parametrize("seed", [4, 5, 9, 31])
def test_the_ceiling_plays_mr_greeds_program_at_the_opponents_seats(seed):
    """others=greed: the opponents play Mr. Greed's program in each world (on draws seeded by
    the position, its view of the world equal to the rules engine's), the partner the model."""
    state, worlds = worlds_of(seed, 12, 3)
    model = play_model(seed)
    weights = np.random.default_rng(seed).dirichlet(np.ones(3))
    view = state.view(state.current_player)
    hands = np.array([w.hands for w in worlds], dtype=np.uint64)
    values = InfosetSearch(EndgameSolver(12), model, depth=12, opponents="greed").card_values(
        view, hands, weights)
    np.testing.assert_allclose(weights @ values, brute_force(model, worlds, weights, greed=True),
                               atol=1e-9)
    with pytest.raises(ValueError, match="opponents='if'"):
        InfosetSearch(EndgameSolver(12), model, depth=1, opponents="if")


def test_depth_zero_is_the_exact_endgame_of_each_world():
    state, worlds = worlds_of(7, 16, 6)
    view = state.view(state.current_player)
    hands = np.array([w.hands for w in worlds], dtype=np.uint64)
    solver = EndgameSolver(14)
    batch = StateBatch.from_view(view, hands)
    pimc = solver.card_values(batch.hands, batch.piles, batch.trick, batch.trick_len,
                              batch.leader, view.legal_actions())
    search = InfosetSearch(solver, play_model(), depth=0)
    np.testing.assert_array_equal(search.card_values(view, hands, np.full(6, 1 / 6)), pimc)
    assert search.model_calls == 0


def test_one_world_shares_nothing_and_each_depth_has_an_answer_or_none():
    """With one world the shared plan is that world's best line against the model, at any
    depth; past the node budget the search answers None."""
    state, worlds = worlds_of(8, 12, 1)
    view = state.view(state.current_player)
    hands = np.array([w.hands for w in worlds], dtype=np.uint64)
    model = play_model(8)
    best = brute_force(model, worlds, [1.0])
    values = InfosetSearch(EndgameSolver(12), model, depth=12).card_values(view, hands, [1.0])
    np.testing.assert_array_equal(values[0], best)
    assert InfosetSearch(EndgameSolver(12), model, depth=1).card_values(
        view, hands, [1.0], nodes=1) is None
    with pytest.raises(ValueError, match="depth=-1"):
        InfosetSearch(EndgameSolver(12), model, depth=-1)


@pytest.mark.parametrize("seed", [21, 22])
def test_the_player_shares_its_later_decisions_by_the_shipped_behaviour_network(seed):
    """scrofazero.endgame.shared: the full player's score of each card is the brute-force best
    shared plan over its own sampled worlds, the others played by the shipped behaviour
    network; shared=0 (the default) is PIMC on the same worlds."""
    state = position(seed, 12)
    view = state.view(state.current_player)
    scores = {}
    for shared in (0, 12):
        torch.manual_seed(seed)
        agent = ScrofaZeroAgent(model=PolicyValueNet(hidden=(32,), num_blocks=1),
                                sampling=SamplingConfig(method="uniform", num_deals=3),
                                weighting=IECConfig(enabled=False),
                                endgame=EndgameConfig(shared=shared))
        agent.act(view, np.random.default_rng(seed))
        scores[shared] = agent.last
    last = scores[12]
    worlds = [GongzhuState.from_view(view, [int(h) for h in hands])
              for hands in owners_to_hands(last.sample.owners)]
    best = brute_force(load_behaviour(), worlds, last.weights)
    np.testing.assert_allclose(last.scores, best, atol=1e-9)
    assert last.exact and np.array_equal(scores[0].sample.owners, last.sample.owners)
    exact = EndgameSolver(12)
    b = StateBatch.from_view(view, owners_to_hands(last.sample.owners))
    pimc = exact.card_values(b.hands, b.piles, b.trick, b.trick_len, b.leader,
                             view.legal_actions())
    np.testing.assert_allclose(scores[0].scores, last.weights @ pimc)
