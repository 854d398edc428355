"""Shared test set-up: the helper modules (slow references, position generators) in
tests/helpers/ are importable by name from every test folder."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "helpers"))
