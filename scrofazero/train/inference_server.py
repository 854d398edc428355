"""The inference server of the self-play actors (train/actors.py, train.actors=N): one network
answering the encoded leaves of many actor processes, each actor's requests in its own block of
shared memory (`SharedRows`), one small message per request on its pipe. `RemoteEvaluator` is
an actor's side (the search's Evaluator, its forwards on the server), `InferenceServer` the
server's loop and `server_main` its process.
"""

from __future__ import annotations

import contextlib
import signal
import struct
import sys
import traceback
from collections.abc import Mapping, Sequence
from multiprocessing.connection import Connection, wait
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np
import torch

from scrofazero.games.gongzhu.batch import GongzhuRules
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.nn.encoding import INPUT_SIZE
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import PolicyValueNet

# Rows of one request in shared memory (a bigger request goes in several): 2 MB per actor, so
# that 16 actors fit in a container's default 64 MB of /dev/shm.
ROWS = 1024
OUTPUT_SIZE = NUM_CARDS + 1  # a forward's row: 52 logits, then the value
REQUEST = struct.Struct("<i")  # an actor's request (rows > 0; 0: its share is played)


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
                self.server.send_bytes(REQUEST.pack(n))
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

    def __init__(self, device: str | torch.device = "cpu", rowwise: bool = False):
        self.device = torch.device(device)
        self.rowwise = rowwise
        self.evaluator: NetworkEvaluator | None = None
        self.config: dict[str, Any] | None = None
        self.version = -1
        self.staging: np.ndarray | None = None  # [rows, 434] (pinned on CUDA)
        self._pinned: torch.Tensor | None = None  # the staging buffer's tensor

    def set_network(self, config: dict[str, Any]) -> None:
        """A network of shape `config` (PolicyValueNet.config()) to load weights into."""
        self.evaluator = NetworkEvaluator(PolicyValueNet.from_config(config).eval(),
                                          device=self.device)
        self.config, self.version = dict(config), -1

    def load_weights(self, weights: Mapping[str, np.ndarray], version: int) -> None:
        """The network's weights by name (arrays of its state dict's shapes, as
        train/distributed.py weights_payload gives them) as version `version`."""
        state = {k: torch.from_numpy(np.asarray(v)) for k, v in weights.items()}
        if self.evaluator is None:
            raise RuntimeError("the inference server has no network yet")
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
                    n = REQUEST.unpack(conn.recv_bytes())[0]
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
                        live[i].send_bytes(REQUEST.pack(pending[i]))
                    except OSError:  # gone since its request: the learner sees it too
                        del live[i]
                        playing.discard(i)
                pending.clear()


def server_main(control: Connection, clients: Sequence[Connection], row_names: Sequence[str],
                device: str, threads: int, rowwise: bool) -> None:
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
