"""Self-play on actor processes around one inference server (train.actors, train/actors.py), and
the learner's precision (train.learner_precision).

Invariants covered:
- play_games plays and records as play_selfplay does: given the same deals and first leaders
  (and every ply recorded) the records are equal, field for field;
- a game's draws come from (batch seed, game index) alone: the merge of the records of a
  batch's blocks of games equals the records of the whole batch played at once (with an
  evaluator whose output for a row depends on that row only, playout-cap draws included);
- 2 actors and a CPU server (forwarding row by row) play legal games whose records equal the
  one-process play_games of the same games, field for field; after new weights are published
  they equal the one-process records of the new network (the weights reach the server);
- `train.py experiment=smoke train.actors=2 train.max_batches=1` trains, checkpoints and
  leaves no process behind;
- a killed actor ends the run in one line naming it (exit status 2), a killed server ends the
  batch with an error naming it, both within a bounded time;
- train.actors and train.learner_precision refuse bad values naming the setting; auto means
  no actors without CUDA; bf16 autocasts the learner's forward on the CPU; float32 and tf32
  on the CPU step exactly as the default.
"""

import dataclasses
import multiprocessing
import os
import signal
import threading
import time

import numpy as np
import pytest
import torch
from composed import config
from omegaconf import OmegaConf

from scrofazero import entry
from scrofazero.config import check_train
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.checkpoint import load_checkpoint
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet
from scrofazero.search.mcts import MCTSConfig
from scrofazero.train import actors
from scrofazero.train.actors import (
    ActorPool,
    GameDraws,
    actor_count,
    batch_seed,
    merge_records,
    play_games,
)
from scrofazero.train.learner import make_optimizer, train_step
from scrofazero.train.selfplay import SelfPlaySettings, play_selfplay

SEARCH = MCTSConfig(search_forced=True)  # every ply searched and (with playout_full 1) recorded
CAPPED = SelfPlaySettings(games_per_batch=5, playout_full=0.5)  # draws per ply matter
SEED = batch_seed(3, 7)


def _network(seed: int = 0) -> PolicyValueNet:
    torch.manual_seed(seed)
    return PolicyValueNet(hidden=[64, 32], num_blocks=1).eval()


def _rowwise(model):
    """The network on one state at a time: a row's output depends on that row only."""
    evaluator = NetworkEvaluator(model)

    def evaluate(s):
        outs = [evaluator(s.take([i])) for i in range(len(s))]
        return (np.concatenate([o[0] for o in outs]), np.concatenate([o[1] for o in outs]))

    return evaluate


def _differences(a, b) -> list[str]:
    """The record fields (wall time aside) in which `a` and `b` differ."""
    out = []
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if f.name != "seconds" and not (np.array_equal(x, y) if isinstance(x, np.ndarray)
                                        else x == y):
            out.append(f.name)
    return out


def _legal(records) -> None:
    for g in range(records.games):
        state = GongzhuState(records.deals[g], leader=int(records.first_leader[g]))
        for card in records.actions[g]:
            assert int(card) in state.legal_actions()
            state.apply(int(card))
        assert state.is_terminal()
        assert np.allclose(state.returns(), records.final_returns[g])


