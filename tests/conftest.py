"""Shared test set-up: the helper modules (slow references, position generators) in
tests/helpers/ are importable by name from every test folder, and under pytest-xdist (the
default, pyproject.toml) each worker and the scripts it starts use one torch thread, so the
workers do not oversubscribe the cores (docs/results.md, "On a shared machine")."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))

if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)
