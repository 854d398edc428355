"""The table page in a real browser: a person opens a table, plays a whole hand by clicking, and
the scores the page shows are the rules engine's; the replay page steps to the same end.

Runs `python play.py` in a subprocess (as a user does) and Debian's Chromium through the
playwright package. Set SCROFAZERO_SCREENSHOT=1 to refresh docs/figures/play_screenshot.png.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from scrofazero.games.gongzhu.cards import card_code, card_index
from scrofazero.games.gongzhu.deals import load_deals, parse_deal_line
from scrofazero.games.gongzhu.rules import GongzhuState

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOT = REPO / "docs" / "figures" / "play_screenshot.png"
DEAL = 7  # a standard deal
OTHERS = {1: "greed", 2: "scrofazero", 3: "random"}  # fast bots, one ScrofaZero for its thinking
URL_LINE = re.compile(r"ScrofaZero tables: (http://\S+/)")
PLAYED: dict = {}  # the game played in the browser, for the replay test


class Server:
    def __init__(self, proc: subprocess.Popen, url: str, output: list[str]):
        self.proc, self.url, self.output = proc, url, output

    def get(self, path: str):
        with urllib.request.urlopen(self.url + path.lstrip("/"), timeout=10) as response:
            return json.loads(response.read())

    def post(self, path: str, body: dict):
        request = urllib.request.Request(self.url + path.lstrip("/"), data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("play")
    proc = subprocess.Popen([sys.executable, "play.py", "port=0", f"db={tmp / 'records.sqlite'}",
                             "seed=0", "torch_threads=1"],
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
        yield Server(proc, match.group(1), output)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        reader.join(timeout=5)


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"the browser tests need Chromium at {CHROMIUM} (Debian: apt-get install "
                    "chromium); it is missing")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need the playwright Python package (pip install playwright)")
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.errors = []
    page.on("pageerror", lambda err: page.errors.append(f"page error: {err}"))
    page.on("console", lambda m: page.errors.append(f"console: {m.text}") if m.type == "error"
            else None)
    try:
        yield page
    finally:
        context.close()


def engine_result(game: dict) -> dict:
    """The stored game replayed on the rules engine: pile scores, team totals, returns."""
    state = GongzhuState(parse_deal_line(game["deal"]), leader=game["leader"])
    for move in game["moves"]:
        state.apply(card_index(move["card"]))
    assert state.is_terminal()
    scores = state.pile_scores()
    return {"scores": scores, "team": [scores[0] + scores[2], scores[1] + scores[3]],
            "returns": state.returns()}


def texts(page, testid_pattern: str, n: int) -> list[str]:
    return [page.get_by_test_id(testid_pattern.format(i)).inner_text().strip() for i in range(n)]


def open_thinking_on_a_searched_move(page) -> dict:
    """Open the thinking panel, pick (from the latest back) a ScrofaZero move that was searched,
    and return what the panel shows for it."""
    from playwright.sync_api import expect

    if page.get_by_test_id("thinking-toggle").get_attribute("aria-expanded") != "true":
        page.get_by_test_id("thinking-toggle").click()
    panel = page.get_by_test_id("thinking-panel")
    expect(panel).to_be_visible()
    items = panel.get_by_test_id("thinking-item")
    expect(items.first).to_be_visible()
    # pick an earlier move first: the panel follows the pick
    first_ply = items.first.get_attribute("data-ply")
    items.first.click()
    expect(panel.get_by_test_id("thinking-title")).to_have_attribute("data-ply", first_ply)
    for i in reversed(range(items.count())):
        items.nth(i).click()
        ply = items.nth(i).get_attribute("data-ply")
        expect(panel.get_by_test_id("thinking-title")).to_have_attribute("data-ply", ply)
        if panel.get_by_test_id("thinking-values").count():
            break
    else:
        pytest.fail("no searched ScrofaZero move in the thinking panel")
    rows = panel.locator("[data-testid=thinking-values] tr")
    values = {row.get_attribute("data-card"): row.locator("td.num").inner_text()
              for row in rows.all()}
    chosen = panel.locator("[data-testid=thinking-values] tr.chosen").get_attribute("data-card")
    heads = [panel.get_by_test_id(f"belief-seat-{s}").inner_text() for s in range(4)] \
        if panel.get_by_test_id("thinking-belief").count() else None
    return {"ply": int(ply), "values": values, "chosen": chosen, "belief_heads": heads,
            "deals": panel.get_by_test_id("thinking-deals").inner_text()}


def test_play_a_hand_in_the_browser(server, page, tmp_path):
    from playwright.sync_api import expect

    started = time.monotonic()
    page.goto(server.url)
    expect(page.get_by_test_id("create")).to_be_enabled()
    options = server.get("/api/options")
    assert page.get_by_test_id("show-thinking").is_checked() == options["thinking"]
    for seat, default in zip((1, 2, 3), options["default_bots"]):  # defaults from the server
        assert page.get_by_test_id(f"seat-kind-{seat}").input_value() == default
    for seat, kind in OTHERS.items():
        page.get_by_test_id(f"seat-kind-{seat}").select_option(kind)
    page.get_by_test_id("deal-number").fill(str(DEAL))
    page.get_by_test_id("live-thinking").check()  # thinking mid-hand only when asked for
    page.get_by_test_id("create").click()

    # the person's cards at the start are their dealt hand, sorted by suit (S H D C) and rank
    hand = page.locator("#hand button[data-card]")
    expect(hand).to_have_count(13)
    shown = hand.evaluate_all("cards => cards.map(c => c.dataset.card)")
    dealt = [card_code(int(c)) for c in load_deals()[DEAL][:13]]
    assert shown == sorted(dealt, key=card_index)
    expect(page.get_by_test_id("seat-name-1")).to_have_text("Mr. Greed")
    expect(page.get_by_test_id("connected-2")).to_have_attribute("data-connected", "true")

    over = page.get_by_test_id("game-over")
    played, thought = [], None
    checked_dim = reloaded = False
    while True:
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=game-over]').hidden"
            " || document.querySelector('#hand button[data-card]:not(:disabled)')")
        if over.is_visible():
            break
        enabled = page.locator("#hand button[data-card]:not(:disabled)")
        dimmed = page.locator("#hand button[data-card]:disabled")
        if not checked_dim and dimmed.count():
            # a dimmed card cannot be played: clicking it sends nothing and changes nothing
            code = dimmed.first.get_attribute("data-card")
            legal = enabled.count()
            dimmed.first.click(force=True)
            page.wait_for_timeout(300)
            expect(page.locator(f'#hand [data-card="{code}"]')).to_be_disabled()
            assert enabled.count() == legal  # still our turn: nothing was sent
            expect(page.get_by_test_id("error")).to_be_hidden()
            checked_dim = True
        if len(played) == 6 and thought is None:
            thought = open_thinking_on_a_searched_move(page)
            page.screenshot(path=str(tmp_path / "play_screenshot.png"), full_page=True)
            if os.environ.get("SCROFAZERO_SCREENSHOT") == "1":
                SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOT), full_page=True)
        card = enabled.first.get_attribute("data-card")
        enabled.first.click()
        expect(page.locator(f'#hand [data-card="{card}"]')).to_have_count(0)
        played.append(card)
        if len(played) == 4 and not reloaded:
            # a reload rejoins the seat (sessionStorage) where the game stands
            page.reload()
            expect(hand).to_have_count(13 - len(played))
            reloaded = True
    assert checked_dim and reloaded and thought is not None
    assert len(played) == 13

    game_id = int(over.get_attribute("data-game-id"))
    game = server.get(f"/api/games/{game_id}")
    assert game["status"] == "finished" and game["deal_number"] == DEAL
    assert [s["kind"] for s in game["seats"]] == ["open"] + list(OTHERS.values())
    assert [m["card"] for m in game["moves"] if m["seat"] == 0] == played
    assert all(m["fallback"] is None for m in game["moves"])
    want = engine_result(game)
    assert game["scores"] == want["scores"]

    # what the page shows is the engine's result, to the character
    assert texts(page, "summary-score-{}", 4) == [str(s) for s in want["scores"]]
    assert texts(page, "pile-score-{}", 4) == [str(s) for s in want["scores"]]
    assert texts(page, "summary-team-{}", 2) == [str(t) for t in want["team"]]
    assert texts(page, "team-score-{}", 2) == [str(t) for t in want["team"]]
    assert texts(page, "summary-return-{}", 4) == [str(r) for r in want["returns"]]
    expect(page.get_by_test_id("replay-link")).to_have_attribute("href", f"/?replay={game_id}")
    expect(page.get_by_test_id("export-link")).to_have_attribute("href",
                                                                  f"/api/games/{game_id}/export")

    # the thinking panel showed the recorded values of a ScrofaZero move and its chosen card
    move = game["moves"][thought["ply"] - 1]
    assert move["seat"] == 2 and move["thinking"] is not None
    assert thought["chosen"] == move["card"]
    assert thought["values"] == {v["card"]: f"{v['value']:.2f}" if v["value"] is not None else "—"
                                 for v in move["thinking"]["values"]}
    assert str(move["thinking"]["deals"]) in thought["deals"]
    if thought["belief_heads"] is not None:
        for seat, head in enumerate(thought["belief_heads"]):
            assert head.startswith("You" if seat == 0 else game["seats"][seat]["name"])

    assert (tmp_path / "play_screenshot.png").stat().st_size > 10_000
    assert not page.errors, page.errors
    PLAYED["game_id"] = game_id
    print(f"browser hand: {time.monotonic() - started:.1f} s")


@pytest.fixture(scope="module")
def finished_game(server):
    """The game played in the browser, or (when that test did not run) a game of bots."""
    if "game_id" in PLAYED:
        return PLAYED["game_id"]
    created = server.post("/api/tables", {"type": "create", "deal": DEAL,
                                          "seats": ["greed", "greed", "scrofazero", "random"]})
    limit = time.monotonic() + 60
    while server.get(f"/api/games/{created['game_id']}")["status"] != "finished":
        assert time.monotonic() < limit, "the bots' game did not finish"
        time.sleep(0.2)
    return created["game_id"]


def test_replay_page_steps_to_the_final_scores(server, page, finished_game):
    from playwright.sync_api import expect

    game = server.get(f"/api/games/{finished_game}")
    want = engine_result(game)
    page.goto(f"{server.url}?replay={finished_game}")
    label = page.get_by_test_id("replay-ply")
    expect(label).to_have_text("move 0 / 52")
    for seat in range(4):  # the deal: all four hands
        expect(page.locator(f"[data-testid=replay-hand-{seat}] [data-card]")).to_have_count(13)
    expect(page.get_by_test_id("replay-prev")).to_be_disabled()

    page.get_by_test_id("replay-next").click()
    expect(label).to_have_text("move 1 / 52")
    first = game["moves"][0]
    expect(page.locator("[data-testid=replay-trick] [data-card]")).to_have_count(1)
    expect(page.locator(f"[data-testid=replay-trick] [data-card={first['card']}]")).to_have_count(1)
    expect(page.locator(f"[data-testid=replay-hand-{first['seat']}] [data-card]")).to_have_count(12)

    searched = next(m for m in game["moves"] if m["thinking"] and not m["thinking"]["forced"])
    page.get_by_test_id("replay-slider").fill(str(searched["ply"]))
    expect(label).to_have_text(f"move {searched['ply']} / 52")
    thinking = page.get_by_test_id("replay-thinking")
    expect(thinking.locator("[data-testid=thinking-values] tr.chosen")).to_have_attribute(
        "data-card", searched["card"])

    page.get_by_test_id("replay-last").click()
    expect(label).to_have_text("move 52 / 52")
    expect(page.get_by_test_id("replay-next")).to_be_disabled()
    for seat in range(4):
        expect(page.locator(f"[data-testid=replay-hand-{seat}] [data-card]")).to_have_count(0)
    assert texts(page, "replay-pile-score-{}", 4) == [str(s) for s in want["scores"]]
    assert texts(page, "replay-final-score-{}", 4) == [str(s) for s in want["scores"]]
    assert texts(page, "replay-team-score-{}", 2) == [str(t) for t in want["team"]]
    page.get_by_test_id("replay-first").click()
    expect(label).to_have_text("move 0 / 52")
    assert not page.errors, page.errors


def test_join_link_takes_the_seat(server, page):
    from playwright.sync_api import expect

    created = server.post("/api/tables", {"type": "create", "deal": 1,
                                          "seats": ["open", "random", "open", "random"]})
    table, token = created["table"], created["tokens"]["2"]
    page.goto(f"{server.url}?table={table}&seat=2&token={token}")
    expect(page.locator("#hand button[data-card]")).to_have_count(13)
    expect(page.locator("#slot-bottom [data-testid=seat-2]")).to_have_count(1)  # self at bottom
    expect(page.locator("#slot-top [data-testid=seat-0]")).to_have_count(1)  # partner on top
    expect(page.get_by_test_id("connected-0")).to_have_attribute("data-connected", "false")
    expect(page.get_by_test_id("turn")).to_contain_text("Waiting for")
    # a wrong token is refused visibly, back in the lobby
    page.goto(f"{server.url}?table={table}&seat=0&token=wrong")
    expect(page.get_by_test_id("error")).to_contain_text("bad_token")
    expect(page.get_by_test_id("lobby")).to_be_visible()
    assert not page.errors, page.errors
