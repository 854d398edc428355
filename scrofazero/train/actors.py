"""Self-play on actor processes around one inference server (train.actors=N, docs/gpu.md).

The learner (train/loop.py) holds an ActorPool: N actor processes, each playing its share of a
batch's games in lockstep (play_games: the rules and records of train/selfplay.py), and one
InferenceServer process holding the network (train/inference_server.py), which merges the
encoded leaves of every waiting actor into one forward. They talk through pipes (commands,
records, the weights by version, one small message per request) and shared memory (each
actor's request rows). Every game draws from its own generator, (batch seed, game index), so a
batch's records do not depend on how its games are split: play_games of all the games in one
process is the reference.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

import numpy as np
import torch

from scrofazero.games.gongzhu.batch import StateBatch
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.encoding import INPUT_SIZE
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet
from scrofazero.search.mcts import MCTSConfig
from scrofazero.train.inference_server import (
    OUTPUT_SIZE,
    REQUEST,
    ROWS,
    RemoteEvaluator,
    SharedRows,
    server_main,
)
from scrofazero.train.selfplay import (
    SelfPlayRecords,
    SelfPlaySettings,
    check_targets,
    play_lockstep,
)

MAX_ACTORS = 1024  # train.actors' bound: more processes than any machine here has cores
ACTORS_TAG = 0xAC7  # keeps the actors' game seeds apart from every other stream of train.seed


def actor_count(setting: str, device: torch.device) -> int:
    """The actor processes train.actors asks for: auto is one per core of this process when
    the run's device is CUDA, else 0; a count below 2 means self-play in the learner's process.

    Args:
        setting: train.actors, "auto" or a count ("0".."1024").
        device: the run's device.
    """
    if setting == "auto":
        if device.type != "cuda":
            return 0
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    return int(setting)


def batch_seed(seed: int, step: int) -> list[int]:
    """The seed of batch `step` of a run seeded `seed`; game g draws from (*this, g)."""
    return [int(seed), ACTORS_TAG, int(step)]


@dataclass
class GameDraws:
    """Everything random in G games, drawn per game: deals [G, 52] int64, first leaders [G]
    int8 and uniforms [G, 52] float64 (with playout_full < 1 a searched ply p of game g is
    searched in full and recorded when uniforms[g, p] < playout_full)."""

    deals: np.ndarray
    leaders: np.ndarray
    uniforms: np.ndarray

    @classmethod
    def seeded(cls, seed: Sequence[int], games: Iterable[int]) -> GameDraws:
        """The draws of games `games` of a batch seeded `seed` (batch_seed): game g's come from
        numpy's generator seeded (*seed, g) alone, whichever other games are played beside it.

        Args:
            seed: the batch's seed, a few non-negative ints.
            games: the games' indices within the batch.
        """
        deals, leaders, uniforms = [], [], []
        for g in games:
            rng = np.random.default_rng([*seed, int(g)])
            deals.append(rng.permutation(NUM_CARDS))
            leaders.append(rng.integers(0, 4))
            uniforms.append(rng.random(NUM_CARDS))
        return cls(np.array(deals, dtype=np.int64).reshape(-1, NUM_CARDS),
                   np.array(leaders, dtype=np.int8),
                   np.array(uniforms, dtype=np.float64).reshape(-1, NUM_CARDS))


def play_games(evaluator: NetworkEvaluator, draws: GameDraws, mcts_config: MCTSConfig,
               settings: SelfPlaySettings) -> SelfPlayRecords:
    """Play G games in lockstep as train/selfplay.py play_selfplay does (the same search,
    moves, targets and records), every random decision taken from `draws`.

    Args:
        evaluator: StateBatch -> (logits [B, 52], values [B, 4]); its precision is set to
            settings.inference, as play_selfplay sets it.
        draws: the games' deals, first leaders and playout draws (GameDraws, G games).
        mcts_config: the search.
        settings: how the games are played and recorded (games_per_batch is not read: G is).

    Returns:
        The games' SelfPlayRecords, game g of the records being game g of `draws`.
    """
    if settings.inference is not None:
        evaluator.precision = settings.inference
    check_targets(settings.policy_target, settings.outcome_weight)
    t0 = time.perf_counter()
    s = StateBatch.from_states([GongzhuState(d, leader=int(lead))
                                for d, lead in zip(draws.deals, draws.leaders)])

    def recorded(rows: np.ndarray, ply: int) -> np.ndarray:  # each game's own playout draws
        full: np.ndarray = draws.uniforms[rows, ply] < settings.playout_full
        return full

    return play_lockstep(evaluator, s, draws.deals, draws.leaders, mcts_config, recorded,
                         beta=settings.beta, outcome_weight=settings.outcome_weight,
                         playout_full=settings.playout_full,
                         playout_cheap=settings.playout_cheap,
                         policy_target=settings.policy_target,
                         search_scale=settings.search_scale, started=t0)


PER_GAME = ("deals", "first_leader", "actions", "final_returns")
TOTALS = ("games", "plies_searched", "simulations", "evaluations")


def merge_records(parts: Sequence[SelfPlayRecords], seconds: float) -> SelfPlayRecords:
    """Records of consecutive blocks of a batch's games as one batch's: games renumbered,
    positions in play_games's order (by ply, then game), so that the merge of the blocks'
    play_games equals play_games of the whole batch.

    Args:
        parts: the blocks' records, in game order.
        seconds: the batch's wall time.
    """
    offsets = np.cumsum([0] + [p.games for p in parts])[:-1]
    game = np.concatenate([p.game.astype(np.int64) + o for p, o in zip(parts, offsets)])
    ply = np.concatenate([p.ply for p in parts])
    order = np.lexsort((game, ply))  # [M] by ply, then game
    merged: dict[str, Any] = {"game": game[order].astype(np.int32), "seconds": float(seconds)}
    for f in fields(SelfPlayRecords):
        values = [getattr(p, f.name) for p in parts]
        if f.name in merged:
            continue
        if f.name in TOTALS:
            merged[f.name] = int(sum(values))
        elif f.name in PER_GAME:
            merged[f.name] = np.concatenate(values)
        elif any(v is None for v in values):
            merged[f.name] = None
        else:
            merged[f.name] = np.concatenate(values)[order]
    return SelfPlayRecords(**merged)


def _actor_main(index: int, learner: Connection, server: Connection, row_name: str) -> None:
    """A self-play actor process: plays the games it is sent until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the learner's to handle
    torch.set_num_threads(1)  # it encodes and searches; the network is the server's
    evaluator = RemoteEvaluator(server, SharedRows([(ROWS, INPUT_SIZE), (ROWS, OUTPUT_SIZE)],
                                                   row_name))
    while True:
        try:
            message = learner.recv()
        except (EOFError, OSError):  # the other end is gone
            return
        if message[0] == "stop":
            return
        _, seed, (first, stop), mcts, settings = message
        try:
            records = play_games(evaluator, GameDraws.seeded(seed, range(first, stop)), mcts,
                                 settings)
            reply = ("records", records)
        except Exception:
            reply = ("error", traceback.format_exc())
        with contextlib.suppress(OSError):
            server.send_bytes(REQUEST.pack(0))  # played: before the records (see serve)
        learner.send(reply)


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class ActorPool:
    """The learner's side: `start` spawns the server and the actors (once per run), `publish`
    gives the server the learner's weights, `play` plays a batch on the actors; `close` (or
    leaving a `with` block) ends them. A process that dies, or an error in one, ends the call
    with one ChildProcessError naming it (an OSError: train.py reports it in one line).

    Use `ActorPool.start`; the constructor starts nothing.
    """

    def __init__(self, actors: int, device: str | torch.device, threads: int = 0,
                 rowwise: bool = False):
        self.actors, self.device = int(actors), torch.device(device)
        self.threads, self.rowwise = int(threads), rowwise
        self.processes: list[BaseProcess] = []  # the server, then the actors
        self.links: list[Connection] = []  # the learner's pipe to each actor
        self.control: Connection | None = None  # the learner's pipe to the server
        self.rows: list[SharedRows] = []
        self.config: dict[str, Any] | None = None
        self.version: int | None = None

    @classmethod
    def start(cls, actors: int, device: str | torch.device = "cpu", threads: int = 0,
              rowwise: bool = False) -> ActorPool:
        """Spawn `actors` actor processes and the inference server (the run's network goes
        to `device`; `threads` torch threads in the server, 0: torch's default; `rowwise`:
        InferenceServer's). Fails with an OSError when shared memory is too small."""
        pool = cls(actors, device, threads, rowwise)
        try:
            pool._spawn()
        except BaseException:
            pool.close()
            raise
        return pool

    def _spawn(self) -> None:
        if self.actors < 1:
            raise ValueError(f"an actor pool needs at least one actor, not {self.actors}")
        _check_shared_memory(self.actors * ROWS * (INPUT_SIZE + OUTPUT_SIZE) * 4)
        context = get_context("spawn")  # no fork: torch's threads and CUDA do not survive it
        self.rows = [SharedRows([(ROWS, INPUT_SIZE), (ROWS, OUTPUT_SIZE)])
                     for _ in range(self.actors)]
        pairs = [context.Pipe() for _ in range(self.actors)]  # (server end, actor end)
        self.control, control_end = context.Pipe()
        ends = [control_end, *(server for server, _ in pairs)]
        self.processes.append(context.Process(
            target=server_main, name="scrofazero-inference-server", daemon=True,
            args=(control_end, [server for server, _ in pairs], [r.name for r in self.rows],
                  str(self.device), self.threads, self.rowwise)))
        for i, (_, actor) in enumerate(pairs):
            link, learner_end = context.Pipe()
            self.links.append(link)
            ends += [learner_end, actor]
            self.processes.append(context.Process(
                target=_actor_main, name=f"scrofazero-actor-{i}", daemon=True,
                args=(i, learner_end, actor, self.rows[i].name)))
        for process in self.processes:
            process.start()
        for end in ends:  # the children hold them now: a child's death closes its pipes
            end.close()

    def _name(self, process_index: int) -> str:
        return ("inference server" if process_index == 0
                else f"self-play actor {process_index - 1}")

    def _died(self, process_index: int) -> ChildProcessError:
        process = self.processes[process_index]
        process.join(1.0)
        return ChildProcessError(
            f"{self._name(process_index)} (pid {process.pid}) died ("
            f"{_exit_text(process.exitcode)}) during self-play; train.actors' processes "
            "are stopped (resume=true continues from the last checkpoint)")

    def _failed(self, who: str, text: str) -> ChildProcessError:
        last = [line for line in text.strip().splitlines() if line.strip()][-1:] or [text]
        return ChildProcessError(f"{who} failed: {last[0].strip()}")

    def _check_alive(self) -> None:
        for i, process in enumerate(self.processes):
            if not process.is_alive():
                raise self._died(i)

    def _send(self, conn: Connection, process_index: int, message: object) -> None:
        try:
            conn.send(message)
        except OSError:  # a broken pipe: the process at its other end is gone
            raise self._died(process_index) from None

    def _server_failure(self) -> None:
        """Raise what the server sent on control (only ever its error) or its death."""
        assert self.control is not None  # started
        try:
            message = self.control.recv()
        except (EOFError, OSError):  # the other end is gone
            raise self._died(0) from None
        raise self._failed("inference server", message[1])

    def publish(self, model: PolicyValueNet, version: int) -> None:
        """Send the server `model`'s weights as `version` (a number that grows whenever the
        weights change: the learner's step), unless it has that version of that shape
        already. They go as train/distributed.py's weights_payload sends them (numpy arrays
        by name), once per version, through the server's pipe: the server loads them before
        the next batch's messages, so no reply is awaited.

        Args:
            model: the learner's PolicyValueNet (any device).
            version: the weights' version.
        """
        config = model.config()
        if version == self.version and config == self.config:
            return
        self._check_alive()
        assert self.control is not None  # started
        weights = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        self._send(self.control, 0, ("weights", config, weights, int(version)))
        self.config, self.version = config, int(version)

    def play(self, seed: Sequence[int], mcts: MCTSConfig,
             settings: SelfPlaySettings) -> SelfPlayRecords:
        """One batch of settings.games_per_batch games, split into consecutive blocks, one per
        actor, with the published weights.

        Args:
            seed: the batch's seed (batch_seed): game g draws from (*seed, g).
            mcts: the search.
            settings: how the batch is played (train/selfplay.py SelfPlaySettings).

        Returns:
            The batch's records, equal to play_games of all its games in one process with a
            row-independent evaluator (positions by ply, then game).
        """
        if self.version is None:
            raise RuntimeError("ActorPool.play before any weights were published")
        started = time.perf_counter()
        self._check_alive()
        blocks = np.array_split(np.arange(settings.games_per_batch), self.actors)
        busy = [i for i, block in enumerate(blocks) if len(block)]
        assert self.control is not None  # started
        self._send(self.control, 0, ("batch", busy, settings.inference))
        seed = [int(x) for x in seed]
        for i in busy:
            span = (int(blocks[i][0]), int(blocks[i][-1]) + 1)
            self._send(self.links[i], i + 1, ("play", seed, span, mcts, settings))
        parts = self._gather(busy)
        return merge_records([parts[i] for i in busy], time.perf_counter() - started)

    def _gather(self, busy: Sequence[int]) -> dict[int, SelfPlayRecords]:
        """Each busy actor's records, as they come; the first death or error raises."""
        assert self.control is not None  # started
        waiting = {self.links[i]: i for i in busy}
        parts: dict[int, SelfPlayRecords] = {}
        while waiting:
            sentinels = {self.processes[i + 1].sentinel: i + 1 for i in waiting.values()}
            sentinels[self.processes[0].sentinel] = 0
            ready = wait([*waiting, self.control, *sentinels])
            for link in [c for c in ready if c in waiting]:
                i = waiting.pop(link)
                try:
                    kind, payload = link.recv()
                except (EOFError, OSError):  # the other end is gone
                    raise self._died(i + 1) from None
                if kind == "error":
                    if self.control.poll(0.5):  # the server's failure is the cause: name it
                        self._server_failure()
                    raise self._failed(f"self-play actor {i}", payload)
                parts[i] = payload
            if self.control in ready:
                self._server_failure()
            for sentinel, index in sentinels.items():
                if sentinel in ready and (index == 0 or index - 1 in waiting.values()):
                    raise self._died(index)
        return parts

    def close(self) -> None:
        """Stop the processes (asked, then terminated) and free the shared memory."""
        for conn in [self.control, *self.links]:
            try:
                if conn is not None:
                    conn.send(("stop",))
            except OSError:
                pass
        deadline = time.monotonic() + 5.0
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(1.0)
        for conn in [self.control, *self.links]:
            if conn is not None:
                conn.close()
        for rows in self.rows:
            rows.close(unlink=True)
        self.processes, self.links, self.rows = [], [], []
        self.control = None

    def __enter__(self) -> ActorPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_shared_memory(needed: int) -> None:
    """Refuse to start when /dev/shm cannot hold `needed` bytes: writing past it would kill a
    process with SIGBUS instead of failing cleanly."""
    if not os.path.isdir("/dev/shm"):
        return
    stats = os.statvfs("/dev/shm")
    free = stats.f_bavail * stats.f_frsize
    if free < needed:
        raise OSError(f"train.actors: shared memory /dev/shm has {free / 2**20:.0f} MiB free, "
                      f"the actors need {needed / 2**20:.0f} MiB (a container: --shm-size)")
