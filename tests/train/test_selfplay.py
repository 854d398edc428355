"""Self-play records and targets.

Invariants covered (with a cheap deterministic evaluator: values = current returns, zero logits):
- records have the documented shapes and dtypes, one row per searched ply;
- inputs are encode(root) of the recorded position, seat is its mover;
- policy targets are distributions supported on the legal cards and equal softmax(beta * q)
  of a fresh run_mcts on the recorded root; value targets equal best q - returns(root)[mover];
- the move played at a searched ply is run_mcts's argmax-Q action;
- every game is legal and complete: replaying its actions through GongzhuState reaches the end
  with the recorded final returns; forced plies (one legal card) are never recorded, every
  other ply is;
- given deals are used as dealt; first leaders are random; the same rng gives the same
  records, another rng others;
- records survive ReplayBuffer -> checkpoint extra -> SelfPlayRecords(**fields) unchanged;
- policy_targets ignores NaN / illegal Q, never overflows and matches a direct softmax;
- with search_forced (the paper's training) every one of the 52 plies of every game is searched
  and recorded, and the last ply's value target is exactly the game's final team difference
  minus the current one (its search target equals its outcome target).
"""

import dataclasses

import numpy as np
import pytest

from scrofazero.games.gongzhu.batch import GongzhuRules, StateBatch, current_player, returns
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.encoding import INPUT_SIZE, encode
from scrofazero.nn.network import ModelConfig
from scrofazero.search.mcts import MCTSConfig, run_mcts
from scrofazero.train.config import TrainConfig
from scrofazero.train.schedule import PhaseConfig, in_force
from scrofazero.train.selfplay import (
    SelfPlayRecords,
    SelfPlaySettings,
    play_batch,
    play_selfplay,
    policy_targets,
)

BETA = 0.2


def cheap_evaluator(s):
    """Zero logits; values = the current team differences (no look-ahead)."""
    return np.zeros((len(s), 52), np.float32), returns(s).astype(np.float32)


@pytest.fixture(scope="module")
def records() -> SelfPlayRecords:
    return play_selfplay(cheap_evaluator, 6, np.random.default_rng(11), MCTSConfig(), beta=BETA)


def _replay(rec: SelfPlayRecords, g: int, upto: int = 52) -> GongzhuState:
    """Game g after its first `upto` plies, rebuilt by the single-game engine (legality checked)."""
    state = GongzhuState(rec.deals[g], leader=int(rec.first_leader[g]))
    for card in rec.actions[g, :upto]:
        assert int(card) in state.legal_actions()
        state.apply(int(card))
    return state


def test_shapes_and_dtypes(records):
    m = records.plies_searched
    assert len(records) == m > 0 and records.games == 6
    expect = {
        "inputs": ((m, INPUT_SIZE), np.float32),
        "legal": ((m, 52), np.bool_),
        "policy_target": ((m, 52), np.float32),
        "value_target": ((m,), np.float32),
        "seat": ((m,), np.int8),
        "game": ((m,), np.int32),
        "ply": ((m,), np.int8),
        "deals": ((6, 52), np.int64),
        "first_leader": ((6,), np.int8),
        "actions": ((6, 52), np.int8),
        "final_returns": ((6, 4), np.float32),
    }
    for name, (shape, dtype) in expect.items():
        arr = getattr(records, name)
        assert arr.shape == shape and arr.dtype == dtype, name
    assert records.simulations > 0 and records.evaluations > 0 and records.seconds > 0


def test_policy_targets_are_distributions_on_legal_cards(records):
    p, legal = records.policy_target, records.legal
    assert np.all(p >= 0) and np.all(p[~legal] == 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-5)
    assert np.all(legal.sum(axis=1) >= 2)  # only unforced positions are recorded


def test_targets_match_a_fresh_search_on_the_recorded_roots(records):
    rows = np.random.default_rng(0).choice(len(records), size=25, replace=False)
    for i in rows:
        g, ply = int(records.game[i]), int(records.ply[i])
        root = StateBatch.from_states([_replay(records, g, ply)])
        res = run_mcts(GongzhuRules, cheap_evaluator, root, MCTSConfig())
        q = res.q[0].astype(np.float64)
        legal = GongzhuRules.legal_mask(root)[0]
        assert np.array_equal(records.legal[i], legal)
        assert np.array_equal(records.inputs[i], encode(root)[0])
        mover = int(current_player(root)[0])
        assert records.seat[i] == mover
        best = np.nanmax(np.where(legal, q, np.nan))
        expected_v = best - returns(root)[0, mover]
        assert records.value_target[i] == pytest.approx(expected_v, abs=1e-3)
        z = np.exp(BETA * (q[legal] - best))
        np.testing.assert_allclose(
            records.policy_target[i][legal], z / z.sum(), rtol=1e-5, atol=1e-7
        )
        assert records.actions[g, ply] == res.action[0]


