"""Self-play on actor processes around one inference server (train.actors=N, docs/gpu.md).

The learner (train/loop.py) holds an ActorPool: N actor processes, each playing its share of a
batch's games in lockstep (play_games: the rules and records of train/selfplay.py), and one
InferenceServer process holding the network, which merges the encoded leaves of every waiting
actor into one forward. They talk through pipes (commands, records, the weights by version, one
small message per request) and shared memory (each actor's request rows). Every game draws from
its own generator, (batch seed, game index), so a batch's records do not depend on how its games
are split: play_games of all the games in one process is the reference.
"""

from __future__ import annotations

import contextlib
import os
import signal
import struct
import sys
import time
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from multiprocessing.shared_memory import SharedMemory

import numpy as np
import torch

from scrofazero.games.gongzhu.batch import GongzhuRules, StateBatch
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.encoding import INPUT_SIZE
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet
from scrofazero.search.mcts import MCTSConfig
from scrofazero.train.selfplay import (
    SelfPlayRecords,
    SelfPlaySettings,
    check_targets,
    play_lockstep,
)

MAX_ACTORS = 1024  # train.actors' bound: more processes than any machine here has cores
ACTORS_TAG = 0xAC7  # keeps the actors' game seeds apart from every other stream of train.seed
# Rows of one request in shared memory (a bigger request goes in several): 2 MB per actor, so
# that 16 actors fit in a container's default 64 MB of /dev/shm.
ROWS = 1024
OUTPUT_SIZE = NUM_CARDS + 1  # a forward's row: 52 logits, then the value
_COUNT = struct.Struct("<i")  # an actor's request (rows > 0; 0: its share is played)


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


