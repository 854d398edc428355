"""The card-location network's report (scrofazero/train/belief_report.py).

Invariants: the report scores held-out games against the exact uniform prior, by trick; the IEC
comparison scores the same positions for every method, and shrunk all the way to the prior both
sampled estimates are the prior; the command line writes what it prints; the weighing report
scores the belief, the weighed pools and the prior on the same cards (an untrained behaviour
network's pool scores as the prior); the true-state sampling ratio is 1 for the uniform sampler
and the number of consistent worlds for a sampler sure of the truth.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from scrofazero.nn.behaviour import BehaviourNet, save_behaviour
from scrofazero.nn.belief import BeliefNet, save_belief
from scrofazero.sampling.belief import log_partition
from scrofazero.sampling.particles import WeighingConfig
from scrofazero.train import belief_report as R
from scrofazero.train.hidden_games import generate, load_shards, positions

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def games(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("games") / "g", games=40, mix="greed:if=1", seed=6,
                    shard_games=40, progress=False)


@pytest.fixture(scope="module")
def prior_net(tmp_path_factory):
    path = tmp_path_factory.mktemp("net") / "b.pt"
    save_belief(path, BeliefNet(16, 0))  # output layer zero: the hand-size prior
    return path


def test_iec_comparison_scores_the_same_positions(games, prior_net):
    small = str(ROOT / "models" / "scrofazero_small.pt")
    result = R.iec_comparison(games, prior_net, small, games=2, draws=8, val_fraction=0.5)
    assert result["positions"] == 26
    assert 1.0 <= result["iec_mean_ess"] <= 8.0
    for part in ("all", "deciding", "tricks_7_13"):
        for name in ("belief", "iec", "equal_draws", "uniform"):
            assert 0.0 < result[part][name]["p_true"] < 1.0
    # Shrunk all the way to the prior, both sampled estimates are the prior itself.
    prior_only = R.iec_comparison(games, prior_net, small, games=2, draws=8,
                                  val_fraction=0.5, shrink=1.0)
    for name in ("iec", "equal_draws"):
        assert prior_only["all"][name]["logloss"] == pytest.approx(
            prior_only["all"]["uniform"]["logloss"])


def test_prior_network_scores_as_the_prior(games, prior_net, tmp_path, capsys):
    # The untrained network is the hand-size prior, which under the exact sizes and voids is
    # the uniform prior: its sampled deals score exactly as the prior does.
    out = tmp_path / "r.json"
    R.print_report(R.ReportConfig(data=[str(games)], beliefs=str(prior_net), games=3,
                                  json=str(out)))
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads(out.read_text())
    assert printed["all"] == stored["all"] and len(stored["by_trick"]) == 13
    assert stored["all"]["logloss_sampled"] == pytest.approx(stored["all"]["logloss_uniform"],
                                                             abs=1e-3)
    with pytest.raises(ValueError, match="data="):
        R.print_report(R.ReportConfig())


def test_weighing_report_scores_every_method_on_the_same_cards(games, prior_net, tmp_path):
    # An untrained behaviour network plays uniformly over the legal cards, so the policy pool
    # knows what the uniform prior knows: its belief scores about as the prior does.
    behaviour = save_behaviour(tmp_path / "b.pt", BehaviourNet(16, 0))
    weighing = WeighingConfig(proposals=400, keep=400)
    result = R.weighing_report(games, prior_net, behaviour, games=1, val_fraction=0.5,
                               weighing=weighing, greed_draws=8)
    every = result["all"]
    assert every["cards"] > 0 and set(every) >= {"belief", "policy", "uniform"}
    assert every["policy"]["cards"] == every["uniform"]["cards"] == every["cards"]
    assert every["policy"]["p_true"] == pytest.approx(every["uniform"]["p_true"], abs=0.03)
    assert len(result["by_trick"]) == 13 and result["ess"]["policy"] > 1
    if result["with_greed"]["cards"]:  # the game had a Mr. Greed beside seat 0
        assert result["with_greed"]["posterior"]["cards"] == result["with_greed"]["cards"]


def test_report_command_adds_the_weighed_worlds(games, prior_net, tmp_path, capsys):
    behaviour = save_behaviour(tmp_path / "b.pt", BehaviourNet(16, 0))
    out = tmp_path / "r.json"
    R.print_report(R.ReportConfig(data=[str(games)], beliefs=str(prior_net), games=1,
                                  weighing_games=1, behaviour=str(behaviour), greed_draws=4,
                                  json=str(out)))
    weighing = json.loads(out.read_text())["weighing"]
    assert weighing["games"] == 1 and weighing["all"]["policy"]["cards"] > 0
    assert '"ess"' in capsys.readouterr().out


def test_true_state_ratio_is_zero_for_uniform_and_log_count_for_the_truth(games):
    records = load_shards(games)
    g, plies = np.array([0, 0, 1]), np.array([10, 30, 41])
    p, target, allowed = positions(records, g, plies)
    uniform = allowed.astype(float)
    np.testing.assert_allclose(R.true_state_log_ratio(p, uniform, target, fit=False), 0.0,
                               atol=1e-9)
    # a belief certain of the truth: the true world has probability ~1, the ratio is the number
    # of consistent worlds
    sure = np.where(allowed, 1e-9, 0.0)
    rows, cards = np.nonzero(target >= 0)
    sure[rows, cards, target[rows, cards]] = 1.0
    ratio = R.true_state_log_ratio(p, sure, target, fit=False)
    for row in range(len(p)):
        unseen = np.flatnonzero(target[row] >= 0)
        sizes = [int(np.sum(target[row] == j)) for j in range(3)]
        count = log_partition(allowed[row, unseen].astype(float), sizes)
        assert ratio[row] == pytest.approx(count, abs=1e-3)
