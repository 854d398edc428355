"""Tests for scrofazero.openspiel (the OpenSpiel game `python_gongzhu`).

Invariants covered:
- registration: GameType / GameInfo fields, the `leader` parameter, a clear error without pyspiel;
- utility bounds: +-700 is the exact extreme team difference over every split of the scoring cards;
- OpenSpiel's own random_sim_test passes (with and without serialization);
- the deal: chance node k deals to seat k // 13, uniformly over the undealt cards;
- a scripted deal then random play matches GongzhuState move by move (legal sets, returns);
- observer tensors have the advertised shapes, put other seats at (seat - player) % 4, agree
  with the C++ observation path and differ between players;
- resample_from_infostate keeps the player's hand, public information, information state and
  legal actions, varies the hidden hands, is uniform over consistent deals, works while dealing;
- OpenSpiel's Python IS-MCTS bot plays a full game.
"""

from __future__ import annotations

import importlib.util
import sys

import numba
import numpy as np
import pytest

pyspiel = pytest.importorskip("pyspiel")

import scrofazero.openspiel  # noqa: E402  (registers python_gongzhu)
from scrofazero.games.gongzhu.cards import (  # noqa: E402
    SCORING_BIT,
    cards_to_mask,
    mask_to_cards,
)
from scrofazero.games.gongzhu.deals import hands_of, load_deals  # noqa: E402
from scrofazero.games.gongzhu.rules import GongzhuState  # noqa: E402
from scrofazero.games.gongzhu.scoring import FINAL_SCORE, pile_scores, team_returns  # noqa: E402
from scrofazero.openspiel import gongzhu as sos  # noqa: E402
from scrofazero.sampling.uniform import count_consistent_deals  # noqa: E402


@pytest.fixture(scope="module")
def game():
    return pyspiel.load_game("python_gongzhu")


def deal_state(game, deal):
    state = game.new_initial_state()
    for card in deal:
        state.apply_action(int(card))
    return state


def random_state(game, seed: int, num_plays: int):
    """A state after a random deal and `num_plays` random cards."""
    rng = np.random.default_rng(seed)
    state = deal_state(game, rng.permutation(52))
    for _ in range(num_plays):
        state.apply_action(int(rng.choice(state.legal_actions())))
    return state


# --- registration ---------------------------------------------------------------------------
def test_game_type_and_info(game):
    gt = game.get_type()
    assert gt.short_name == "python_gongzhu"
    assert gt.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
    assert gt.chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
    assert gt.information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert gt.utility == pyspiel.GameType.Utility.ZERO_SUM
    assert gt.reward_model == pyspiel.GameType.RewardModel.TERMINAL
    assert gt.provides_information_state_tensor and gt.provides_observation_tensor
    assert game.num_distinct_actions() == 52 and game.max_chance_outcomes() == 52
    assert game.num_players() == 4 and game.utility_sum() == 0.0
    assert (game.min_utility(), game.max_utility()) == (-700.0, 700.0)
    assert game.max_game_length() == 52 and game.max_chance_nodes_in_history() == 52
    assert game.get_parameters() == {"leader": 0}


def test_leader_parameter(game):
    state = deal_state(pyspiel.load_game("python_gongzhu(leader=2)"), range(52))
    assert state.current_player() == 2
    assert deal_state(game, range(52)).current_player() == 0
    with pytest.raises(ValueError, match="leader"):
        pyspiel.load_game("python_gongzhu(leader=4)")


def test_import_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)  # makes `import pyspiel` fail
    spec = importlib.util.spec_from_file_location("scrofazero._openspiel_probe",
                                                  scrofazero.openspiel.__file__)
    with pytest.raises(ImportError, match=r"scrofazero\[openspiel\]"):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))


@numba.njit(cache=False)
def _extreme_team_difference(score):
    """max over splits of the 16 scoring cards into 4 piles of (p0 + p2) - (p1 + p3)."""
    n = score.shape[0]
    best = np.empty(n, np.int64)  # best two-pile total for a card set
    worst = np.empty(n, np.int64)
    for s in range(n):
        b, w, t = -(10**9), 10**9, s
        while True:
            v = score[t] + score[s ^ t]
            b, w = max(b, v), min(w, v)
            if t == 0:
                break
            t = (t - 1) & s
        best[s], worst[s] = b, w
    top = -(10**9)
    for s in range(n):
        top = max(top, best[s] - worst[(n - 1) ^ s])
    return top


def test_utility_bounds_are_exact():
    assert _extreme_team_difference(np.asarray(FINAL_SCORE, np.int64)) == sos.MAX_UTILITY
    # One split reaching the bound: all hearts + DJ + C10 against a lone SQ.
    piles = [0, 0, 0, 0]
    piles[0] = sum(SCORING_BIT[c] for c in list(range(13, 26)) + [35, 47])
    piles[1] = SCORING_BIT[10]
    assert team_returns(pile_scores(piles)) == [700, -700, 700, -700]


