"""The behaviour network (scrofazero/nn/behaviour.py).

Invariants: the legal mask is the rules' legal cards at every decision of real games; an
untrained network plays uniformly over the legal cards and its loss is that baseline; the fast
path (public pre-activations + hand block) gives the plain path's log-probabilities for any hands;
the loss trains a network to fit a small exactly labelled set; files round-trip, are cached, and
a foreign, corrupt or non-finite file is refused by name, as is the missing shipped file.
"""

import numpy as np
import pytest
import torch

from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn import behaviour
from scrofazero.nn.behaviour import (
    BehaviourModel,
    BehaviourNet,
    behaviour_loss,
    follow_suit,
    led_suit,
    legal_mask,
    load_behaviour,
    masked_log_softmax,
    save_behaviour,
)
from scrofazero.nn.belief import Positions, view_positions

SUIT = np.arange(52) // 13


def random_game(seed):
    """A finished random game: (its views at every decision, the cards played, start hands)."""
    state = GongzhuState(seed=seed, leader=seed % 4)
    hands = [[bool(h >> c & 1) for c in range(52)] for h in state.hands]
    rng = np.random.default_rng(seed)
    views, cards = [], []
    while not state.is_terminal():
        views.append(state.view(state.current_player))
        cards.append(int(rng.choice(state.legal_actions())))
        state.apply(cards[-1])
    return views, np.array(cards), np.array(hands)


def decisions(seeds):
    """Positions of every decision of random games (viewer = the seat to move), and the cards
    played there."""
    views, cards = [], []
    for seed in seeds:
        v, c, _ = random_game(seed)
        views += v
        cards.append(c)
    return view_positions(views), np.concatenate(cards)


def random_net(seed, hidden=256, num_blocks=2):
    """A network whose output layer is not zero, so its log-probabilities vary with the input."""
    torch.manual_seed(seed)
    net = BehaviourNet(hidden, num_blocks)
    torch.nn.init.normal_(net.out.weight, std=0.3)
    torch.nn.init.normal_(net.out.bias, std=0.3)
    return net


def consistent_hand(p: Positions, row: int, card: int, rng) -> np.ndarray:
    """A random hand of the seat to move at p[row] that agrees with everything public: the right
    size, no card already played, none of a suit the seat has shown void in, and holding `card`
    (which it then plays: playing off the led suit shows a void in it too)."""
    n, seat = p.plies[row], p.viewer[row]
    played = np.zeros(52, dtype=bool)
    played[p.cards[row, :n]] = True
    void = np.zeros(4, dtype=bool)
    count = 0
    for ply in range(n):
        if p.seats[row, ply] == seat:
            count += 1
            led = p.cards[row, ply - ply % 4] // 13
            if p.cards[row, ply] // 13 != led:
                void[led] = True
    led = led_suit(p.take([row]))[0]
    if led >= 0 and card // 13 != led:
        void[led] = True
    free = ~played & ~void[SUIT]
    free[card] = False
    hand = np.zeros(52, dtype=bool)
    hand[card] = True
    hand[rng.choice(np.flatnonzero(free), 13 - count - 1, replace=False)] = True
    return hand


def test_legal_mask_matches_the_rules():
    views = [v for seed in range(4) for v in random_game(seed)[0]]
    legal = legal_mask(view_positions(views))
    for row, view in enumerate(views):
        assert np.flatnonzero(legal[row]).tolist() == view.legal_actions(), row
    # Leading (and following with the suit gone) is the whole hand; the led suit is public.
    p = view_positions(views)
    assert np.all(led_suit(p)[p.plies % 4 == 0] == -1)
    assert np.all(legal[p.hand.sum(1) > 0].any(axis=1))


def test_masked_log_softmax_is_a_distribution_over_the_mask():
    logits = torch.randn(5, 52)
    legal = torch.rand(5, 52) < 0.3
    legal[:, 0] = True
    logp = masked_log_softmax(logits, legal)
    assert torch.all(logp[~legal] == float("-inf"))
    torch.testing.assert_close(logp.exp().sum(1), torch.ones(5))


def test_untrained_network_plays_uniformly_and_its_loss_is_that_baseline():
    p, cards = decisions([10])
    net = BehaviourNet(32, 1)
    n_legal = legal_mask(p).sum(1)
    logp = BehaviourModel(net).log_probs(p)
    np.testing.assert_allclose(logp[np.arange(len(p)), cards], -np.log(n_legal), atol=1e-6)
    loss = behaviour_loss(net, p, cards)
    assert loss.item() == pytest.approx(np.log(n_legal).mean(), abs=1e-5)
    bad = cards.copy()
    bad[3] = next(c for c in range(52) if not legal_mask(p.take([3]))[0, c])
    with pytest.raises(ValueError, match="legal"):
        behaviour_loss(net, p, bad)