def test_games_are_legal_complete_and_forced_plies_skipped(records):
    for g in range(records.games):
        state = GongzhuState(records.deals[g], leader=int(records.first_leader[g]))
        unforced = []
        for ply, card in enumerate(records.actions[g]):
            legal = state.legal_actions()
            if len(legal) > 1:
                unforced.append(ply)
            assert int(card) in legal
            state.apply(int(card))
        assert state.is_terminal()
        assert list(state.returns()) == records.final_returns[g].tolist()
        recorded = sorted(records.ply[records.game == g].tolist())
        assert recorded == unforced


def test_given_deals_are_used():
    deals = np.stack([np.random.default_rng(s).permutation(52) for s in range(2)])
    rec = play_selfplay(cheap_evaluator, 2, np.random.default_rng(0), MCTSConfig(), deals=deals)
    assert np.array_equal(rec.deals, deals)
    for g in range(2):
        hands = GongzhuState(deals[g]).hands
        first = GongzhuState(deals[g], leader=int(rec.first_leader[g])).current_player
        assert int(rec.actions[g, 0]) in [c for c in range(52) if hands[first] >> c & 1]
    with pytest.raises(ValueError):
        play_selfplay(cheap_evaluator, 3, np.random.default_rng(0), MCTSConfig(), deals=deals)


def test_first_leaders_are_random():
    rec = play_selfplay(cheap_evaluator, 16, np.random.default_rng(1), MCTSConfig())
    assert set(rec.first_leader.tolist()) == {0, 1, 2, 3}
    for g in range(16):  # the first card comes from the first leader's hand
        hand = GongzhuState(rec.deals[g]).hands[int(rec.first_leader[g])]
        assert hand >> int(rec.actions[g, 0]) & 1