# --- OpenSpiel's conformance test -----------------------------------------------------------
@pytest.mark.parametrize("serialize", [False, True])
def test_random_sim_test(serialize):
    pyspiel.random_sim_test(
        pyspiel.load_game("python_gongzhu(leader=3)"), num_sims=4, serialize=serialize,
        verbose=False,
    )


# --- the deal -------------------------------------------------------------------------------
def test_chance_phase_deals_seat_k_div_13_uniformly(game):
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    dealt = []
    for k in range(52):
        assert state.is_chance_node() and state.current_player() == pyspiel.PlayerId.CHANCE
        outcomes = state.chance_outcomes()
        cards = [a for a, _ in outcomes]
        assert sorted(cards) == sorted(set(range(52)) - set(dealt))
        assert all(p == pytest.approx(1.0 / (52 - k)) for _, p in outcomes)
        card = int(rng.choice(cards))
        state.apply_action(card)
        dealt.append(card)
        assert state.hand_of(k // 13) >> card & 1
        assert sum(bin(state.hand_of(s)).count("1") for s in range(4)) == k + 1
        if k == 0:
            assert state.action_to_string(pyspiel.PlayerId.CHANCE, 10) == "Deal SQ"
    assert state.current_player() == 0
    assert state.game_state.hands == [int(h) for h in hands_of(np.array(dealt))]
    with pytest.raises(ValueError):
        state.chance_outcomes()


def test_bad_chance_action_is_refused(game):
    state = game.new_initial_state()
    state.apply_action(7)
    with pytest.raises(Exception, match="not an undealt card"):
        state.apply_action(7)


# --- play against the reference engine ------------------------------------------------------
@pytest.mark.parametrize("index,leader", [(0, 0), (1, 1), (2, 2), (3, 3), (500, 0), (1023, 1)])
def test_scripted_deal_matches_engine(index, leader):
    game = pyspiel.load_game(f"python_gongzhu(leader={leader})")
    deal = load_deals(limit=1024)[index]
    state = deal_state(game, deal)
    engine = GongzhuState(deal, leader=leader)
    rng = np.random.default_rng(index)
    while not engine.is_terminal():
        assert state.current_player() == engine.current_player
        assert state.legal_actions() == engine.legal_actions()
        for other in range(4):
            if other != engine.current_player:
                assert state.legal_actions(other) == []
        assert state.returns() == [0.0] * 4
        card = int(rng.choice(engine.legal_actions()))
        assert state.action_to_string(engine.current_player, card) == sos.card_code(card)
        state.apply_action(card)
        engine.apply(card)
    assert state.is_terminal() and state.current_player() == pyspiel.PlayerId.TERMINAL
    assert state.returns() == [float(r) for r in engine.returns()]
    assert sum(state.returns()) == 0.0
    assert state.rewards() == state.returns()


def test_illegal_card_raises_and_clone_is_independent(game):
    state = random_state(game, 1, 5)
    legal = state.legal_actions()
    illegal = next(c for c in range(52) if c not in legal)
    with pytest.raises(ValueError):
        state.apply_action(illegal)
    copy = state.clone()
    copy.apply_action(legal[0])
    assert len(state.game_state.history) == 5 and len(copy.game_state.history) == 6


# --- observer -------------------------------------------------------------------------------
def test_tensor_shapes(game):
    assert game.observation_tensor_shape() == [400]
    assert game.information_state_tensor_shape() == [1288]
    state = random_state(game, 2, 9)
    for player in range(4):
        assert len(state.observation_tensor(player)) == 400
        assert len(state.information_state_tensor(player)) == 1288


def test_observer_pieces_are_relative_to_the_player(game):
    state = random_state(game, 3, 22)  # 5 tricks done, 2 cards in the sixth
    gs = state.game_state
    info = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))
    obs = game.make_py_observer()
    for player in range(4):
        info.set_from(state, player)
        d = info.dict
        assert np.array_equal(np.flatnonzero(d["hand"]), mask_to_cards(gs.hands[player]))
        assert np.array_equal(info.tensor, state.information_state_tensor(player))
        obs.set_from(state, player)
        assert np.array_equal(obs.tensor, state.observation_tensor(player))
        for r in range(4):
            seat = (player + r) % 4
            for b in range(16):
                assert d["captured"][r, b] == gs.piles[seat] >> b & 1
            assert [s for s in range(4) if d["voids"][r, s]] == [
                s for s in range(4) if gs.voids[seat] >> s & 1
            ]
            assert [c for c in range(52) if d["played_by"][c, r]] == sorted(
                c for s, c in gs.history if s == seat
            )
        trick_seats = [(gs.leader + i) % 4 for i in range(len(gs.trick))]
        for seat, card in zip(trick_seats, gs.trick):
            assert d["trick"][(seat - player) % 4, card] == 1
        assert d["trick"].sum() == len(gs.trick) == 2
        assert d["leader"][(gs.leader - player) % 4] == 1
        for i, (_, card) in enumerate(gs.history):
            assert d["trick_of_card"][card, i // 4] == 1
        assert d["played"].sum() == d["trick_of_card"].sum() == 22


def test_observations_differ_between_players(game):
    state = random_state(game, 4, 13)
    for fn in ("observation_tensor", "information_state_tensor"):
        tensors = [tuple(getattr(state, fn)(p)) for p in range(4)]
        assert len(set(tensors)) == 4
    for fn in ("observation_string", "information_state_string"):
        assert len({getattr(state, fn)(p) for p in range(4)}) == 4


def test_public_and_all_players_observers(game):
    state = random_state(game, 6, 10)
    public = game.make_py_observer(
        pyspiel.IIGObservationType(perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE)
    )
    public.set_from(state, 0)
    assert "hand" not in public.dict and public.tensor.size == 400 - 52
    everyone = game.make_py_observer(
        pyspiel.IIGObservationType(
            perfect_recall=False, private_info=pyspiel.PrivateInfoType.ALL_PLAYERS
        )
    )
    everyone.set_from(state, 1)
    for r in range(4):
        held = mask_to_cards(state.game_state.hands[(1 + r) % 4])
        assert list(np.flatnonzero(everyone.dict["hands"][r])) == held


# --- resampling -----------------------------------------------------------------------------
def hidden_hands(state, player):
    return tuple(state.hand_of(s) for s in range(4) if s != player)


@pytest.mark.parametrize("num_plays,offset", [(0, 0), (17, 0), (17, 2), (30, 1), (51, 0)])
def test_resample_keeps_the_information_state(game, num_plays, offset):
    state = random_state(game, 10 + num_plays, num_plays)
    player = (state.current_player() + offset) % 4
    sampler = pyspiel.UniformProbabilitySampler(7, 0.0, 1.0)
    hidden = set()
    for _ in range(12):
        new = state.resample_from_infostate(player, sampler)
        assert new.hand_of(player) == state.hand_of(player)
        assert new.information_state_string(player) == state.information_state_string(player)
        assert new.observation_string(player) == state.observation_string(player)
        assert new.information_state_tensor(player) == state.information_state_tensor(player)
        assert new.game_state.history == state.game_state.history
        assert new.game_state.piles == state.game_state.piles
        assert new.game_state.voids == state.game_state.voids
        assert len(new.history()) == len(state.history())
        if player == state.current_player():
            assert new.legal_actions(player) == state.legal_actions(player)
        hidden.add(hidden_hands(new, player))
    if num_plays < 51:
        assert len(hidden) > 1  # the hidden hands are redrawn


def test_resample_during_the_deal(game):
    rng = np.random.default_rng(11)
    state = game.new_initial_state()
    for card in rng.permutation(52)[:30]:
        state.apply_action(int(card))
    sampler = pyspiel.UniformProbabilitySampler(3, 0.0, 1.0)
    hidden = set()
    for _ in range(10):
        new = state.resample_from_infostate(1, sampler)
        assert new.is_chance_node() and len(new.history()) == 30
        assert new.dealt()[13:26] == state.dealt()[13:26]
        assert new.information_state_string(1) == state.information_state_string(1)
        hidden.add(hidden_hands(new, 1))
    assert len(hidden) == 10


def test_resample_bad_arguments(game):
    state = random_state(game, 12, 3)
    with pytest.raises(ValueError, match="player_id"):
        state.resample_from_infostate(4, pyspiel.UniformProbabilitySampler(0.0, 1.0))
    with pytest.raises(ValueError, match="probability_sampler"):
        state.resample_from_infostate(0, lambda: 2.0)


def test_resample_is_uniform_over_consistent_deals(game):
    """Late in a game few deals remain; every consistent one must come up equally often."""
    from scipy.stats import chisquare

    state = random_state(game, 13, 44)  # 11 tricks done: two cards in each hand
    player = state.current_player()
    total = count_consistent_deals(state.game_state.view(player))
    assert 2 <= total <= 90  # 6! / (2! 2! 2!) without voids
    sampler = pyspiel.UniformProbabilitySampler(21, 0.0, 1.0)
    draws = 40 * total
    counts: dict = {}
    for _ in range(draws):
        key = hidden_hands(state.resample_from_infostate(player, sampler), player)
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == total
    assert chisquare(list(counts.values())).pvalue > 1e-4


# --- IS-MCTS --------------------------------------------------------------------------------
def test_ismcts_plays_a_full_game(game):
    from open_spiel.python.algorithms import ismcts, mcts

    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    bot = ismcts.ISMCTSBot(
        game, evaluator, uct_c=300.0, max_simulations=8, random_state=np.random.RandomState(1)
    )
    state = deal_state(game, load_deals(limit=1)[0])
    engine = GongzhuState(load_deals(limit=1)[0])
    while not state.is_terminal():
        card = int(bot.step(state))
        assert card in state.legal_actions()
        state.apply_action(card)
        engine.apply(card)
    assert state.returns() == [float(r) for r in engine.returns()]
    assert abs(state.returns()[0]) <= game.max_utility() and sum(state.returns()) == 0
    assert cards_to_mask(c for _, c in engine.history) == (1 << 52) - 1
