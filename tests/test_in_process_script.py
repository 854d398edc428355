"""tests/helpers/composed.py `script`: a script run in the test's process ends as the command
would (exit status, stdout, stderr) and leaves the process as it found it, so the tests after it
are not changed by it: its loggers, their handlers and the streams they write to, the
environment, sys.argv and the global random states."""

import logging
import os
import random
import sys

from composed import script


def test_a_refusal_reads_as_the_command_line_gives_it():
    proc = script("train.py", "train.nonsense=1")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("error: train.nonsense is not a setting (debug=true shows the "
                           "traceback)\n")
    assert script("evaluate.py", "--wpg", "--matrix").returncode == 2


def test_the_process_is_left_as_it_was(tmp_path):
    logger = logging.getLogger("scrofazero.test.kept")
    stream = open(tmp_path / "log.txt", "w")  # noqa: SIM115 (closed at the end, checked open)
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    argv, environ, state = list(sys.argv), dict(os.environ), random.getstate()
    try:
        # hydra's logging settings (configs/*.yaml) would close that stream and disable the logger
        assert script("train.py", "experiment=smoke", "train.lr=-1").returncode == 2
        assert not logger.disabled and logger.handlers == [handler] and not stream.closed
        logger.warning("still heard")
        handler.flush()
        assert "still heard" in (tmp_path / "log.txt").read_text()
        assert (sys.argv, dict(os.environ), random.getstate()) == (argv, environ, state)
    finally:
        logger.removeHandler(handler)
        stream.close()
