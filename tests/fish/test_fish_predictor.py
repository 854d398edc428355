"""The learned hand predictor (scrofazero/fish/prediction/).

Invariants: the output is a distribution over seats for every card in play, exactly 0 where the
tracker rules a seat out and the tracker's own column where it knows the card (or the card is
out of play); the untrained network (random weights, fixed seed) and the shipped one are
equivariant under every
team-keeping relabelling (sets, cards within a set, seats within a team, the two teams swapped),
through the cached-array path and through fresh trackers on the relabelled game, and is not
under a relabelling that breaks a team; a zero head reproduces the tracker; training lowers the
loss on a tiny simulated dataset; a checkpoint round-trips; the features recorded during a
simulated game are the exact tracker's beliefs; the evaluation reproduces prediction.py's
counts; the session API matches the batch path; the habit fit recovers known weights.
"""

from pathlib import Path

import numpy as np
import pytest
import torch

from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.fish.prediction.data import (
    GameArrays,
    decode_events,
    encode_events,
    game_arrays,
    simulate_game,
    to_recorded_game,
)
from scrofazero.fish.prediction.habits import fit_choice_model
from scrofazero.fish.prediction.metric import evaluate_game
from scrofazero.fish.prediction.network import (
    CERTAIN,
    NUM_FEATURES,
    PredictorConfig,
    PredictorNet,
    element_features,
    load_predictor,
    masked_output,
    save_predictor,
)
from scrofazero.fish.prediction.scoring import evaluate_arrays
from scrofazero.fish.prediction.sequences import (
    Symmetry,
    collate,
    keeps_teams,
    observer_sequence,
    permute_arrays,
    permute_game,
    random_symmetry,
)
from scrofazero.fish.prediction.session import HandPredictor, predict, predict_game
from scrofazero.fish.prediction.training import PredictorTraining, sequence_loss, train_on

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def game6() -> GameArrays:
    """The first 30 events of a simulated 6-player game (logic and imitation players, recording
    rules)."""
    return simulate_game(6, ["logic", "imitation"] * 3, seed=13, max_events=30)


def untrained(seed: int = 0, core: str = "gru") -> PredictorNet:
    torch.manual_seed(seed)
    return PredictorNet(PredictorConfig(core=core)).eval()


