"""The warm start from Mr. Greed's games (train/warm_start.py): records, fit and the loop hook.

- every recorded position is the true position of a replayed game (the slow reference: the
  single-game engine, one ply at a time), its policy target is one legal card, and its value
  target is that game's final team difference minus the mover's current one;
- the same seed gives the same games;
- the fit learns the records (the loss falls well below its start);
- train.py with train.warm_start.games > 0 starts self-play from the fitted network, counts
  the warm start's time as training time, records its summary in the checkpoint, and a resume
  does not repeat it.
"""


import numpy as np
import pytest
import torch
from composed import script

from scrofazero.games.gongzhu.batch import StateBatch
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.checkpoint import load_checkpoint
from scrofazero.nn.encoding import encode
from scrofazero.nn.network import PolicyValueNet
from scrofazero.train.warm_start import (
    WarmStartConfig,
    check_warm_start,
    fit,
    greed_records,
)


@pytest.fixture(scope="module")
def records():
    return greed_records(3, np.random.default_rng(5), greed_samples=4)


def test_records_are_the_replayed_games(records):
    assert records["inputs"].shape == (3 * 52, 434)
    for g in range(3):
        state = GongzhuState(records["deals"][g], leader=int(records["first_leader"][g]))
        rows = np.flatnonzero(records["game"] == g)
        assert records["ply"][rows].tolist() == list(range(52))
        cards, now = [], []
        for row in rows:
            np.testing.assert_array_equal(records["inputs"][row].astype(np.float32),
                                          encode(StateBatch.from_states([state]))[0])
            np.testing.assert_array_equal(records["legal"][row], state.legal_mask())
            target = records["policy_target"][row]
            assert target.sum() == 1.0 and target.max() == 1.0
            card = int(target.argmax())
            assert records["legal"][row, card]
            assert records["seat"][row] == state.current_player
            now.append(state.returns()[state.current_player])
            cards.append(card)
            state.apply(card)
        assert state.is_terminal()
        final = state.returns()
        assert records["final_returns"][g].tolist() == final
        seats = records["seat"][rows]
        expected = [final[s] - c for s, c in zip(seats, now)]
        assert records["value_target"][rows].tolist() == expected
        # The last ply's target is exactly what the last card changes.
        assert records["value_target"][rows[-1]] == final[seats[-1]] - now[-1]


def test_same_seed_same_games(records):
    again = greed_records(3, np.random.default_rng(5), greed_samples=4)
    for key in ("inputs", "policy_target", "value_target", "deals", "first_leader"):
        np.testing.assert_array_equal(again[key], records[key])
    other = greed_records(3, np.random.default_rng(6), greed_samples=4)
    assert not np.array_equal(other["deals"], records["deals"])


def test_fit_learns_the_records(records):
    torch.manual_seed(0)
    model = PolicyValueNet(hidden=[64, 32], num_blocks=1)
    cfg = WarmStartConfig(games=3, epochs=40, lr=2e-3, minibatch=32)
    history = fit(model, records, cfg, np.random.default_rng(0))
    assert len(history) == 40
    first, last = history[0], history[-1]
    assert last["loss/policy"] < 0.5 * first["loss/policy"]
    assert last["loss/value"] < 0.5 * first["loss/value"]


@pytest.mark.parametrize("field, value", [("games", -1), ("epochs", 0), ("minibatch", 0),
                                          ("greed_samples", 0), ("lr", 0.0),
                                          ("value_weight", -1.0)])
def test_senseless_settings_are_named(field, value):
    cfg = WarmStartConfig(games=2)
    setattr(cfg, field, value)
    with pytest.raises(ValueError, match=f"train.warm_start.{field}"):
        check_warm_start(cfg)


def test_train_with_a_warm_start(tmp_path):
    common = ("experiment=smoke", "train.games_per_batch=2", "train.eval_every=0",
              "progress=false", f"checkpoint_dir={tmp_path / 'ckpt'}",
              f"log_dir={tmp_path / 'runs'}", "train.max_batches=1")
    warm = ("train.warm_start.games=2", "train.warm_start.epochs=2",
            "train.warm_start.greed_samples=2")

    def train(*args):
        done = script("train.py", *common, *args)
        assert done.returncode == 0, done.stderr
        return done

    train("run=cold")
    train("run=warm", *warm)
    cold0 = load_checkpoint(tmp_path / "ckpt" / "cold" / "games_0.pt")
    warm0 = load_checkpoint(tmp_path / "ckpt" / "warm" / "games_0.pt")
    # Same seed, so the same initial weights: the warm copy differs only by the fit.
    assert any(not torch.equal(cold0["model"][k], warm0["model"][k]) for k in cold0["model"])
    summary = warm0["extra"]["warm_start"]
    assert summary["games"] == 2 and summary["positions"] == 104
    assert len(summary["epochs"]) == 2
    assert warm0["extra"]["games"] == 0  # self-play games only
    assert warm0["extra"]["train_seconds"] >= summary["play_seconds"] + summary["fit_seconds"]
    assert cold0["extra"]["warm_start"] is None
    # A resume goes on with self-play and keeps the summary; no second warm start.
    train("run=warm", *warm, "resume=true", "train.max_batches=2")
    latest = load_checkpoint(tmp_path / "ckpt" / "warm" / "latest.pt")
    assert latest["step"] == 2 and latest["extra"]["warm_start"] == summary
