"""Fine-tuning the network on belief marginals (scrofazero/train/marginal_input.py).

Invariants: the builder refuses games on a standard evaluation deal; with a belief that knows
the true deal, every student input (roots and the child after each legal card) equals the
full-information encoding of the true state, and the teacher's targets are its masked policy
(summing to 1 over the legal cards) and value; rows are one root per position and one child
per legal card; a short fit lowers the loss on the rows and writes a model file whose meta says
its input; a file without held-out rows is refused.
"""

import json

import numpy as np
import pytest
import torch

from scrofazero.agents.random_agent import RandomAgent
from scrofazero.games.gongzhu.batch import StateBatch, is_terminal, legal_mask, step
from scrofazero.games.gongzhu.deals import load_deals, random_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.checkpoint import load_checkpoint, load_model, save_model_file
from scrofazero.nn.encoding import encode
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet
from scrofazero.train import hidden_games as B
from scrofazero.train import marginal_input as M


def record(deals, seed=0) -> B.GameRecords:
    """Random-play games on `deals` as GameRecords."""
    agents = [RandomAgent() for _ in range(4)]
    rows = []
    for g, deal in enumerate(deals):
        rngs = [np.random.default_rng([seed, g, s]) for s in range(4)]
        cards, seats = B.play_recorded(deal, g % 4, agents, rngs)
        rows.append((deal, g % 4, cards, seats))
    return B.GameRecords(np.array([r[0] for r in rows], dtype=np.int8),
                         np.array([r[1] for r in rows], dtype=np.int8),
                         np.stack([r[2] for r in rows]), np.stack([r[3] for r in rows]),
                         np.zeros((len(rows), 4), dtype=np.int8))


def shard(folder, records) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    B.save_shard(folder / "shard_00000.npz", records)


def small_net_file(path, seed=0):
    torch.manual_seed(seed)
    return save_model_file(path, PolicyValueNet(hidden=(32,), num_blocks=1))


class KnowingBelief:
    """A stand-in belief network that puts each unseen card with its true holder."""

    def __init__(self, records):
        self.owners = records.owners()
        self.game = None

    def relative(self, positions):
        rel = (self.owners[self.game] - positions.viewer[:, None]) % 4 - 1  # [B, 52]
        out = np.zeros((len(positions), 52, 3))
        allowed = B.allowed_seats(positions)
        rows, cards = np.nonzero(rel >= 0)
        out[rows, cards, rel[rows, cards]] = 1.0
        return np.where(allowed, out, 0.0)


def test_a_knowing_belief_gives_the_true_encoding(tmp_path):
    records = record([random_deal(s) for s in (1, 2)])
    evaluator = NetworkEvaluator(load_model(small_net_file(tmp_path / "t.pt")))
    belief = KnowingBelief(records)
    games, plies = np.array([0, 0, 1, 1]), np.array([0, 13, 30, 45])
    belief.game = games
    rows = M.build_rows(records, games, plies, evaluator, belief)
    states = []
    for g, t in zip(games, plies):
        state = M._replay(records, int(g), int(t))
        states.append(state)
    roots = StateBatch.from_states(states)
    parents, cards = np.nonzero(legal_mask(roots))
    children = step(roots.take(parents), cards)
    children = children.take(~is_terminal(children))
    truth = StateBatch.concat([roots, children])
    assert list(rows["kind"]) == [M.ROOT] * 4 + [M.CHILD] * len(children)
    np.testing.assert_allclose(rows["inputs"], encode(truth), atol=1e-4)
    logits, value = evaluator.forward_features(encode(truth))
    np.testing.assert_array_equal(rows["legal"], legal_mask(truth))
    np.testing.assert_allclose(rows["policy"].sum(axis=1), 1.0, rtol=1e-5)
    assert np.all(rows["policy"][~rows["legal"]] == 0)
    np.testing.assert_allclose(rows["value"], value, rtol=1e-5)
    assert list(rows["game"][:4]) == [0, 0, 1, 1]


def test_build_refuses_standard_deals(tmp_path):
    shard(tmp_path / "g", record([random_deal(3), load_deals()[5]]))
    with pytest.raises(B.StandardDealError):
        M.build(tmp_path / "g", tmp_path / "rows.npz", games=2, progress=False)


def test_a_short_fit_lowers_the_loss(tmp_path):
    shard(tmp_path / "g", record([random_deal(10 + s) for s in range(8)]))
    teacher = small_net_file(tmp_path / "teacher.pt", seed=1)
    info = M.build(tmp_path / "g", tmp_path / "rows.npz", games=8, plies_per_game=4,
                   checkpoint=str(teacher), val_fraction=0.5, progress=False)
    assert info["positions"] == 32 and 0 < info["val_rows"] < info["rows"]
    start = small_net_file(tmp_path / "start.pt", seed=2)
    summary = M.fit(tmp_path / "rows.npz", tmp_path / "out.pt", checkpoint=str(start),
                    epochs=30, batch=32, lr=1e-3, progress=False)
    with np.load(tmp_path / "rows.npz") as z:
        rows = {k: z[k] for k in z.files}
    train = np.flatnonzero(~rows["val"])
    before = M.evaluate_rows(load_model(start), rows, train)["all"]
    after = M.evaluate_rows(load_model(tmp_path / "out.pt"), rows, train)["all"]
    assert after["kl"] < 0.8 * before["kl"] and after["value_mse"] < before["value_mse"]
    meta = load_checkpoint(tmp_path / "out.pt")["meta"]
    assert meta["input"] == M.INPUT and meta["val_before"] == summary["val_before"]
    assert json.loads(json.dumps(meta))["steps"] == summary["steps"]


def test_rows_without_held_out_games_are_refused(tmp_path):
    shard(tmp_path / "g", record([random_deal(30)]))
    M.build(tmp_path / "g", tmp_path / "rows.npz", games=1, plies_per_game=2,
            checkpoint=str(small_net_file(tmp_path / "t.pt")), val_fraction=0.0,
            progress=False)
    with pytest.raises(ValueError, match="held-out"):
        M.fit(tmp_path / "rows.npz", tmp_path / "out.pt",
              checkpoint=str(tmp_path / "t.pt"), progress=False)


def test_replay_matches_the_recorded_plays():
    records = record([random_deal(40)])
    state = M._replay(records, 0, 52)
    assert isinstance(state, GongzhuState) and state.is_terminal()
