"""The player registry (scrofazero/agents/registry.py) and the explanation a player gives.

Invariants: every registered player's settings fields are keyword arguments of its builder with
the same defaults (the names a user gives are the ones the builder receives), and its default
settings build it; evaluate.py's settings (greed.*, raw.*, scrofazero.*: the groups named after
the players, their settings classes) arrive as those arguments; a bad setting is named as the
user spelled it; `decide` gives the card `act` gives from the same rng, and for the ScrofaZero
player an explanation whose values are its searched scores and whose belief is a distribution
over seats built from its weighted deals, seats it can see excluded; a player with only `act`
explains nothing.
"""

import dataclasses
import inspect

import numpy as np
import pytest
import torch
from omegaconf import OmegaConf
from positions import random_position

from scrofazero.agents import PLAYERS, decide, make_agent, player_spec
from scrofazero.agents.raw_net import RawSettings
from scrofazero.agents.registry import NoSettings
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent, ScrofaZeroSettings
from scrofazero.config import EvaluateConfig
from scrofazero.eval.runner import _agent_kwargs
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.sampler import SamplingConfig


def tiny_net(seed=0):
    torch.manual_seed(seed)
    return PolicyValueNet(hidden=(32,), num_blocks=1)


@pytest.mark.parametrize("name", list(PLAYERS))
def test_settings_are_the_builders_arguments(name):
    spec = PLAYERS[name]
    params = inspect.signature(spec.build).parameters
    defaults = spec.settings()
    for f in dataclasses.fields(spec.settings):
        assert f.name in params, f"{name}: setting {f.name} is not an argument of its builder"
        if params[f.name].default is not None:  # None: the builder's own default object
            assert params[f.name].default == getattr(defaults, f.name), (name, f.name)
    assert spec.about and spec.title and "\n" not in spec.about
    network = {"model": tiny_net()} if spec.network else {}
    agent = spec.make(**network)
    assert agent.name == name


def test_evaluates_settings_reach_the_builder_by_its_names(tmp_path):
    cfg = OmegaConf.structured(EvaluateConfig)
    cfg.checkpoint = str(tmp_path / "net.pt")  # found, not loaded
    (tmp_path / "net.pt").write_bytes(b"")
    cfg.greed.num_samples, cfg.raw.sampling.num_deals, cfg.raw.mode = 7, 3, "policy"
    cfg.scrofazero.sampling.per_stratum = 1
    cfg = OmegaConf.to_object(cfg)  # evaluate.py's settings as the runner receives them
    kwargs, checkpoint = _agent_kwargs(cfg, ["greed", "raw", "scrofazero", "if"], 1)
    assert kwargs["greed"] == {"num_samples": 7} and "if" not in kwargs
    assert checkpoint == cfg.checkpoint
    assert kwargs["raw"] == {"mode": "policy", "checkpoint": checkpoint,
                             "sampling": SamplingConfig(method="belief", num_deals=3)}
    assert kwargs["scrofazero"]["sampling"].per_stratum == 1
    assert set(kwargs["scrofazero"]) == {"search", "sampling", "weighting", "endgame",
                                         "precision", "checkpoint"}
    assert make_agent("greed", **kwargs["greed"]).num_samples == 7
    # evaluate.py's player groups are the players' settings classes
    fields = {f.name: f.default_factory for f in dataclasses.fields(EvaluateConfig)}
    assert fields["scrofazero"] is ScrofaZeroSettings and fields["raw"] is RawSettings


def test_a_bad_setting_is_named_as_given():
    greed = player_spec("greed")
    with pytest.raises(ValueError, match="greed.num_samples=0: must be greater than or equal to 1"):
        greed.settings_from({"num_samples": 0})
    with pytest.raises(ValueError, match="samples is not a setting of player 'greed'"):
        greed.settings_from({"samples": 3})
    with pytest.raises(TypeError, match="takes GreedSettings"):
        greed.arguments(NoSettings())
    with pytest.raises(ValueError, match="plays without a network"):
        greed.arguments(checkpoint="x.pt")
    with pytest.raises(ValueError, match="unknown player 'chess'; choose from scrofazero"):
        player_spec("chess")


def _unforced(seed):
    for plies in range(10, 40):
        state = random_position(seed, plies)
        if len(state.legal_actions()) > 1:
            return state
    raise AssertionError("no unforced position")


def test_decide_explains_the_card_act_plays():
    agent = ScrofaZeroAgent(model=tiny_net(), sampling=dataclasses.replace(
        ScrofaZeroSettings().sampling, per_stratum=1))
    state = _unforced(3)
    view = state.view(state.current_player)
    card = agent.act(view, np.random.default_rng(5))
    scores = agent.last.scores
    again, why = agent.decide(view, np.random.default_rng(5))
    assert again == card and not why.forced and why.deals == agent.last.deals
    assert why.values == tuple(float(v) for v in scores)
    unseen = [c for c in range(52) if view.unseen >> c & 1]
    # the network's float32 softmax: rows sum to 1 within float32 rounding
    np.testing.assert_allclose(why.belief[unseen].sum(axis=1), 1.0, rtol=1e-6)
    assert why.belief[unseen, view.seat].max() == 0  # never where it can see
    assert 1 <= why.ess <= why.deals
    random_card, nothing = decide(make_agent("random"), view, np.random.default_rng(5))
    assert random_card in view.legal_actions() and nothing is None


def test_a_forced_move_is_explained_as_forced():
    state = random_position(4, 48)
    while len(state.legal_actions()) > 1:
        state.apply(state.legal_actions()[0])
    card, why = decide(ScrofaZeroAgent(model=tiny_net()), state.view(state.current_player),
                       np.random.default_rng(0))
    assert card == state.legal_actions()[0]
    assert why.forced and why.values == (None,) and why.belief is None and why.deals == 0