def play_games(evaluator, draws: GameDraws, mcts_config: MCTSConfig,
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
        return draws.uniforms[rows, ply] < settings.playout_full

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
    merged: dict = {"game": game[order].astype(np.int32), "seconds": float(seconds)}
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


class SharedRows:
    """Float32 arrays in one block of shared memory, made by the learner (name None) and
    opened by name in the processes it starts; `arrays` are views of the block."""

    def __init__(self, shapes: Sequence[tuple[int, ...]], name: str | None = None):
        sizes = [int(np.prod(shape)) * 4 for shape in shapes]
        self.shapes = [tuple(int(n) for n in shape) for shape in shapes]
        self.memory = SharedMemory(name=name, create=name is None, size=max(sum(sizes), 4))
        self.name = self.memory.name
        starts = np.cumsum([0] + sizes)
        self.arrays = [np.ndarray(shape, np.float32, buffer=self.memory.buf, offset=int(start))
                       for shape, start in zip(self.shapes, starts)]

    def close(self, unlink: bool = False) -> None:
        self.arrays = []
        with contextlib.suppress(BufferError):  # a view still held: it goes with the process
            self.memory.close()
        if unlink:
            self.memory.unlink()


class RemoteEvaluator(NetworkEvaluator):
    """A NetworkEvaluator whose forwards run on the inference server: it encodes the states
    here (NetworkEvaluator.__call__) and turns the server's rows into per-seat values here
    (NetworkEvaluator.evaluate); only the [B, 434] inputs and [B, 53] outputs travel, through
    the actor's shared rows. `precision` is accepted and not read: the server's is the batch's.

    Args:
        server: the actor's end of its pipe to the server.
        rows: its shared rows: inputs [ROWS, 434], outputs [ROWS, 53].
    """

    def __init__(self, server: Connection, rows: SharedRows):
        # No network here, so NetworkEvaluator's constructor is not run: its value conversion
        # reads only `teams` and the counters.
        self.server = server
        self.rows = rows  # held: its views die with the mapping
        self.inputs, self.outputs = rows.arrays
        self.teams = np.asarray(GongzhuRules.teams)
        self.calls = 0
        self.states = 0
        self.precision = "float32"

    def _forward(self, x: np.ndarray) -> np.ndarray:
        """x [B, 434] -> [B, 53] from the server, in requests of at most ROWS rows."""
        out = np.empty((len(x), OUTPUT_SIZE), dtype=np.float32)
        for start in range(0, len(x), len(self.inputs)):
            n = min(len(self.inputs), len(x) - start)
            self.inputs[:n] = x[start:start + n]
            try:
                self.server.send_bytes(_COUNT.pack(n))
                self.server.recv_bytes()  # the server has written our rows
            except (EOFError, OSError):
                raise RuntimeError("the inference server is gone") from None
            out[start:start + n] = self.outputs[:n]
        return out


class InferenceServer:
    """One network answering the requests of many clients, each request a block of encoded
    inputs [n, 434] answered by [n, 53] (52 logits, then the value in points for the mover's
    team): the waiting requests are merged into one forward on the run's device (through a
    pinned staging buffer on CUDA), with NetworkEvaluator's precision and autocast. A plain
    class: `serve` is the loop of the actors' server process; another trainer may call
    `load_weights` and `forward_into` itself.

    Args:
        device: the forwards' device ("cpu", "cuda", ...).
        rowwise: forward every row alone, so that a row's output depends on that row only
            (slow; for checks that the actors' records are the one-process ones).
    """

    def __init__(self, device="cpu", rowwise: bool = False):
        self.device = torch.device(device)
        self.rowwise = rowwise
        self.evaluator: NetworkEvaluator | None = None
        self.config: dict | None = None
        self.version = -1
        self.staging: np.ndarray | None = None  # [rows, 434] (pinned on CUDA)
        self._pinned = None  # the staging buffer's tensor

    def set_network(self, config: dict) -> None:
        """A network of shape `config` (PolicyValueNet.config()) to load weights into."""
        self.evaluator = NetworkEvaluator(PolicyValueNet.from_config(config).eval(),
                                          device=self.device)
        self.config, self.version = dict(config), -1

    def load_weights(self, weights: Mapping[str, np.ndarray], version: int) -> None:
        """The network's weights by name (arrays of its state dict's shapes, as
        train/distributed.py weights_payload gives them) as version `version`."""
        state = {k: torch.from_numpy(np.asarray(v)) for k, v in weights.items()}
        self.evaluator.model.load_state_dict(state)
        self.version = int(version)

    def forward_into(self, inputs: Sequence[np.ndarray], outputs: Sequence[np.ndarray],
                     precision: str = "float32") -> None:
        """Answer requests: outputs[i][:] = the network on inputs[i], all in one forward.

        Args:
            inputs: the requests' encoded inputs, [n_i, 434] float32 each.
            outputs: where their answers go, [n_i, 53] float32 each.
            precision: the forwards' precision, "float32" or "bfloat16" (train.inference).
        """
        if self.evaluator is None:
            raise RuntimeError("the inference server has no network yet")
        self.evaluator.precision = precision
        if self.rowwise:
            for x, out in zip(inputs, outputs):
                for r in range(len(x)):
                    logits, value = self.evaluator.forward_features(x[r:r + 1])
                    out[r, :-1], out[r, -1] = logits[0], value[0]
            return
        if len(inputs) == 1 and self.device.type == "cpu":
            x = inputs[0]  # nothing to merge or pin: the request's own rows
        else:
            x = self._stage(inputs)
        logits, value = self.evaluator.forward_features(x)  # [B, 52], [B]: one host copy
        start = 0
        for out in outputs:
            n = len(out)
            out[:, :-1] = logits[start:start + n]
            out[:, -1] = value[start:start + n]
            start += n

    def _stage(self, inputs: Sequence[np.ndarray]) -> np.ndarray:
        """The requests' rows one after the other in the staging buffer (grown by doubling)."""
        total = sum(len(x) for x in inputs)
        if self.staging is None or len(self.staging) < total:
            size = max(total, 2 * (0 if self.staging is None else len(self.staging)))
            if self.device.type == "cuda":  # pinned: the host-to-device copy is one DMA
                self._pinned = torch.empty((size, INPUT_SIZE), pin_memory=True)
                self.staging = self._pinned.numpy()
            else:
                self.staging = np.empty((size, INPUT_SIZE), dtype=np.float32)
        start = 0
        for x in inputs:
            self.staging[start:start + len(x)] = x
            start += len(x)
        return self.staging[:total]

    def serve(self, control: Connection, clients: Sequence[Connection],
              rows: Sequence[SharedRows]) -> None:
        """The server process's loop, until the learner says stop or is gone.

        Each client (an actor) writes a request into its rows' inputs and sends its row count;
        the server answers every waiting client at once, as soon as every client playing the
        batch waits (the batch's actors in lockstep with each other: one forward per search
        step of them all, in the same order every time), then sends each its count back.
        From the learner (control): ("weights", config, weights, version): the network of
        shape `config` (built anew when it changes) gets `weights` (load_weights);
        ("batch", clients, precision): who plays the next batch; ("stop",). Clients' messages
        are read before the learner's: a client's "played" (0) of a batch always comes
        before the next batch's messages, which come after the weights it is played with.
        """
        live = dict(enumerate(clients))
        pending: dict[int, int] = {}
        playing: set[int] = set()
        precision = "float32"
        while True:
            ready = wait([control, *live.values()])
            for i, conn in list(live.items()):
                if conn not in ready:
                    continue
                try:
                    n = _COUNT.unpack(conn.recv_bytes())[0]
                except (EOFError, OSError):  # the actor is gone: the learner sees it too
                    del live[i]
                    n = 0
                if n > 0:
                    pending[i] = n
                else:
                    playing.discard(i)
                    pending.pop(i, None)
            while control.poll():
                try:
                    message = control.recv()
                except (EOFError, OSError):  # the other end is gone
                    return
                kind = message[0]
                if kind == "stop":
                    return
                if kind == "weights":
                    _, config, weights, version = message
                    if config != self.config:
                        self.set_network(config)
                    self.load_weights(weights, version)
                elif kind == "batch":
                    playing, precision = set(message[1]) & set(live), message[2]
            if pending and playing <= set(pending):
                order = sorted(pending)
                self.forward_into([rows[i].arrays[0][:pending[i]] for i in order],
                                  [rows[i].arrays[1][:pending[i]] for i in order], precision)
                for i in order:
                    try:
                        live[i].send_bytes(_COUNT.pack(pending[i]))
                    except OSError:  # gone since its request: the learner sees it too
                        del live[i]
                        playing.discard(i)
                pending.clear()


def _server_main(control, clients, row_names, device: str, threads: int, rowwise: bool):
    """The inference server process: InferenceServer.serve; an error goes to the learner,
    which reports it (the process exits with status 1 without printing it again)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the learner's to handle
    if threads > 0:
        torch.set_num_threads(threads)
    try:
        rows = [SharedRows([(ROWS, INPUT_SIZE), (ROWS, OUTPUT_SIZE)], name)
                for name in row_names]
        InferenceServer(device, rowwise).serve(control, clients, rows)
    except Exception:
        with contextlib.suppress(OSError):
            control.send(("error", traceback.format_exc()))
        sys.exit(1)


def _actor_main(index: int, learner, server, row_name: str):
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
            server.send_bytes(_COUNT.pack(0))  # played: before the records (see serve)
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

    def __init__(self, actors: int, device, threads: int = 0, rowwise: bool = False):
        self.actors, self.device = int(actors), torch.device(device)
        self.threads, self.rowwise = int(threads), rowwise
        self.processes: list = []  # the server, then the actors
        self.links: list[Connection] = []  # the learner's pipe to each actor
        self.control: Connection | None = None  # the learner's pipe to the server
        self.rows: list[SharedRows] = []
        self.config: dict | None = None
        self.version: int | None = None

    @classmethod
    def start(cls, actors: int, device="cpu", threads: int = 0,
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
            target=_server_main, name="scrofazero-inference-server", daemon=True,
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

    def _send(self, conn: Connection, process_index: int, message) -> None:
        try:
            conn.send(message)
        except OSError:  # a broken pipe: the process at its other end is gone
            raise self._died(process_index) from None

    def _server_failure(self) -> None:
        """Raise what the server sent on control (only ever its error) or its death."""
        try:
            message = self.control.recv()
        except (EOFError, OSError):  # the other end is gone
            raise self._died(0) from None
        raise self._failed("inference server", message[1])

    def publish(self, model: torch.nn.Module, version: int) -> None:
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
        self._send(self.control, 0, ("batch", busy, settings.inference))
        seed = [int(x) for x in seed]
        for i in busy:
            span = (int(blocks[i][0]), int(blocks[i][-1]) + 1)
            self._send(self.links[i], i + 1, ("play", seed, span, mcts, settings))
        parts = self._gather(busy)
        return merge_records([parts[i] for i in busy], time.perf_counter() - started)

    def _gather(self, busy: Sequence[int]) -> dict[int, SelfPlayRecords]:
        """Each busy actor's records, as they come; the first death or error raises."""
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

    def __exit__(self, *exc) -> None:
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
