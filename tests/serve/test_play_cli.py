"""`python play.py` refuses bad settings before serving (the success path is in test_browser.py
and benchmarks/serve.py, which start it for real).

Invariants: a missing network, a bad seat kind, a non-positive deadline and a port already in
use each end the command with one line naming the problem and exit status 2.
"""

import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def play(*args):
    return subprocess.run([sys.executable, "play.py", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("args, words", [
    (("checkpoint=missing.pt",), "missing.pt"),
    (("bots=[greed,chess,if]",), "play.bots must be 3 of"),
    (("move_deadline_s=0",), "move_deadline_s=0.0: must be greater than 0"),
])
def test_bad_settings_are_named(args, words, tmp_path):
    proc = play("port=0", f"db={tmp_path / 'g.sqlite'}", *args)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_a_port_in_use_is_named(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = play(f"port={port}", f"db={tmp_path / 'g.sqlite'}")
    assert proc.returncode == 2 and f"127.0.0.1:{port}" in proc.stderr, proc.stderr
