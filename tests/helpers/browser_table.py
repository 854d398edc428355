"""The table pages in a real browser, for the browser tests and the screenshots of docs/figures.

`play_server(folder)` runs `python play.py` in a subprocess, as a user does, and yields a
PlayServer with its base URL; `chromium()` launches Debian's Chromium through the playwright
package. tests/serve/conftest.py makes fixtures of both. The rest drives a page the way a person
does: `browser_page` and `watched` give a page whose script errors are kept in `page.errors`,
`open_table` sets up and opens a Gongzhu table, `play_cards` and `play_out_the_hand` click the
first legal card, and `take_fish_seat` joins a Fish table by its seat's link.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
URL_LINE = re.compile(r"ScrofaZero tables: (http://\S+/)")
CARDS = "#hand button[data-card]"  # the person's hand
LEGAL = "#hand button[data-card]:not(:disabled)"  # the cards of it they may play now
# the Fish table both the Fish browser test and its screenshot play at: one person, five bots
FISH_TABLE = {"type": "fish_create",
              "seats": ["open", "random", "logic", "random", "random", "random"], "seed": 3}


class PlayServer:
    """A running `python play.py`: its base URL, its process and everything it printed."""

    def __init__(self, proc: subprocess.Popen, url: str, output: list[str]):
        self.proc, self.url, self.output = proc, url, output

    def get(self, path: str):
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=10) as response:
            return json.loads(response.read())

    def post(self, path: str, body: dict):
        request = urllib.request.Request(self.url + path.lstrip("/"),
                                         data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


@contextmanager
def play_server(folder: Path, *settings: str):
    """`python play.py` on a free port with its records in `folder` (and `settings`, as
    KEY=VALUE), until the block ends."""
    proc = subprocess.Popen([sys.executable, "play.py", "port=0", *settings,
                             f"db={folder / 'records.sqlite'}", "seed=0", "torch_threads=1",
                             "fish_bot_delay=0",  # the tests' Fish bots need not wait for them
                             "review_worlds=32"],  # the tests' reviews need not be precise
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output: list[str] = []
    found = threading.Event()

    def drain():  # read everything so the server never blocks on a full pipe
        for line in proc.stdout:
            output.append(line)
            if URL_LINE.search(line):
                found.set()
        found.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        found.wait(timeout=60)
        match = next((URL_LINE.search(line) for line in output if URL_LINE.search(line)), None)
        if match is None:
            pytest.fail("python play.py printed no URL line; its output:\n" + "".join(output))
        yield PlayServer(proc, match.group(1), output)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        reader.join(timeout=5)


@contextmanager
def chromium():
    """Chromium, headless, until the block ends; a test fails (not skips) without it."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"the browser tests need Chromium at {CHROMIUM} (Debian: apt-get install "
                    "chromium); it is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need the playwright Python package (pip install playwright)")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


def watched(page, timeout_ms: int = 20_000, errors: list | None = None, console: bool = False):
    """`page` with a default timeout, keeping its uncaught script errors (and with `console`,
    what it logs as an error) in `page.errors`: `errors`, to share one list between pages."""
    page.set_default_timeout(timeout_ms)
    page.errors = [] if errors is None else errors
    page.on("pageerror", lambda err: page.errors.append(f"page error: {err}"))
    if console:
        page.on("console", lambda m: page.errors.append(f"console: {m.text}")
                if m.type == "error" else None)
    return page


@contextmanager
def browser_page(browser, size: dict, timeout_ms: int = 20_000, console: bool = False,
                 **options):
    """A watched page in a new browser context of viewport `size` (and playwright's context
    `options`), closed when the block ends."""
    context = browser.new_context(viewport=size, **options)
    try:
        yield watched(context.new_page(), timeout_ms, console=console)
    finally:
        context.close()


def open_table(page, url: str, bots: dict[int, str], deal: int | None = None,
               hands: int | None = None) -> None:
    """From the lobby at `url`, open a table with `bots` (seat -> kind) beside the person at
    seat 0, on standard deal `deal` and a match of `hands` when given; returns once the
    person's 13 cards are shown."""
    from playwright.sync_api import expect

    page.goto(url)
    expect(page.get_by_test_id("create")).to_be_enabled()
    for seat, kind in bots.items():
        page.get_by_test_id(f"seat-kind-{seat}").select_option(kind)
    if deal is not None or hands is not None:
        more_choices(page)
    if deal is not None:
        page.get_by_test_id("deal-number").fill(str(deal))
    if hands is not None:
        page.get_by_test_id("hands").fill(str(hands))
    page.get_by_test_id("create").click()
    expect(page.locator(CARDS)).to_have_count(13)


def more_choices(page) -> None:
    """Unfold the lobby's "More choices" (the deal, a match, public, the AI's thinking)."""
    if not page.locator("#more-choices").evaluate("d => d.open"):
        page.get_by_test_id("more-choices").click()


def play_cards(page, count: int) -> None:
    """Play the first legal card `count` times, each time until it has left the hand."""
    from playwright.sync_api import expect

    hand = page.locator(CARDS)
    held = hand.count()
    for played in range(1, count + 1):
        page.locator(LEGAL).first.click()
        expect(hand).to_have_count(held - played)


def play_out_the_hand(page) -> int:
    """Click the first legal card until the hand is over; the cards played."""
    over = page.get_by_test_id("game-over")
    played = 0
    while True:
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=game-over]').hidden"
            " || document.querySelector('#hand button[data-card]:not(:disabled)')")
        if over.is_visible():
            return played
        card = page.locator(LEGAL).first
        code = card.get_attribute("data-card")
        card.click()
        page.locator(f'#hand [data-card="{code}"]').wait_for(state="detached")
        played += 1


def take_fish_seat(page, url: str, made: dict, seat: int = 0, name: str = "Ann") -> None:
    """Open the link of `seat` at the Fish table `made` (the server's fish_created answer)
    and join it as `name`."""
    page.goto(f"{url}fish?table={made['table']}&seat={seat}&token={made['tokens'][str(seat)]}")
    page.get_by_test_id("fish-join-name").fill(name)
    page.get_by_test_id("fish-join").click()