def test_same_rng_same_records():
    a = play_selfplay(cheap_evaluator, 3, np.random.default_rng(5), MCTSConfig())
    b = play_selfplay(cheap_evaluator, 3, np.random.default_rng(5), MCTSConfig())
    c = play_selfplay(cheap_evaluator, 3, np.random.default_rng(6), MCTSConfig())
    for name in ("inputs", "legal", "policy_target", "value_target", "seat", "actions", "deals"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.simulations == b.simulations and a.evaluations == b.evaluations
    assert not np.array_equal(a.deals, c.deals)


def test_records_survive_replay_and_checkpoint(records, tmp_path):
    """As the training loop stores them: dataclass fields in a checkpoint's `extra`."""
    import torch

    from scrofazero.nn.checkpoint import load_checkpoint, save_checkpoint
    from scrofazero.nn.network import PolicyValueNet
    from scrofazero.train.replay import ReplayBuffer

    buf = ReplayBuffer()
    buf.add(records)
    model = PolicyValueNet(hidden=(8,), num_blocks=0)
    opt = torch.optim.Adam(model.parameters())
    extra = {"replay": [dataclasses.asdict(r) for r in buf.batches]}
    save_checkpoint(tmp_path, model=model, optimizer=opt, step=1, config={}, extra=extra)
    back = ReplayBuffer()
    for rec in load_checkpoint(tmp_path / "latest.pt")["extra"]["replay"]:
        back.add(SelfPlayRecords(**rec))
    assert len(back) == len(buf) == len(records)
    got = back.batches[0]
    for f in dataclasses.fields(SelfPlayRecords):
        a, b = getattr(records, f.name), getattr(got, f.name)
        if isinstance(a, np.ndarray):
            assert a.dtype == b.dtype and np.array_equal(a, b), f.name
        else:
            assert a == b, f.name


def test_policy_targets_function():
    legal = np.zeros((3, 52), bool)
    legal[:, [3, 7, 20]] = True
    q = np.full((3, 52), np.nan)
    q[0, [3, 7, 20]] = [0.0, 10.0, -5.0]
    q[1, [3, 7, 20]] = [5000.0, 4990.0, -3000.0]  # huge Q: no overflow thanks to max shift
    q[2, [3, 7]] = [1.0, 1.0]  # card 20 unvisited (NaN): gets 0
    q[2, 40] = 99.0  # an illegal card's Q is ignored
    p = policy_targets(q, legal, beta=0.2)
    assert np.all(np.isfinite(p)) and p.dtype == np.float32
    e = np.exp(0.2 * np.array([0.0, 10.0, -5.0]))
    np.testing.assert_allclose(p[0, [3, 7, 20]], e / e.sum(), rtol=1e-6)
    np.testing.assert_allclose(p[1, [3, 7]], [1 / (1 + np.exp(-2)), 1 / (1 + np.exp(2))], rtol=1e-6)
    assert p[2, 3] == p[2, 7] == 0.5 and p[2, 20] == 0 and p[2, 40] == 0
    with pytest.raises(ValueError):
        policy_targets(np.full((1, 52), np.nan), legal[:1])


def test_outcome_values_and_the_mixed_target():
    rec = play_selfplay(cheap_evaluator, 3, np.random.default_rng(5), MCTSConfig(),
                        outcome_weight=0.25)
    for i in range(0, len(rec), 7):
        g, ply, seat = int(rec.game[i]), int(rec.ply[i]), int(rec.seat[i])
        now = _replay(rec, g, upto=ply).returns()[seat]
        assert rec.outcome_value[i] == pytest.approx(rec.final_returns[g, seat] - now)
    want = 0.75 * rec.search_value + 0.25 * rec.outcome_value
    assert np.allclose(rec.value_target, want, atol=1e-3)
    assert not np.allclose(rec.search_value, rec.outcome_value)
    with pytest.raises(ValueError, match="outcome_weight"):
        play_selfplay(cheap_evaluator, 1, np.random.default_rng(0), MCTSConfig(), outcome_weight=2)


def test_search_forced_records_all_52_plies_with_exact_last_targets():
    games = 4
    rec = play_selfplay(cheap_evaluator, games, np.random.default_rng(3),
                        MCTSConfig(search_forced=True), beta=BETA)
    assert len(rec) == 52 * games and rec.plies_searched == 52 * games
    for g in range(games):
        assert sorted(rec.ply[rec.game == g].tolist()) == list(range(52))
    last = rec.ply == 51
    np.testing.assert_array_equal(rec.search_value[last], rec.outcome_value[last])
    final_diff = rec.final_returns[rec.game[last], rec.seat[last]]
    now = returns(StateBatch.from_states([_replay(rec, int(g), upto=51) for g in rec.game[last]]))
    np.testing.assert_allclose(rec.value_target[last],
                               final_diff - now[np.arange(games), rec.seat[last]], atol=1e-4)
    # A forced ply's policy target is all on its one card.
    forced = rec.legal.sum(axis=1) == 1
    assert forced.any()
    np.testing.assert_array_equal(rec.policy_target[forced], rec.legal[forced].astype(np.float32))



def test_search_scale_is_the_same_as_a_bigger_budget():
    """search_scale (a schedule key) multiplies every root's budget: scale 2 on 0 + 2 x legal
    is exactly the search of 0 + 4 x legal."""
    scaled = play_selfplay(cheap_evaluator, 4, np.random.default_rng(3), MCTSConfig(), beta=BETA,
                           search_scale=2.0)
    bigger = play_selfplay(cheap_evaluator, 4, np.random.default_rng(3),
                           MCTSConfig(budget_per_legal=4), beta=BETA)
    plain = play_selfplay(cheap_evaluator, 4, np.random.default_rng(3), MCTSConfig(), beta=BETA)
    assert np.array_equal(scaled.actions, bigger.actions)
    assert np.array_equal(scaled.value_target, bigger.value_target)
    assert np.array_equal(scaled.policy_target, bigger.policy_target)
    assert not np.array_equal(scaled.value_target, plain.value_target)


def test_playout_cap_randomisation_records_only_full_searches():
    full = play_selfplay(cheap_evaluator, 6, np.random.default_rng(5), MCTSConfig(), beta=BETA)
    same = play_selfplay(cheap_evaluator, 6, np.random.default_rng(5), MCTSConfig(), beta=BETA,
                         playout_full=1.0, playout_cheap=0.25)
    assert np.array_equal(full.value_target, same.value_target)  # off: the rng is not drawn
    rec = play_selfplay(cheap_evaluator, 6, np.random.default_rng(5), MCTSConfig(), beta=BETA,
                        playout_full=0.3, playout_cheap=0.25)
    unforced = recorded = 0
    for g in range(rec.games):
        state = GongzhuState(rec.deals[g], leader=int(rec.first_leader[g]))
        kept = set(rec.ply[rec.game == g].tolist())
        for ply, card in enumerate(rec.actions[g]):
            if len(state.legal_actions()) > 1:
                unforced += 1
                root = StateBatch.from_states([state.clone()])
                if ply in kept:  # recorded: the full search, whose targets were kept
                    recorded += 1
                    res = run_mcts(GongzhuRules, cheap_evaluator, root, MCTSConfig())
                    i = int(np.flatnonzero((rec.game == g) & (rec.ply == ply))[0])
                    assert rec.value_target[i] == pytest.approx(
                        np.nanmax(res.q[0]) - returns(root)[0, int(current_player(root)[0])],
                        abs=1e-3)
                else:  # played after the cheap search, not recorded
                    res = run_mcts(GongzhuRules, cheap_evaluator, root, MCTSConfig(),
                                   budget_scale=np.array([0.25]))
                    assert res.num_simulations[0] == max(
                        int(np.ceil(0.25 * 2 * len(state.legal_actions()))),
                        len(state.legal_actions()))
                assert int(card) == int(res.action[0])
            else:
                assert ply not in kept
            state.apply(int(card))
        assert state.is_terminal()
    assert 0.15 < recorded / unforced < 0.45
    assert rec.simulations < full.simulations


def test_visit_count_policy_target():
    rec = play_selfplay(cheap_evaluator, 2, np.random.default_rng(3), MCTSConfig(), beta=BETA,
                        policy_target="visits")
    for i in np.random.default_rng(0).choice(len(rec), size=10, replace=False):
        g, ply = int(rec.game[i]), int(rec.ply[i])
        root = StateBatch.from_states([_replay(rec, g, ply)])
        res = run_mcts(GongzhuRules, cheap_evaluator, root, MCTSConfig())
        visits = res.visits[0].astype(np.float64)
        np.testing.assert_allclose(rec.policy_target[i], visits / visits.sum(), rtol=1e-6)
    with pytest.raises(ValueError, match="policy_target"):
        play_selfplay(cheap_evaluator, 1, np.random.default_rng(3), MCTSConfig(),
                      policy_target="bogus")


def test_auxiliary_targets_are_the_final_piles_seen_from_the_mover(records):
    from scrofazero.games.gongzhu.cards import SCORING_CARDS

    for i in np.random.default_rng(1).choice(len(records), size=20, replace=False):
        g, mover = int(records.game[i]), int(records.seat[i])
        final = _replay(records, g)
        scores = final.pile_scores()
        for k in range(4):
            assert records.points_target[i, k] == scores[(mover + k) % 4]
        for j, card in enumerate(SCORING_CARDS):
            holder = (mover + int(records.capture_target[i, j])) % 4
            assert (final.piles[holder] >> j) & 1, (card, holder)


def test_gumbel_improved_policy_target():
    from scrofazero.train.selfplay import improved_targets

    legal = np.array([[True, True, True, False]])
    q = np.array([[10.0, 0.0, np.nan, np.nan]])  # card 2 legal but unvisited
    visits = np.array([[3, 1, 0, 0]])
    prior = np.array([[0.0, 1.0, 2.0, 5.0]])
    got = improved_targets(q, visits, legal, prior)[0].astype(np.float64)
    done = np.array([10.0, 0.0, 5.0])  # the unvisited card takes the mean visited Q
    z = prior[0, :3] + (50 + 3) * 0.1 * (done - 0.0) / 10.0
    want = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    np.testing.assert_allclose(got[:3], want, rtol=1e-6)
    assert got[3] == 0.0
    # In self-play: the prior is the network's own policy at the recorded root.
    def evaluator(s):
        logits, values = cheap_evaluator(s)
        return logits + np.arange(52, dtype=np.float32) / 52, values
    rec = play_selfplay(evaluator, 1, np.random.default_rng(2), MCTSConfig(),
                        policy_target="gumbel")
    i = 7
    root = StateBatch.from_states([_replay(rec, int(rec.game[i]), int(rec.ply[i]))])
    res = run_mcts(GongzhuRules, evaluator, root, MCTSConfig())
    want = improved_targets(res.q.astype(np.float64), res.visits, GongzhuRules.legal_mask(root),
                            evaluator(root)[0].astype(np.float64))
    np.testing.assert_allclose(rec.policy_target[i], want[0], rtol=1e-5, atol=1e-7)


def test_a_batch_is_played_as_its_settings_say():
    train = TrainConfig(games_per_batch=3, beta=0.5, outcome_weight=0.25, playout_cheap=0.5,
                        policy_target="visits")
    assert SelfPlaySettings.of(train) == SelfPlaySettings(
        games_per_batch=3, beta=0.5, outcome_weight=0.25, playout_full=1.0, playout_cheap=0.5,
        search_scale=1.0, policy_target="visits", inference="float32")
    phase = PhaseConfig(from_games=0, games_per_batch=2, replay_batches=1, passes=1, lr=1e-4,
                        playout_full=0.5, search_scale=2.0)
    now, _ = in_force(dataclasses.replace(train, schedule=[phase]), ModelConfig(), 0)
    settings = SelfPlaySettings.of(now)  # the phase's values win
    assert (settings.games_per_batch, settings.playout_full, settings.search_scale) == (2, 0.5, 2.0)
    batch = play_batch(cheap_evaluator, np.random.default_rng(4), MCTSConfig(), settings)
    same = play_selfplay(cheap_evaluator, 2, np.random.default_rng(4), MCTSConfig(), beta=0.5,
                         outcome_weight=0.25, playout_full=0.5, playout_cheap=0.5,
                         search_scale=2.0, policy_target="visits")
    for field in dataclasses.fields(SelfPlayRecords):
        if field.name != "seconds":
            assert np.array_equal(getattr(batch, field.name), getattr(same, field.name)), field

