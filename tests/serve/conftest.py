"""The fixtures of the browser tests (test_browser.py, test_fish_browser.py, test_screenshots.py):
a `python play.py` server and Chromium, one of each per test module (tests/helpers/
browser_table.py). The tests that talk to an in-process server instead (serve_thread.py) define
a `server` fixture of their own, which pytest takes over this one.
"""

import pytest
from browser_table import chromium, play_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`python play.py` in a subprocess, as a user starts it (a PlayServer)."""
    with play_server(tmp_path_factory.mktemp("play")) as running:
        yield running


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (playwright's Browser)."""
    with chromium() as launched:
        yield launched
