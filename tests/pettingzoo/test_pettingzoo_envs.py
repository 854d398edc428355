"""Tests for scrofazero.pettingzoo (PettingZoo AEC environments for Gongzhu and Fish).

Invariants covered: PettingZoo's own api_test passes for both games (Fish at 6 and 8 seats);
in random legal games the action mask of the agent to move equals the rules engine's legal
moves at every step (checked on an independent replay of the same moves), every other agent's
mask is empty, and the final rewards equal the rules engine's scoring of the replayed game;
the same seed gives the same deal; render returns text; bad settings are refused by name; the
example plays one game of the shipped network against Mr. Greed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test  # noqa: E402

from scrofazero.games.fish.cards import SET_SIZE, set_cards  # noqa: E402
from scrofazero.games.fish.rules import FishState  # noqa: E402
from scrofazero.games.gongzhu.rules import GongzhuState  # noqa: E402
from scrofazero.pettingzoo import fish, gongzhu  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("make", [gongzhu.env, fish.env, lambda: fish.env(num_players=6)],
                         ids=["gongzhu", "fish8", "fish6"])
def test_pettingzoo_api_test_passes(make):
    api_test(make(), num_cycles=200)


def _random_game(env, rng, check):
    """Play random legal moves to the end; `check(agent, mask, action)` before each move.
    Returns the final rewards."""
    final = {}
    for agent in env.agent_iter():
        observation, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            final[agent] = reward
            env.step(None)
            continue
        for other in env.agents:
            if other != agent:
                assert not env.observe(other)["action_mask"].any(), other
        mask = observation["action_mask"]
        action = int(rng.choice(np.flatnonzero(mask)))
        check(agent, mask, action)
        env.step(action)
    return final


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gongzhu_masks_and_rewards_follow_the_rules(seed):
    env = gongzhu.env()
    env.reset(seed=seed)
    start = env.unwrapped.state_
    replay = GongzhuState.from_hands(list(start.hands), leader=start.first_leader)

    def check(agent, mask, action):
        assert agent == f"player_{replay.current_player}"
        assert np.flatnonzero(mask).tolist() == replay.legal_actions()
        replay.apply(action)

    final = _random_game(env, np.random.default_rng(seed), check)
    assert replay.is_terminal()
    assert final == {f"player_{s}": r for s, r in enumerate(replay.returns())}
    assert final["player_0"] == final["player_2"] == -final["player_1"]


def _fish_legal(state: FishState, layout: fish.Layout, calling: bool) -> list[int]:
    if calling:
        return list(range(layout.place_base, layout.size))
    asks = [t * layout.cards + c for t, c in state.legal_asks()]
    calls = [layout.call_base + s for s in state.legal_call_sets(state.current_player)]
    return sorted(asks + calls)


@pytest.mark.parametrize("num_players,seed", [(8, 0), (8, 1), (6, 2)])
def test_fish_masks_and_rewards_follow_the_rules(num_players, seed):
    env = fish.env(num_players=num_players)
    env.reset(seed=seed)
    raw = env.unwrapped
    layout = raw.layout
    replay = FishState.new(raw.params, raw.state_.initial_hands)
    call: list = []  # [set_id, seats named so far] while a call is being placed

    def check(agent, mask, action):
        me = replay.current_player
        assert agent == f"player_{me}"
        assert np.flatnonzero(mask).tolist() == _fish_legal(replay, layout, bool(call))
        if call:
            call[1].append(me % 2 + 2 * (action - layout.place_base))
            if len(call[1]) == SET_SIZE:
                replay.call(me, call[0], list(zip(set_cards(call[0]), call[1])))
                call.clear()
        elif action >= layout.call_base:
            call.extend([action - layout.call_base, []])
        else:
            replay.ask(action // layout.cards, action % layout.cards)

    final = _random_game(env, np.random.default_rng(seed), check)
    assert replay.is_terminal
    assert final == {f"player_{s}": r for s, r in enumerate(replay.returns())}
    assert raw.state_.snapshot() == replay.snapshot()


@pytest.mark.parametrize("make", [gongzhu.env, fish.env], ids=["gongzhu", "fish"])
def test_same_seed_same_deal_and_text_render(make):
    a, b = make(render_mode="ansi"), make(render_mode="ansi")
    a.reset(seed=7)
    b.reset(seed=7)
    assert a.render() == b.render()
    b.reset(seed=8)
    assert a.render() != b.render()
    agent = a.agent_selection
    assert not np.array_equal(a.observe(agent)["observation"], b.observe(agent)["observation"])


def test_fish_ask_history_is_public_knowledge():
    env = fish.raw_env()
    env.reset(seed=3)
    state = env.state_
    target, card = state.legal_asks()[0]
    holder = state.holder(card)
    env.step(target * env.layout.cards + card)
    holds, lacks = fish.public_knowledge(env.state_)
    if holder == target:
        assert holds[0, card] == 1 and lacks[target, card] == 1
    else:
        assert holds[:, card].sum() == 0 and lacks[target, card] == 1 and lacks[0, card] == 1


@pytest.mark.parametrize("make,kwargs,needle", [
    (gongzhu.env, {"render_mode": "rgb"}, "render_mode"),
    (gongzhu.env, {"leader": 4}, "leader"),
    (fish.env, {"num_players": 7}, "num_players"),
    (fish.env, {"first_player": 9}, "first_player"),
])
def test_bad_settings_are_refused_by_name(make, kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        make(**kwargs)


def test_example_plays_one_game_against_greed(capsys):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import pettingzoo_gongzhu  # examples/ is not a package: imported by path
    finally:
        sys.path.remove(str(ROOT / "examples"))
    pettingzoo_gongzhu.main(["--seed", "1"])
    lines = capsys.readouterr().out.splitlines()
    team0 = float(lines[0].rsplit(" ", 1)[1])
    team1 = float(lines[1].rsplit(" ", 1)[1])
    assert team0 == -team1 and "raw network" in lines[0] and "Greed" in lines[1]