@pytest.fixture
def one_thread():
    """One torch thread, as the server's: the row-by-row forwards then agree bit for bit."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_play_games_records_as_play_selfplay():
    model = _network()
    deals = GameDraws.seeded(SEED, range(3)).deals
    leaders = np.random.default_rng(5).integers(0, 4, size=3).astype(np.int8)
    draws = GameDraws(deals, leaders, np.zeros((3, 52)))
    ours = play_games(NetworkEvaluator(model), draws, SEARCH, SelfPlaySettings())
    # play_selfplay's generator draws the first leaders first when the deals are given
    theirs = play_selfplay(NetworkEvaluator(model), 3, np.random.default_rng(5), SEARCH,
                           deals=deals)
    assert _differences(ours, theirs) == []


def test_records_do_not_depend_on_how_the_games_are_split(one_thread):
    evaluate = _rowwise(_network())
    whole = play_games(evaluate, GameDraws.seeded(SEED, range(5)), SEARCH, CAPPED)
    parts = [play_games(evaluate, GameDraws.seeded(SEED, games), SEARCH, CAPPED)
             for games in (range(0, 2), range(2, 5))]
    assert _differences(merge_records(parts, 0.0), whole) == []
    assert 0 < whole.plies_searched < 5 * 52  # half the plies recorded: the draws were used


def test_two_actors_give_the_one_process_records(one_thread):
    model = _network()
    with ActorPool.start(2, "cpu", threads=1, rowwise=True) as pool:
        pool.publish(model, 0)
        played = pool.play(SEED, SEARCH, CAPPED)
        newer = _network(seed=1)
        pool.publish(newer, 1)
        replayed = pool.play(SEED, SEARCH, CAPPED)
    _legal(played)
    reference = play_games(_rowwise(model), GameDraws.seeded(SEED, range(5)), SEARCH, CAPPED)
    assert _differences(played, reference) == []
    assert _differences(replayed, played) != []  # the server plays the new weights...
    reference = play_games(_rowwise(newer), GameDraws.seeded(SEED, range(5)), SEARCH, CAPPED)
    assert _differences(replayed, reference) == []  # ... exactly


def _ours() -> list:
    return [p for p in multiprocessing.active_children() if p.name.startswith("scrofazero-")]


def _args(tmp_path, run: str) -> list[str]:
    return ["experiment=smoke", "train.actors=2", "train.eval_every=0", "train.threads=1",
            f"run={run}", f"checkpoint_dir={tmp_path / 'ck'}", f"log_dir={tmp_path / 'runs'}"]


@pytest.mark.usefixtures("global_random_states")
def test_smoke_run_on_two_actors_trains_and_checkpoints(tmp_path):
    run = entry.train(config("train", *_args(tmp_path, "actors"), "train.max_batches=1"))
    assert run.step == 1 and run.games == 4
    saved = load_checkpoint(tmp_path / "ck" / "actors" / "latest.pt")
    assert saved["step"] == 1 and saved["config"]["train"]["actors"] == "2"
    assert _ours() == []


def _kill_soon(process, delay: float, killed: list) -> None:
    def kill():
        killed.append(time.monotonic())
        os.kill(process.pid, signal.SIGKILL)

    threading.Timer(delay, kill).start()


def _ends_within(seconds: float, job) -> BaseException:
    """What `job()` raised, in a thread that must end within `seconds` (a hang fails here)."""
    raised: list = []

    def target():
        try:
            job()
        except BaseException as err:  # SystemExit too: train.py's end on a user error
            raised.append(err)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    assert raised, "ended without an error"
    return raised[0]


@pytest.mark.usefixtures("global_random_states")
def test_a_killed_actor_ends_the_run_naming_it(tmp_path, capsys, monkeypatch):
    killed: list = []
    play = ActorPool.play

    def play_and_kill(self, *args):
        if not killed:
            _kill_soon(self.processes[2], 0.3, killed)  # actor 1 (the server is processes[0])
        return play(self, *args)

    monkeypatch.setattr(ActorPool, "play", play_and_kill)
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)  # it would raise instead
    cfg = config("train", *_args(tmp_path, "killed"), "train.max_batches=1000")
    capsys.readouterr()
    ended = _ends_within(90, lambda: entry.train(cfg))
    assert killed and time.monotonic() - killed[0] < 30
    assert isinstance(ended, SystemExit) and ended.code == 2
    err = capsys.readouterr().err
    assert "self-play actor 1" in err and "died (signal SIGKILL)" in err
    assert len(err.strip().splitlines()) == 1
    assert _ours() == []


def test_a_killed_server_ends_the_batch_naming_it():
    killed: list = []

    def play_until_it_fails():
        while True:  # a batch that ends before the kill: the next one fails
            pool.play(SEED, SEARCH, SelfPlaySettings(games_per_batch=4))

    with ActorPool.start(2, "cpu", threads=1) as pool:
        pool.publish(_network(), 0)
        _kill_soon(pool.processes[0], 0.2, killed)
        ended = _ends_within(60, play_until_it_fails)
        assert killed and time.monotonic() - killed[0] < 30
    assert isinstance(ended, ChildProcessError)
    assert "inference server" in str(ended) and "died (signal SIGKILL)" in str(ended)
    assert _ours() == []


@pytest.mark.parametrize("setting, shown", [
    ("train.actors=-1", "train.actors='-1'"), ("train.actors=two", "train.actors='two'"),
    ("train.actors=5000", "train.actors='5000'"),
    ("train.learner_precision=fp16", "train.learner_precision='fp16'")])
def test_bad_settings_are_refused_naming_them(setting, shown):
    with pytest.raises(ValueError, match=shown):
        check_train(OmegaConf.to_object(config("train", setting)))


def test_actor_settings_mean_what_they_say():
    cfg = config("train")
    assert cfg.train.actors == "0" and cfg.train.learner_precision == "auto"
    check_train(OmegaConf.to_object(config("train", "train.actors=auto")))
    assert actor_count("auto", torch.device("cpu")) == 0
    assert actor_count("auto", torch.device("cuda")) == len(os.sched_getaffinity(0))
    assert actor_count("3", torch.device("cpu")) == 3
    with pytest.raises(ValueError, match="train.actors=2 with distributed=ray"):
        check_train(OmegaConf.to_object(config("train", "train.actors=2", "distributed=ray")))
    assert actors.MAX_ACTORS >= 64


def _batch(rng, n=32):
    legal = rng.random((n, 52)) < 0.3
    legal[np.arange(n), rng.integers(0, 52, n)] = True
    target = np.where(legal, rng.random((n, 52)), 0.0)
    return {"inputs": (rng.random((n, 434)) < 0.2).astype(np.float32), "legal": legal,
            "policy_target": (target / target.sum(1, keepdims=True)).astype(np.float32),
            "value_target": rng.normal(0, 30, n).astype(np.float32)}


def _stepped(precision: str, seen: list | None = None) -> dict:
    model = _network()
    if seen is not None:
        model.policy_head.register_forward_hook(lambda m, i, out: seen.append(out.dtype))
    optimizer = make_optimizer(model)
    rng = np.random.default_rng(0)
    for _ in range(3):
        metrics = train_step(model, optimizer, _batch(rng), "cpu", precision=precision)
        assert all(np.isfinite(v) for v in metrics.values())
    return model.state_dict()


def test_learner_precision_on_the_cpu():
    seen: list = []
    default = _stepped("auto", seen)
    assert set(seen) == {torch.float32}
    for same in ("float32", "tf32"):  # no autocast on the CPU, and TF32 is CUDA's
        assert all(torch.equal(default[k], v) for k, v in _stepped(same).items())
    seen.clear()
    low = _stepped("bf16", seen)
    assert set(seen) == {torch.bfloat16}
    assert not all(torch.equal(default[k], v) for k, v in low.items())
    with pytest.raises(ValueError, match="learner precision"):
        _stepped("fp8")
