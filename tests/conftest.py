"""Shared test set-up: the helper modules (slow references, position generators) in
tests/helpers/ are importable by name from every test folder, and under pytest-xdist (the
default, pyproject.toml) each worker and the scripts it starts use one torch thread, so the
workers do not oversubscribe the cores (docs/results.md, "On a shared machine"). The fixture
`global_random_states` is for the tests that resume a run in-process."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))

if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)


@pytest.fixture
def global_random_states():
    """Python's, numpy's and torch's global random states given back after the test: a run
    resumed in-process sets them to its checkpoint's, which would leak into later tests."""
    from kill_run import GlobalRandom  # a helper: importable once the path above is set

    with GlobalRandom():
        yield
