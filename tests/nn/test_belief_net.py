"""The card-location network (scrofazero/nn/belief.py).

Invariants: the features of a view equal those built from the game's record at the same ply
(one encoder for play and for training); the allowed seats are exactly the unseen cards that a
seat with cards left and no shown void in the suit may hold; the probabilities are a
distribution over the allowed seats of every unseen card and 0 elsewhere; an untrained network
starts at "in proportion to hand size"; files round-trip and a foreign or corrupt file is
refused by name.
"""

import numpy as np
import pytest
import torch

from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.belief import (
    INPUT_SIZE,
    BeliefModel,
    BeliefNet,
    Positions,
    allowed_seats,
    features,
    load_belief,
    save_belief,
    view_positions,
)


def play(seed, plies):
    state = GongzhuState(seed=seed, leader=seed % 4)
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        state.apply(int(rng.choice(state.legal_actions())))
    return state


@pytest.mark.parametrize("seed,plies", [(0, 0), (1, 7), (2, 26), (3, 45), (4, 51)])
def test_allowed_seats_follow_the_rules(seed, plies):
    state = play(seed, plies)
    view = state.view(state.current_player)
    allowed = allowed_seats(view_positions([view]))[0]  # [52, 3]
    for j in range(3):
        seat = (view.seat + 1 + j) % 4
        for card in range(52):
            expect = (bool(view.unseen >> card & 1) and not view.voids[seat] >> (card // 13) & 1
                      and view.hand_sizes[seat] > 0)
            assert allowed[card, j] == expect, (card, seat)
        # The truth is always allowed.
        for card in range(52):
            if state.hands[seat] >> card & 1:
                assert allowed[card, j]


def test_features_of_a_view_match_the_record():
    state = play(5, 30)
    view = state.view(state.current_player)
    from_view = features(view_positions([view]))
    cards = np.zeros((1, 52), dtype=np.int64)
    seats = np.zeros((1, 52), dtype=np.int64)
    seats[0, :30], cards[0, :30] = zip(*state.history)
    cards[0, 30:] = 7  # beyond the plies: must be ignored
    hand = np.array([[bool(view.hand >> c & 1) for c in range(52)]])
    rec = Positions(hand, cards, seats, np.array([30]), np.array([view.seat]))
    np.testing.assert_array_equal(features(rec), from_view)
    assert from_view.shape == (1, INPUT_SIZE)


def test_probabilities_are_distributions_over_allowed_seats():
    torch.manual_seed(0)
    net = BeliefNet(32, 1)
    for p in net.parameters():
        torch.nn.init.normal_(p, std=0.3)
    model = BeliefModel(net)
    state = play(6, 22)
    view = state.view(state.current_player)
    probs = model.probabilities(view)  # [52, 4]
    for card in range(52):
        if view.unseen >> card & 1:
            assert probs[card].sum() == pytest.approx(1.0)
            assert probs[card, view.seat] == 0
        else:
            assert probs[card].sum() == 0
    allowed = allowed_seats(view_positions([view]))[0]
    for j in range(3):
        seat = (view.seat + 1 + j) % 4
        assert np.all(probs[~allowed[:, j], seat] == 0)


def test_untrained_network_is_proportional_to_hand_size():
    state = play(8, 14)
    view = state.view(state.current_player)
    probs = BeliefModel(BeliefNet(16, 0)).probabilities(view)
    card = next(c for c in range(52) if view.unseen >> c & 1
                and not any(view.voids[s] >> (c // 13) & 1 for s in range(4)))
    sizes = np.array([view.hand_sizes[s] if s != view.seat else 0 for s in range(4)], float)
    np.testing.assert_allclose(probs[card], sizes / sizes.sum(), atol=1e-6)


def test_file_round_trip_and_refusals(tmp_path):
    net = BeliefNet(16, 1)
    path = save_belief(tmp_path / "b.pt", net, {"games": 3, "loss": np.float64(0.5)})
    model = load_belief(path)
    assert model.meta["games"] == 3 and model.net.config() == net.config()
    for a, b in zip(model.net.state_dict().values(), net.state_dict().values()):
        assert torch.equal(a, b)
    with pytest.raises(FileNotFoundError, match="nothere"):
        load_belief(tmp_path / "nothere.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="junk.pt"):
        load_belief(tmp_path / "junk.pt")
    torch.save({"format": "something-else"}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="not a belief network file"):
        load_belief(tmp_path / "other.pt")
    payload = torch.load(path, weights_only=True)
    payload["feature_version"] = 99
    torch.save(payload, tmp_path / "old.pt")
    with pytest.raises(ValueError, match="version 99"):
        load_belief(tmp_path / "old.pt")
    with pytest.raises(ValueError, match="hidden"):
        BeliefNet(0, 1)
