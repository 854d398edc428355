"""Training data and training of the card-location network (scrofazero/train/belief.py).

Invariants: the generator refuses the standard evaluation deals in any rotation; generated games
are legal hidden-hand games, reproducible from the seed and resumable shard by shard; positions
and targets are the mover's true view and the true holders of exactly the cards it cannot see;
a short fit lowers the held-out loss on games whose plays carry information, and its file
loads; the report compares against the exact uniform prior; bad mixes are refused by name.
"""

from pathlib import Path

import numpy as np
import pytest

from scrofazero.games.gongzhu.deals import load_deals, rotate_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.belief import BeliefNet, features, load_belief, save_belief, view_positions
from scrofazero.train import belief as B

ROOT = Path(__file__).resolve().parents[2]


def test_generator_refuses_standard_deals():
    deals = load_deals(limit=3)
    for deal in deals:
        for shift in range(4):
            with pytest.raises(B.StandardDealError):
                B.check_not_standard(rotate_deal(deal, shift))
    B.check_not_standard(np.random.default_rng(0).permutation(52))


def test_generated_games_replay_and_reproduce(tmp_path):
    out = B.generate(tmp_path / "g", games=6, mix="greed:random=1,if:greed=1", seed=3,
                     shard_games=4, progress=False)
    records = B.load_shards(out)
    assert len(records) == 6
    for g in range(6):
        state = GongzhuState(records.deal[g], int(records.leader[g]))
        for card, seat in zip(records.cards[g], records.seats[g]):
            assert state.current_player == seat
            state.apply(int(card))  # raises on an illegal play
    # A removed shard is played again, identically (resume).
    first = (out / "shard_00001.npz").read_bytes()
    (out / "shard_00001.npz").unlink()
    B.generate(out, games=6, mix="greed:random=1,if:greed=1", seed=3, shard_games=4,
               progress=False)
    again = B.load_shards(out)
    np.testing.assert_array_equal(again.cards, records.cards)
    assert len(first) > 0
    with pytest.raises(ValueError, match="other settings"):
        B.generate(out, games=6, mix="greed:greed", seed=3, shard_games=4, progress=False)


def test_positions_are_the_movers_view(tmp_path):
    out = B.generate(tmp_path / "g", games=2, mix="random:greed", seed=4, shard_games=2,
                     progress=False)
    records = B.load_shards(out)
    for g in range(2):
        state = GongzhuState(records.deal[g], int(records.leader[g]))
        for ply in range(52):
            view = state.view(state.current_player)
            p, target, allowed = B.positions(records, np.array([g]), np.array([ply]))
            np.testing.assert_array_equal(features(p), features(view_positions([view])))
            for card in range(52):
                if view.unseen >> card & 1:
                    holder = next(s for s in range(4) if state.hands[s] >> card & 1)
                    assert target[0, card] == (holder - view.seat) % 4 - 1
                else:
                    assert target[0, card] == -1
            state.apply(int(records.cards[g, ply]))


def test_fit_learns_and_reports(tmp_path):
    # Mr. If plays by fixed rules, so its plays tell where cards are: a short fit must beat the
    # uniform prior on held-out games.
    data = B.generate(tmp_path / "g", games=1200, mix="if:if", seed=5, shard_games=600,
                      progress=False)
    summary = B.fit(data, tmp_path / "b.pt", hidden=64, num_blocks=1, epochs=2, batch=256,
                    lr=1e-3, val_fraction=0.1, progress=False)
    assert len(summary["history"]) == 2
    model = load_belief(tmp_path / "b.pt")
    assert model.meta["games"] == 1200
    result = B.report(data, tmp_path / "b.pt", games=20, val_fraction=0.1)
    # Measured: 1.037 against 1.061 nats per uncertain card.
    assert result["all"]["logloss_belief"] < result["all"]["logloss_uniform"] - 0.01
    assert result["all"]["logloss_product"] < result["all"]["logloss_uniform"] - 0.01
    assert len(result["by_trick"]) == 13


def test_bad_mix_is_refused():
    with pytest.raises(ValueError, match="unknown player kind 'bogus'"):
        B.parse_mix("greed:bogus")
    with pytest.raises(ValueError, match="must be > 0"):
        B.parse_mix("greed:greed=0")


def test_player_kinds_play_as_named_whatever_the_defaults():
    """'scrofazero' in a mix is the full player as it was before the belief network (stratified
    deals, IEC), 'raw' the paper's raw player (uniform deals): the committed round-0 games were
    played so, and a regenerated shard must be the same games."""
    full = B._settings_kwargs("scrofazero", B.KINDS["scrofazero"][1])
    assert full["sampling"].method == "stratified" and full["sampling"].per_stratum == 2
    assert full["weighting"].enabled is True
    assert B.KINDS["raw"][1] == {"sampling": "uniform"}
    belief = B._settings_kwargs("scrofazero", B.KINDS["belief"][1])
    assert belief["sampling"].method == "belief" and belief["weighting"].enabled is False


def test_iec_comparison_scores_the_same_positions(tmp_path):
    data = B.generate(tmp_path / "g", games=40, mix="greed:if=1", seed=6, shard_games=40,
                      progress=False)
    net = BeliefNet(16, 0)
    save_belief(tmp_path / "b.pt", net)  # output layer zero: the hand-size prior
    small = str(ROOT / "models" / "scrofazero_small.pt")
    result = B.iec_comparison(data, tmp_path / "b.pt", small, games=2, draws=8, val_fraction=0.5)
    assert result["positions"] == 26
    assert 1.0 <= result["iec_mean_ess"] <= 8.0
    for part in ("all", "deciding", "tricks_7_13"):
        for name in ("belief", "iec", "equal_draws", "uniform"):
            assert 0.0 < result[part][name]["p_true"] < 1.0
    # Shrunk all the way to the prior, both sampled estimates are the prior itself.
    prior_only = B.iec_comparison(data, tmp_path / "b.pt", small, games=2, draws=8,
                                  val_fraction=0.5, shrink=1.0)
    for name in ("iec", "equal_draws"):
        assert prior_only["all"][name]["logloss"] == pytest.approx(
            prior_only["all"]["uniform"]["logloss"])