def synthetic(num_players: int, steps: int, seed: int) -> GameArrays:
    """Random tracker-like arrays (columns sum to 1, some zeros, a certain card, a called set)
    and random events: enough to test the network's symmetry at any table size."""
    rng = np.random.default_rng(seed)
    C = 6 * (9 if num_players == 6 else 8)
    shape = (num_players, steps, num_players, C)
    probs = rng.random(shape) * (rng.random(shape) < 0.7)
    probs[:, :, :, :6] = 0  # set 0 called
    probs[:, :, :, 7] = 0
    probs[:, :, 2, 7] = 1  # a certain card
    probs /= np.maximum(probs.sum(2, keepdims=True), 1e-12)
    rows = []
    for t in range(steps):
        if t % 7 == 6:
            rows.append([2, 1, -1, -1, t % 2, 0] + [1, 3, 5, 1, 3, 5]
                        + list(rng.integers(0, 3, num_players)) + [-1] * (8 - num_players))
        else:
            a = int(rng.integers(num_players))
            card = int(rng.integers(6, C))
            rows.append([1, a, (a + 1 + 2 * int(rng.integers(num_players // 2))) % num_players,
                         card, int(rng.integers(2)), card // 6] + [-1] * 14)
    holders = rng.integers(0, num_players, (steps, C)).astype(np.int8)
    holders[:, :6] = -1
    return GameArrays(num_players, probs.astype(np.float32), np.array(rows, np.int16), holders,
                      np.zeros((num_players, C // num_players), np.int8), name="synthetic")


def relabelled(model, arrays, g: Symmetry):
    """Predictions on the relabelled arrays, mapped back to the original labels."""
    n = arrays.num_players
    other = permute_arrays(arrays, g)
    cards, seats = g.card_index(n), [g.seat(s) for s in range(n)]
    return [predict_game(model, other, g.seat(o))[:, seats][:, :, cards] for o in range(n)]


# ---- masking


def test_masking_zeroes_impossible_copies_certain_and_normalises():
    rng = np.random.default_rng(0)
    tracker = rng.random((3, 6, 12)) * (rng.random((3, 6, 12)) < 0.6)
    tracker[:, :, 0] = 0  # out of play
    tracker[:, :, 1] = 0
    tracker[:, 4, 1] = 1  # known
    tracker[:, :, 2] = 0
    tracker[:, 3, 2] = 1e-300  # a tiny but possible seat is kept
    tracker[:, 5, 2] = 0.7
    tracker[:, :, 3:] += 1e-3 * (tracker[:, :, 3:] > 0)
    tracker /= np.maximum(tracker.sum(1, keepdims=True), 1e-300)
    t = torch.tensor(tracker, dtype=torch.float64)
    delta = torch.randn(3, 6, 12, dtype=torch.float64) * 5
    probs, log_p = masked_output(delta, t)
    assert torch.all(probs[t == 0] == 0)  # exactly 0 where the tracker rules a seat out
    assert torch.all(probs[:, :, :2] == t[:, :, :2])  # out of play, known: copied
    in_play = t.sum(1) > 0.5
    assert torch.allclose(probs.sum(1)[in_play], torch.ones(int(in_play.sum()),
                                                            dtype=torch.float64))
    assert torch.all(probs[:, 3, 2] > 0) and not torch.allclose(probs[:, :, 3:], t[:, :, 3:])
    assert torch.allclose(torch.exp(log_p), probs)
    zero, _ = masked_output(torch.zeros_like(delta), t)
    assert torch.allclose(zero, t)


def test_model_output_respects_the_tracker(game6):
    seq = observer_sequence(game6, 1)
    with torch.no_grad():
        probs, _ = untrained()(torch.from_numpy(seq.probs)[None],
                               torch.from_numpy(seq.events.astype(np.int64))[None])
    probs, tracker = probs[0].numpy(), seq.probs
    assert np.all(probs[tracker == 0] == 0)
    known = np.broadcast_to(tracker.max(1, keepdims=True) >= CERTAIN, tracker.shape)
    assert np.array_equal(probs[known], tracker[known])
    in_play = tracker.sum(1) > 0.5
    np.testing.assert_allclose(probs.sum(1)[in_play], 1.0, atol=1e-5)
    assert np.abs(probs - tracker).max() > 1e-3  # the random head does change something


# ---- symmetries


def test_team_keeping_relabellings():
    rng = np.random.default_rng(3)
    for n in (6, 8):
        for _ in range(20):
            assert keeps_teams(random_symmetry(rng, n).seat_perm)
    assert keeps_teams((1, 0, 3, 2, 5, 4)) and keeps_teams((2, 5, 0, 3, 4, 1))
    assert not keeps_teams((1, 0, 2, 3, 4, 5))  # seats 0 and 1 change teams, the rest do not


SHIPPED = Path(__file__).resolve().parents[2] / "models" / "fish_predictor.pt"


@pytest.mark.parametrize("num_players,model_kind", [(6, "untrained"), (8, "untrained"),
                                                    (8, "shipped")])
def test_model_is_equivariant(num_players, model_kind):
    arrays = synthetic(num_players, 12, seed=num_players)
    model = untrained(seed=1) if model_kind == "untrained" else load_predictor(SHIPPED)
    base = [predict_game(model, arrays, o) for o in range(num_players)]
    S = 9 if num_players == 6 else 8
    ident_sets, ident_cards = tuple(range(S)), tuple(tuple(range(6)) for _ in range(S))
    rng = np.random.default_rng(7)
    seats = list(range(num_players))
    seats[0], seats[2], seats[1], seats[3] = 2, 0, 3, 1  # within each team
    cases = {
        "sets": Symmetry(tuple(int(x) for x in rng.permutation(S)), ident_cards,
                         tuple(range(num_players))),
        "cards": Symmetry(ident_sets, tuple(tuple(int(x) for x in rng.permutation(6))
                                            for _ in range(S)), tuple(range(num_players))),
        "seats": Symmetry(ident_sets, ident_cards, tuple(seats)),
        "teams": Symmetry(ident_sets, ident_cards,
                          tuple((s + 1) % num_players for s in range(num_players))),
        "all": random_symmetry(rng, num_players),
    }
    for name, g in cases.items():
        for o, (want, got) in enumerate(zip(base, relabelled(model, arrays, g))):
            np.testing.assert_allclose(got, want, atol=2e-6, err_msg=f"{name}, observer {o}")
    # a relabelling that breaks the teams is no symmetry: the test can tell
    broken = Symmetry(ident_sets, ident_cards, (1, 0) + tuple(range(2, num_players)))
    moved = relabelled(model, arrays, broken)
    assert max(np.abs(m - b).max() for m, b in zip(moved, base)) > 1e-3


def test_equivariant_through_fresh_trackers(game6):
    """Relabel the game itself, rerun every tracker: the arrays and the predictions follow."""
    g = random_symmetry(np.random.default_rng(5), 6)
    assert g.seat_perm != tuple(range(6))
    other = game_arrays(permute_game(to_recorded_game(game6), g))
    cached = permute_arrays(game6, g)
    np.testing.assert_allclose(other.probs, cached.probs, atol=1e-6)
    assert np.array_equal(other.events, cached.events)
    assert np.array_equal(other.holders, cached.holders)
    model = untrained(seed=2)
    cards, seats = g.card_index(6), [g.seat(s) for s in range(6)]
    for o in range(6):
        got = predict_game(model, other, g.seat(o))[:, seats][:, :, cards]
        np.testing.assert_allclose(got, predict_game(model, game6, o), atol=2e-6)


# ---- features, API, evaluation


def test_recorded_features_are_the_exact_tracker(game6):
    game = to_recorded_game(game6)
    assert decode_events(encode_events(game.events, 6), 6) == list(game.events)
    for o in (0, 3):
        tracker = BeliefTracker(6, o, game.hands[o], ask_held_allowed=True,
                                ask_needs_other=False)
        seq = observer_sequence(game6, o)
        feats = element_features(torch.from_numpy(seq.probs)[None],
                                 torch.from_numpy(seq.events.astype(np.int64))[None])[0]
        assert feats.shape[-1] == NUM_FEATURES
        order = (o + np.arange(6)) % 6
        for t, event in enumerate(game.events):
            np.testing.assert_allclose(game6.probs[o, t], tracker.probabilities(), atol=1e-7)
            np.testing.assert_allclose(feats[t, :, :, 0].numpy(), tracker.probabilities()[order],
                                       atol=1e-7)
            tracker.update(event)
        holders = np.array(game.holders[:len(game.events)])
        assert np.array_equal(seq.target >= 0, holders >= 0)
        assert np.array_equal(order[seq.target[holders >= 0]], holders[holders >= 0])


def test_session_api_matches_the_batch_path(game6):
    model = untrained(seed=3)
    game = to_recorded_game(game6)
    t = 9
    want = predict_game(model, game6, 4)[t]
    session = HandPredictor(model, 6, 4, game.hands[4])
    for event in game.events[:t]:
        session.update(event)
    np.testing.assert_allclose(session.probabilities(), want, atol=1e-6)
    np.testing.assert_allclose(predict(model, 6, 4, game.hands[4], game.events[:t]), want,
                               atol=1e-6)
    flat = PredictorNet(PredictorConfig()).zero_head()
    np.testing.assert_allclose(predict(flat, 6, 4, game.hands[4], game.events[:t]),
                               session.tracker.probabilities(), atol=1e-6)


def test_evaluation_reproduces_the_prediction_metric(game6):
    game = to_recorded_game(game6)
    arrays = game_arrays(game, dtype=np.float64)
    reference = evaluate_game(game)
    out = evaluate_arrays(PredictorNet(PredictorConfig()).zero_head(), [arrays])
    mine = out["tracker"]["per_file"][game.name]
    for key in ("accuracy", "predictions", "correct", "accuracy_incl_certain",
                "predictions_incl_certain", "correct_incl_certain", "rejected", "zero_truth"):
        assert mine[key] == reference[key], key
    assert mine["log_loss"] == pytest.approx(reference["log_loss"], rel=1e-9)
    # a zero head is the tracker: same log-loss, same counts under the same tie rule
    assert out["log_loss"] == pytest.approx(out["tracker"]["log_loss"], abs=1e-6)
    assert out["correct_incl_certain"] == out["tracker_matched"]["correct_incl_certain"]
    assert 0 <= out["calibration"]["ece"] <= 1


# ---- training and checkpoints


def test_training_lowers_the_loss(game6):
    torch.manual_seed(0)
    model = PredictorNet(PredictorConfig(hidden=16, embed=8)).zero_head()
    batch = collate([observer_sequence(game6, o) for o in range(6)])
    with torch.no_grad():
        before, count = sequence_loss(model, batch)
    cfg = PredictorTraining(steps=12, batch=6, lr=5e-2, eval_every=1000, table_sizes=[6], seed=0)
    train_on(model, [game6], cfg)
    with torch.no_grad():
        after, _ = sequence_loss(model, batch)
    assert count > 100 and float(after) < float(before) - 0.01  # it starts as the tracker


def test_checkpoint_round_trip(tmp_path, game6):
    model = untrained(seed=4, core="lstm")
    path = save_predictor(tmp_path / "p.pt", model, {"note": "test"})
    loaded = load_predictor(path)
    assert loaded.cfg == model.cfg and loaded.meta == {"note": "test"}
    np.testing.assert_array_equal(predict_game(loaded, game6, 2), predict_game(model, game6, 2))
    assert path.stat().st_size < 2_000_000
    torch.save({"format": "other"}, tmp_path / "bad.pt")
    with pytest.raises(ValueError):
        load_predictor(tmp_path / "bad.pt")


def test_choice_model_fit_recovers_weights():
    rng = np.random.default_rng(0)
    true = np.array([2.0, -1.0, 0.5])
    feats, chosen = [], []
    for _ in range(3000):
        f = rng.normal(size=(int(rng.integers(3, 12)), 3))
        p = np.exp(f @ true)
        feats.append(f)
        chosen.append(int(rng.choice(len(f), p=p / p.sum())))
    w, loglik, uniform = fit_choice_model(feats, chosen)
    np.testing.assert_allclose(w, true, atol=0.15)
    assert loglik > uniform


def test_train_py_trains_a_predictor_and_refuses_to_overwrite(tmp_path, game6, capsys,
                                                              monkeypatch):
    """train.py game=fish game.learner=predictor on a prepared folder of simulated games: a
    predictor file that loads and differs from the tracker; run again, refused, file kept."""
    from composed import config, refused

    from scrofazero import entry
    from scrofazero.fish.prediction.data import save_shard

    for part in ("train", "val"):
        (tmp_path / "data" / part).mkdir(parents=True)
        save_shard(tmp_path / "data" / part / "size6_0000.npz", [game6])
    args = ("game=fish", "game.learner=predictor", "game.predictor.table_sizes=[6]",
            "game.predictor.steps=4", f"game.predictor.data={tmp_path / 'data'}",
            f"checkpoint_dir={tmp_path / 'ck'}", "run=p")
    entry.train(config("train", *args))
    path = tmp_path / "ck" / "p" / "predictor.pt"
    model = load_predictor(path)
    assert model.meta["train_config"]["steps"] == 4
    assert model.meta["history"]["steps_run"] == 4
    zero = PredictorNet(model.cfg).zero_head()
    assert np.abs(predict_game(model, game6, 1) - predict_game(zero, game6, 1)).max() > 1e-4
    before = path.read_bytes()
    err = refused(entry.train, config("train", *args), capsys, monkeypatch)
    assert "exists" in err and path.read_bytes() == before
