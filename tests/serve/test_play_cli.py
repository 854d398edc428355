"""`python play.py` refuses bad settings before serving (the success path is in test_browser.py
and benchmarks/serve.py, which start it for real).

Invariants: a missing network, a bad seat kind, a non-positive deadline or idle limit, a port
already in use, a records database another server holds and a corrupt one each end the command
with one line naming the problem and exit status 2, before the URL it would serve is printed;
the match timings (next_hand_s, idle_expire_s) reach every table's settings.
"""

import math
import os
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from scrofazero.serve.app import check_play_config
from scrofazero.serve.common.config import PlayConfig
from scrofazero.serve.common.database import open_database
from scrofazero.serve.gongzhu.hub import hub_settings
from scrofazero.serve.gongzhu.records import Records

ROOT = Path(__file__).resolve().parents[2]


def play(*args):
    return subprocess.run([sys.executable, "play.py", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("args, words", [
    (("checkpoint=missing.pt",), "missing.pt"),
    (("bots=[greed,chess,if]",), "play.bots must be 3 of"),
    (("move_deadline_s=0",), "move_deadline_s=0.0: must be greater than 0"),
    (("idle_expire_s=0",), "idle_expire_s=0.0: must be greater than 0"),
])
def test_bad_settings_are_named(args, words, tmp_path):
    proc = play("port=0", f"db={tmp_path / 'g.sqlite'}", *args)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert words in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr


def test_the_review_worlds_are_checked():
    with pytest.raises(ValueError, match="^review_worlds=5000: must be less than or equal to 4096"):
        check_play_config(replace(PlayConfig(), review_worlds=5000))


def test_the_match_timings_reach_every_table_and_are_checked():
    cfg = replace(PlayConfig(), next_hand_s=5.0, idle_expire_s=60.0)
    table = hub_settings(cfg).table
    assert (table.next_hand_s, table.idle_expire_s) == (5.0, 60.0)
    for key, bad in (("next_hand_s", 0.0), ("idle_expire_s", -1.0), ("next_hand_s", math.inf)):
        with pytest.raises(ValueError, match=f"^{key} must be a number of seconds > 0, got {bad}$"):
            check_play_config(replace(cfg, **{key: bad}))


def test_a_port_in_use_is_named(tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = play(f"port={port}", f"db={tmp_path / 'g.sqlite'}")
    assert proc.returncode == 2 and f"127.0.0.1:{port}" in proc.stderr, proc.stderr


def test_a_database_another_server_holds_is_refused(tmp_path):
    db = tmp_path / "g.sqlite"
    held = open_database(str(db), Records)  # as a running server holds it
    try:
        proc = play("port=0", f"db={db}")
    finally:
        held.close()
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"the records database {db} is in use by process {os.getpid()}" in proc.stderr
    assert proc.stderr.count("\n") == 1 and "ScrofaZero tables" not in proc.stdout


def test_a_corrupt_database_is_named(tmp_path):
    db = tmp_path / "g.sqlite"
    db.write_bytes(b"not a database, " * 512)
    proc = play("port=0", f"db={db}")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert f"cannot open the records database {db}: file is not a database" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert "ScrofaZero tables" not in proc.stdout