def test_fast_path_matches_the_plain_path():
    p, cards = decisions([20, 21])
    rng = np.random.default_rng(0)
    picked = rng.choice(len(p), 30, replace=False)
    pos, pos_cards = p.take(picked), cards[picked]
    model = BehaviourModel(random_net(1))
    public = model.public_pre(pos)
    # The public part ignores the hand.
    other = Positions(~pos.hand, pos.cards, pos.seats, pos.plies, pos.viewer)
    torch.testing.assert_close(model.public_pre(other), public, rtol=0, atol=0)

    # Worlds consistent with the history: the card actually played, in random hands around it.
    index = rng.integers(0, len(pos), 400)
    hands = np.stack([consistent_hand(pos, j, pos_cards[j], rng) for j in index])
    legal = follow_suit(hands, led_suit(pos)[index])
    fast = model.log_prob_rows(public, index, hands, pos_cards[index], legal)
    plain = model.log_prob_rows_plain(pos, index, hands, pos_cards[index], legal)
    assert fast.dtype == np.float32 and fast.shape == (400,)
    assert np.all(np.isfinite(fast)) and np.all(fast <= 0)  # 0: a forced card
    np.testing.assert_allclose(fast, plain, atol=1e-4, rtol=0)
    assert fast.std() > 0.05  # the hands matter, or the agreement would prove little

    # With the true hands it is the model's own log-probability of the decision.
    true = model.log_prob_rows(public, np.arange(len(pos)), pos.hand, pos_cards, legal_mask(pos))
    np.testing.assert_allclose(true, model.log_probs(pos)[np.arange(len(pos)), pos_cards],
                               atol=1e-4, rtol=0)

    # Any hands at all (here random subsets): still the same numbers, -inf for illegal cards.
    hands = rng.random((200, 52)) < 0.25
    index = rng.integers(0, len(pos), 200)
    card = rng.integers(0, 52, 200)
    legal = follow_suit(hands, led_suit(pos)[index])
    fast = model.log_prob_rows(public, index, hands, card, legal)
    plain = model.log_prob_rows_plain(pos, index, hands, card, legal)
    ok = legal[np.arange(200), card]
    assert np.all(np.isneginf(fast[~ok])) and np.all(np.isneginf(plain[~ok]))
    np.testing.assert_allclose(fast[ok], plain[ok], atol=1e-4, rtol=0)


def test_loss_fits_a_tiny_exactly_labelled_set():
    torch.manual_seed(0)
    p, _ = decisions([30, 31])
    p = p.take(np.random.default_rng(1).choice(len(p), 64, replace=False))
    legal = legal_mask(p)
    # Depends on the hand, not only on the legal cards: the lowest legal card when holding a
    # spade above the ten (cards 9..12), else the highest.
    high_spade = p.hand[:, 9:13].any(axis=1)
    assert 0.2 < high_spade.mean() < 0.8
    cards = np.where(high_spade, legal.argmax(1), 51 - legal[:, ::-1].argmax(1))
    net = BehaviourNet(64, 2)
    baseline = behaviour_loss(net, p, cards).item()
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # threads only contend on a busy machine at this size
    try:
        for _ in range(200):
            loss = behaviour_loss(net, p, cards)
            opt.zero_grad()
            loss.backward()
            opt.step()
    finally:
        torch.set_num_threads(threads)
    assert baseline > 1.0
    assert behaviour_loss(net, p, cards).item() < 0.05 * baseline


def test_file_round_trip_cache_and_refusals(tmp_path, monkeypatch):
    net = random_net(2, 16, 1)
    path = save_behaviour(tmp_path / "sub" / "b.pt", net, {"games": 3, "loss": np.float64(0.5)})
    model = load_behaviour(path)
    assert model.meta["games"] == 3 and model.net.config() == net.config()
    for a, b in zip(model.net.state_dict().values(), net.state_dict().values()):
        assert torch.equal(a, b)
    assert load_behaviour(str(path)) is model  # cached by path, size and mtime
    assert not list(path.parent.glob(".*.tmp"))  # the atomic write left no temporary file

    with pytest.raises(FileNotFoundError, match="nothere"):
        load_behaviour(tmp_path / "nothere.pt")
    (tmp_path / "junk.pt").write_bytes(b"not a torch file")
    with pytest.raises(ValueError, match="junk.pt"):
        load_behaviour(tmp_path / "junk.pt")
    torch.save({"format": "scrofazero-belief"}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="other.pt: not a behaviour network file"):
        load_behaviour(tmp_path / "other.pt")
    payload = torch.load(path, weights_only=True)
    payload["feature_version"] = 99
    torch.save(payload, tmp_path / "old.pt")
    with pytest.raises(ValueError, match="old.pt.*version 99"):
        load_behaviour(tmp_path / "old.pt")
    payload = torch.load(path, weights_only=True)
    payload["model"]["out.bias"][3] = float("nan")
    torch.save(payload, tmp_path / "nan.pt")
    with pytest.raises(ValueError, match="nan.pt: non-finite weights in out.bias"):
        load_behaviour(tmp_path / "nan.pt")
    payload = torch.load(path, weights_only=True)
    payload["config"]["hidden"] = 17
    torch.save(payload, tmp_path / "shape.pt")
    with pytest.raises(ValueError, match="shape.pt: weights do not fit"):
        load_behaviour(tmp_path / "shape.pt")
    with pytest.raises(ValueError, match="dropout"):
        BehaviourNet(16, 1, dropout=1.0)

    missing = tmp_path / "models" / "behaviour.pt"
    monkeypatch.setattr(behaviour, "SHIPPED_BEHAVIOUR", missing)
    with pytest.raises(FileNotFoundError, match=r"behaviour\.pt not found.*train"):
        load_behaviour(None)
    assert behaviour.SHIPPED_BEHAVIOUR.name == "behaviour.pt"
