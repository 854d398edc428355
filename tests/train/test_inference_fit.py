"""The fit of the inference networks (scrofazero/train/inference_fit.py).

Invariants: a short fit of the card-location network on games whose plays carry information
beats the exact uniform prior on held-out games, and its file loads with its training summary;
`train.py learner=belief` runs under the harness, and a fit killed after a checkpoint and resumed
ends with exactly the weights and logs of an uninterrupted one; a fresh start refuses a folder
that holds a fit; max_games and exclude choose the games; bad settings are refused by name.
"""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from composed import config, refused

from scrofazero import entry
from scrofazero.nn.belief import load_belief
from scrofazero.settings import check_bounds
from scrofazero.train import inference_fit as F
from scrofazero.train.belief_report import report
from scrofazero.train.hidden_games import KINDS, generate, load_shards


@pytest.fixture(scope="module")
def if_games(tmp_path_factory):
    # Mr. If plays by fixed rules, so its plays tell where cards are.
    return generate(tmp_path_factory.mktemp("games") / "g", games=1200, mix="if:if", seed=5,
                    shard_games=600, progress=False)


@pytest.fixture(scope="module")
def mixed_games(tmp_path_factory):
    return generate(tmp_path_factory.mktemp("mixed") / "g", games=24,
                    mix="if:random=1,greed:random=1", seed=8, shard_games=12, progress=False)


def test_fit_learns_and_reports(if_games, tmp_path):
    settings = F.InferenceFitConfig(data=[str(if_games)], hidden=64, num_blocks=1, epochs=2,
                                    batch=256, val_fraction=0.1, dropout=0.0, weight_decay=0.0)
    summary = F.fit(settings, F.TASKS["belief"], 0, tmp_path / "b.pt")
    assert len(summary["history"]) == 2
    model = load_belief(tmp_path / "b.pt")
    assert model.meta["games"] == 1200 and model.meta["task"] == "belief"
    result = report(if_games, tmp_path / "b.pt", games=20, val_fraction=0.1)
    # Measured: 1.037 against 1.061 nats per uncertain card.
    assert result["all"]["logloss_belief"] < result["all"]["logloss_uniform"] - 0.01
    assert result["all"]["logloss_product"] < result["all"]["logloss_uniform"] - 0.01


def test_max_games_and_exclude_choose_the_games(mixed_games):
    everything = load_shards(mixed_games)
    greedy = np.isin(everything.kinds, [list(KINDS).index("greed")]).any(axis=1)
    assert 0 < greedy.sum() < len(everything)
    records, weights = F.load_games(F.InferenceFitConfig(data=[str(mixed_games)],
                                                         exclude=["greed"]))
    assert len(records) == (~greedy).sum() and len(weights) == len(records)
    np.testing.assert_array_equal(records.cards, everything.cards[~greedy])
    first, _ = F.load_games(F.InferenceFitConfig(data=[str(mixed_games)], max_games=5))
    np.testing.assert_array_equal(first.deal, everything.deal[:5])
    with pytest.raises(ValueError, match=r"inference.exclude\[0\]='bogus': choose greed or"):
        check_bounds(F.InferenceFitConfig(data=["x"], exclude=["bogus"]), "inference")
    with pytest.raises(ValueError, match="one positive weight per data folder"):
        F.load_games(F.InferenceFitConfig(data=[str(mixed_games)], data_weights=[1.0, 2.0]))


def _fit_args(data, tmp_path, run):
    return ["learner=belief", f"inference.data=[{data}]", "inference.hidden=16",
            "inference.num_blocks=1", "inference.epochs=3", "inference.batch=64",
            "inference.val_games=4", "inference.checkpoint_every=2", "inference.eval_every=2",
            f"run={run}", f"checkpoint_dir={tmp_path / 'ckpt'}", f"log_dir={tmp_path / 'runs'}",
            "seed=4"]


def test_killed_fit_resumes_exactly(mixed_games, tmp_path, monkeypatch):
    whole = entry.train(config("train", *_fit_args(mixed_games, tmp_path, "whole")))
    steps = whole["steps"]
    assert steps >= 6 and (tmp_path / "runs" / "whole").is_dir()

    def dies_at_four(record):
        if record["step"] == 4:
            raise KeyboardInterrupt  # a kill after the checkpoint at step 2
    original = F.fit
    monkeypatch.setattr(F, "fit", lambda *a, **k: original(*a[:6], dies_at_four, **k))
    with pytest.raises(KeyboardInterrupt):
        entry.train(config("train", *_fit_args(mixed_games, tmp_path, "killed")))
    monkeypatch.setattr(F, "fit", original)
    killed = tmp_path / "ckpt" / "killed"
    assert torch.load(killed / "fit_state.pt", weights_only=False)["step"] == 2
    assert not (killed / "latest.pt").exists()  # evaluate.py would take it for its network
    resumed = entry.train(config("train", *_fit_args(mixed_games, tmp_path, "killed"),
                                 "resume=true"))
    assert resumed["steps"] == steps
    a = load_belief(tmp_path / "ckpt" / "whole" / "belief.pt").net.state_dict()
    b = load_belief(killed / "belief.pt").net.state_dict()
    for name in a:
        assert torch.equal(a[name], b[name]), name
    lines = [(killed / "fit.jsonl").read_text(), (tmp_path / "ckpt" / "whole" /
                                                  "fit.jsonl").read_text()]
    drop_minutes = [[{k: v for k, v in json.loads(x).items() if k != "minutes"}
                     for x in text.splitlines()] for text in lines]
    assert drop_minutes[0] == drop_minutes[1]


def test_fresh_start_and_bad_settings_are_refused(mixed_games, tmp_path, capsys, monkeypatch):
    args = _fit_args(mixed_games, tmp_path, "one")
    entry.train(config("train", *args, "inference.epochs=0.5"))
    err = refused(entry.train, config("train", *args), capsys, monkeypatch)
    assert "resume=true" in err
    err = refused(entry.train, config("train", "learner=belief"), capsys, monkeypatch)
    assert "inference.data" in err
    err = refused(entry.train, config("train", *args, "inference.dropout=1.0", "run=two"),
                  capsys, monkeypatch)
    assert "inference.dropout" in err
    assert not Path(tmp_path / "ckpt" / "two").exists()
