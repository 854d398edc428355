"""Stand-in networks for the arena's worker-failure tests: the 'raw' player accepts any module as
its model. DyingNet ends the process that runs it, the way a crashed or killed evaluation worker
ends; FirstCallFails raises in the first process to run it and stalls every other one, the way
one failing worker meets others busy with long chunks. They live in tests/helpers/ (on sys.path,
which spawned workers inherit) so that worker processes can unpickle them by name.

Building the player does not run the network, so the parent process, which builds every player
once to check it, is unaffected; only a worker that plays a move dies or fails.
"""

import os
import signal
import time

import torch

HOW = ("exit", "kill")


class DyingNet(torch.nn.Module):
    """how: "exit" (os._exit(3), no clean-up at all) or "kill" (SIGKILL to its own process)."""

    def __init__(self, how: str):
        super().__init__()
        if how not in HOW:
            raise ValueError(f"how must be one of {HOW}, got {how!r}")
        self.how = how

    def forward(self, x):
        if self.how == "exit":
            os._exit(3)
        os.kill(os.getpid(), signal.SIGKILL)


class FirstCallFails(torch.nn.Module):
    """The first forward call over all processes (the one that creates `marker`, a path that
    must not exist yet) raises ValueError; every other call sleeps for an hour."""

    def __init__(self, marker: str):
        super().__init__()
        self.marker = marker

    def forward(self, x):
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            time.sleep(3600)
        raise ValueError(f"first call fails (process {os.getpid()})")
