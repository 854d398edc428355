"""The inference networks' games (scrofazero/train/hidden_games.py).

Invariants: the generator refuses the standard evaluation deals in any rotation; generated games
are legal hidden-hand games, reproducible from the seed and resumable shard by shard; positions
and targets are the mover's true view and the true holders of exactly the cards it cannot see;
bad mixes are refused by name; a player kind plays as named whatever the players' defaults; the
module's command line takes typed key=value settings and refuses a bad one in one line.
"""

from pathlib import Path

import numpy as np
import pytest

from scrofazero.games.gongzhu.deals import load_deals, rotate_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.behaviour import BehaviourNet, save_behaviour
from scrofazero.nn.belief import features, view_positions
from scrofazero.train import hidden_games as B

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


def test_bad_mix_is_refused():
    with pytest.raises(ValueError, match="unknown player kind 'bogus'"):
        B.parse_mix("greed:bogus")
    with pytest.raises(ValueError, match="must be > 0"):
        B.parse_mix("greed:greed=0")


def test_player_kinds_play_as_named_whatever_the_defaults(tmp_path):
    """'scrofazero' in a mix is the full player as it was before the belief network (stratified
    deals, IEC), 'raw' the paper's raw player (uniform deals): the committed round-0 games were
    played so, and a regenerated shard must be the same games."""
    full = B._settings_kwargs("scrofazero", B.KINDS["scrofazero"][1])
    assert full["sampling"].method == "stratified" and full["sampling"].per_stratum == 2
    assert full["weighting"].enabled is True
    assert B.KINDS["raw"][1] == {"sampling": {"method": "uniform"}}
    behaviour = save_behaviour(tmp_path / "b.pt", BehaviourNet(16, 0))
    raw = B._build(["raw", "belief_raw", "policy_raw"],
                   str(ROOT / "models" / "scrofazero_small.pt"), None, str(behaviour))
    assert raw["raw"].sampling.method == "uniform" and raw["raw"].sampling.num_deals == 5
    assert raw["belief_raw"].sampling.method == "belief"
    assert raw["policy_raw"].sampling.method == "policy"
    assert raw["policy_raw"].sampling.behaviour == str(behaviour)
    # a shard stores a player kind by its index: the kinds of the committed games keep theirs
    assert list(B.KINDS)[:7] == ["greed", "if", "random", "raw", "scrofazero", "belief_raw",
                                 "belief"]
    belief = B._settings_kwargs("scrofazero", B.KINDS["belief"][1])
    assert belief["sampling"].method == "belief" and belief["weighting"].enabled is False


def test_command_line_takes_typed_settings(tmp_path, capsys):
    out = tmp_path / "g"
    B.run_module(B.GenerateConfig, B.generate_games,
                 [f"out={out}", "games=2", "mix=greed:random=1", "seed=3", "shard_games=2",
                  "checkpoint=" + str(ROOT / "models" / "scrofazero_small.pt")])
    assert len(B.load_shards(out)) == 2
    capsys.readouterr()
    for argv, named in ((["out=x", "games=0"], "games=0"), (["games=2"], "out"),
                        (["out=x", "games=2", "bogus=1"], "bogus")):
        with pytest.raises(SystemExit) as exit_:
            B.run_module(B.GenerateConfig, B.generate_games, argv)
        assert exit_.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith("error:") and named in err and len(err.splitlines()) == 1
