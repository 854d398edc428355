"""The table page in a real browser: a person opens a table, plays a whole hand by clicking, and
the scores the page shows are the rules engine's; the replay page steps to the same end; the
table fits a phone and a laptop screen.

Runs `python play.py` in a subprocess (as a user does) and Debian's Chromium through the
playwright package (the fixtures of tests/serve/conftest.py). The table's rough edges at the end
(a phone's scroll, a short laptop screen, unnamed people, error pages, the trick's note and a big
pile, a finished trick's pause, Back) are each a test; some drive the page over a faked socket
(tests/helpers/fake_table.py) to show what bots rarely make. The screenshots of docs/figures
are made by tests/serve/test_screenshots.py.
"""

from __future__ import annotations

import re
import time
import urllib.error

import pytest
from browser_table import (
    CARDS,
    LAPTOP,
    LEGAL,
    PHONE,
    browser_page,
    more_choices,
    open_table,
    play_cards,
    play_out_the_hand,
    play_server,
    watched,
)
from fake_table import HEARTS, join_fake_table, welcome
from gongzhu_replay import replayed, replayed_team

from scrofazero.games.gongzhu.cards import card_code, card_index
from scrofazero.games.gongzhu.deals import load_deals

DEAL = 7  # a standard deal
OTHERS = {1: "greed", 2: "scrofazero", 3: "random"}  # fast bots, one ScrofaZero for its thinking
TWINS = {1: "scrofazero", 2: "greed", 3: "scrofazero"}  # two seats of the same name
FAST = {1: "greed", 2: "random", 3: "greed"}  # bots that answer at once
SCREENS = {"phone": PHONE, "laptop": LAPTOP}
PLAYED: dict = {}  # the game played in the browser, for the replay test


@pytest.fixture
def page(browser):
    """A page of its own at 1440x1000; a console error counts as a script error too."""
    with browser_page(browser, {"width": 1440, "height": 1000}, console=True) as page:
        yield page


def engine_result(game: dict) -> dict:
    """The stored game replayed on the rules engine: pile scores, team totals, returns."""
    state = replayed(game)
    assert state.is_terminal()
    scores = state.pile_scores()
    return {"scores": scores, "team": [scores[0] + scores[2], scores[1] + scores[3]],
            "returns": state.returns()}


def trick_winner(cards: list[str], seats: list[int]) -> int:
    """The seat taking a trick by docs/rules.md section 2: the highest card of the suit led
    (card indices run by rank within a suit)."""
    led = card_index(cards[0]) // 13
    best = max((i for i, c in enumerate(cards) if card_index(c) // 13 == led),
               key=lambda i: card_index(cards[i]))
    return seats[best]


def game_lines(page) -> list[str]:
    """The event log's lines about the game itself: the start, each card, each trick."""
    lines = page.get_by_test_id("log").locator("li").all_inner_texts()
    keep = re.compile(r"^(\d+\. .+ played |.+ wins? the trick|The hand starts)")
    return [line.strip() for line in lines if keep.match(line.strip())]


def reviewed_tricks(page) -> list[dict]:
    """Every trick of the trick list, stepped through from the first: cards, seats, winner."""
    from playwright.sync_api import expect

    label = page.get_by_test_id("trick-review-label")
    prev = page.get_by_test_id("trick-review-prev")
    while prev.is_enabled():
        prev.click()
    expect(label).to_have_attribute("data-index", "1")
    tricks = []
    while True:
        box = page.get_by_test_id("last-trick")
        cards = box.locator(".last-card")
        codes = cards.evaluate_all(
            "cs => cs.map(c => c.querySelector('[data-card]').dataset.card)")
        seats = cards.evaluate_all("cs => cs.map(c => c.dataset.seat)")
        tricks.append({"cards": codes, "seats": [int(x) for x in seats],
                       "winner": int(box.get_attribute("data-winner"))})
        nxt = page.get_by_test_id("trick-review-next")
        if not nxt.is_enabled():
            return tricks
        index = label.get_attribute("data-index")
        nxt.click()
        expect(label).to_have_attribute("data-index", str(int(index) + 1))


def texts(page, testid_pattern: str, n: int) -> list[str]:
    return [page.get_by_test_id(testid_pattern.format(i)).inner_text().strip() for i in range(n)]


def finished_id(page) -> int:
    """The id of the game the page's end-of-hand summary is about."""
    return int(page.get_by_test_id("game-over").get_attribute("data-game-id"))


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
    # opened mid-hand, every move's chip shows whole: none clipped or scrolled away
    box = panel.get_by_test_id("thinking-list").bounding_box()
    for chip in items.all():
        b = chip.bounding_box()
        assert box["y"] <= b["y"] and b["y"] + b["height"] <= box["y"] + box["height"] + 0.5, (
            b, box)
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
    # a short pause after each trick (the 2 s one has its own test), long enough to see the
    # title leave "Your turn" when the trick the person's card ends is theirs to lead again
    short_pause = "() => { window.scrofazero.trickHoldMs = 400; }"
    page.evaluate(short_pause)
    options = server.get("/api/options")
    assert page.get_by_test_id("show-thinking").is_checked() == options["thinking"]
    for seat, default in zip((1, 2, 3), options["default_bots"]):  # defaults from the server
        assert page.get_by_test_id(f"seat-kind-{seat}").input_value() == default
    for seat, kind in OTHERS.items():
        page.get_by_test_id(f"seat-kind-{seat}").select_option(kind)
    more_choices(page)
    page.get_by_test_id("deal-number").fill(str(DEAL))
    page.get_by_test_id("live-thinking").check()  # thinking mid-hand only when asked for
    page.get_by_test_id("create").click()

    # the person's cards at the start are their dealt hand, sorted by suit (S H D C) and rank
    hand = page.locator(CARDS)
    expect(hand).to_have_count(13)
    shown = hand.evaluate_all("cards => cards.map(c => c.dataset.card)")
    dealt = [card_code(int(c)) for c in load_deals()[DEAL][:13]]
    assert shown == sorted(dealt, key=card_index)
    expect(page.get_by_test_id("seat-name-1")).to_have_text("Mr. Greed")
    expect(page.get_by_test_id("connected-2")).to_have_attribute("data-connected", "true")

    expect(page.get_by_test_id("legend")).to_contain_text("a scoring card")
    assert not page.get_by_test_id("beep").is_checked()  # the sound is off unless asked for
    over = page.get_by_test_id("game-over")
    played, thought = [], None
    checked_dim = reloaded = False
    while True:
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=game-over]').hidden"
            " || document.querySelector('#hand button[data-card]:not(:disabled)')")
        if over.is_visible():
            break
        enabled = page.locator(LEGAL)
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
        # the tab's title tells a person it is their turn, and only then
        expect(page).to_have_title(re.compile(r"^Your turn - "))
        card = enabled.first.get_attribute("data-card")
        enabled.first.click()
        page.wait_for_function("() => !document.title.startsWith('Your turn')")
        expect(page.locator(f'#hand [data-card="{card}"]')).to_have_count(0)
        played.append(card)
        if len(played) == 4 and not reloaded:
            # a reload rejoins the seat (sessionStorage) where the game stands, with the log of
            # the hand so far and its tricks rebuilt from the history
            before = game_lines(page)
            page.reload()
            page.evaluate(short_pause)
            expect(hand).to_have_count(13 - len(played))
            after = game_lines(page)
            # the start, 13 cards at least (seat 0 leads) and the 3 tricks they made
            assert len(before) >= 1 + 13 + 3 and after[:len(before)] == before, (before, after)
            assert len(reviewed_tricks(page)) >= 3
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

    # every trick of the hand can be reviewed, as played, with the seat that took it
    moves = game["moves"]
    want_tricks = [{"cards": [m["card"] for m in moves[i:i + 4]],
                    "seats": [m["seat"] for m in moves[i:i + 4]]} for i in range(0, 52, 4)]
    for trick in want_tricks:
        trick["winner"] = trick_winner(trick["cards"], trick["seats"])
    assert reviewed_tricks(page) == want_tricks

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
    while not _finished(server, created["game_id"]):
        assert time.monotonic() < limit, "the bots' game did not finish"
        time.sleep(0.2)
    return created["game_id"]


def _finished(server, game_id: int) -> bool:
    """Whether the stored game is over; its record is refused (409 in_play) until then."""
    try:
        return server.get(f"/api/games/{game_id}")["status"] == "finished"
    except urllib.error.HTTPError as err:
        if err.code != 409:
            raise
        return False


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

    # on a phone the arrow keys step the replay and scroll nothing sideways
    page.set_viewport_size({"width": 390, "height": 844})
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(label).to_have_text("move 2 / 52")
    scrolled = page.evaluate("() => [scrollX, document.documentElement.scrollWidth <= innerWidth]")
    assert scrolled == [0, True]
    assert not page.errors, page.errors


def test_bad_urls_get_a_page_that_says_what_is_wrong(server, page):
    """A replay id that is not a number or names no game, and a table not on the server, each
    get a plain page with the reason and a way on (not a raw error, nor a table with live
    controls); the lobby link there leads on."""
    from playwright.sync_api import expect

    for path, words in (("?replay=abc", "'abc' is not a game number"),
                        ("?replay=999999", "no game 999999"),
                        ("?table=nosuch&seat=9&token=abc", "There is no table 'nosuch'")):
        page.goto(f"{server.url}{path}")
        expect(page.get_by_test_id("problem-text")).to_contain_text(words)
        expect(page.get_by_test_id("create")).to_have_count(0)
        expect(page.get_by_test_id("join-button")).to_have_count(0)
    page.get_by_role("link", name=re.compile("the lobby")).click()
    expect(page.get_by_test_id("create")).to_be_enabled()


def test_replay_controls_wait_for_the_replay(server, page, finished_game):
    """The replay's steps are disabled until its moves have loaded (a step or a slider moved
    before then would be lost), and stay so when they cannot load."""
    from playwright.sync_api import expect

    controls = ["replay-first", "replay-prev", "replay-slider", "replay-next", "replay-last"]
    page.route("**/api/games/*/replay", lambda route: route.abort())
    page.goto(f"{server.url}?replay={finished_game}")
    expect(page.locator("#error-text")).to_contain_text(f"Cannot load game {finished_game}")
    for name in controls:
        expect(page.get_by_test_id(name)).to_be_disabled()
    page.unroute("**/api/games/*/replay")
    page.goto(f"{server.url}?replay={finished_game}")
    expect(page.get_by_test_id("replay-ply")).to_have_text("move 0 / 52")
    for name in controls[2:]:  # at move 0 there is nothing before it to step back to
        expect(page.get_by_test_id(name)).to_be_enabled()


def test_rules_page_is_reachable_from_the_table(server, page):
    from playwright.sync_api import expect

    page.goto(server.url)
    with page.context.expect_page() as opened:
        page.get_by_test_id("rules-link").click()
    rules = opened.value
    expect(rules.get_by_test_id("help")).to_contain_text("Following suit")
    for section in ("deal", "teams", "scoring", "hearts", "doubler", "mid-game"):
        expect(rules.locator(f"#{section}")).to_have_count(1)
    values = dict(row.split("\t") for row in
                  rules.locator("[data-testid=help-values] tbody tr").all_inner_texts())
    assert values["Q\u2660, the pig"] == "\u2212100" and values["J\u2666, the sheep"] == "+100"


def inside(box: dict | None, width: int, height: int) -> bool:
    """Whether a bounding box lies on the screen; None (an element not laid out at that
    moment, e.g. re-drawn while a move arrives) is not."""
    return box is not None and (box["x"] >= 0 and box["y"] >= 0
                                and box["x"] + box["width"] <= width + 0.5
                                and box["y"] + box["height"] <= height + 0.5)


@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_the_table_fits_the_screen(server, browser, screen, tmp_path):
    """At 390x844 and 1280x800 every seat and every card of the hand is on the screen, the page
    is no wider than it, and on the laptop the 13 cards lie in one row. Two ScrofaZero seats
    have labels of their own everywhere."""
    from playwright.sync_api import expect

    size = SCREENS[screen]
    width, height = size["width"], size["height"]
    with browser_page(browser, size) as page:
        open_table(page, server.url, TWINS, DEAL)
        page.evaluate("() => { window.scrofazero.trickHoldMs = 0; }")  # no pause after a trick
        hand = page.locator(CARDS)

        def check_fit(cards: int) -> None:
            page.mouse.move(0, 0)  # no card lifted by the pointer
            page.evaluate("() => scrollTo(0, 0)")
            expect(hand).to_have_count(cards)
            assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
            for seat in range(4):
                box = page.get_by_test_id(f"seat-{seat}").bounding_box()
                assert inside(box, width, height), (screen, seat, box)
            boxes = [b.bounding_box() for b in hand.all()]
            assert all(inside(b, width, height) for b in boxes), (screen, boxes)
            # one row, a fan: every card's middle within half a card's height of the others'
            middles = [b["y"] + b["height"] / 2 for b in boxes]
            assert max(middles) - min(middles) < min(b["height"] for b in boxes) / 2, boxes

        def settled_fit(cards: int) -> None:
            """check_fit once the layout has settled (a card's lift and the trick's moves are
            CSS transitions): the last of a few tries within 3 s decides."""
            for _ in range(5):
                try:
                    return check_fit(cards)
                except AssertionError:
                    page.wait_for_timeout(600)
            check_fit(cards)

        settled_fit(13)
        play_cards(page, 4)  # a hand in progress
        page.wait_for_selector(LEGAL)
        settled_fit(9)
        left, right = (page.get_by_test_id(f"seat-name-{s}").inner_text() for s in (1, 3))
        assert (left, right) == ("ScrofaZero (left)", "ScrofaZero (right)")
        log = page.get_by_test_id("log").inner_text()
        assert "ScrofaZero (left) played" in log and "ScrofaZero (right) played" in log
        names = page.locator("#trick-area .trick-name, "
                             "[data-testid=last-trick] .hint").all_inner_texts()
        assert "ScrofaZero" not in [n.strip() for n in names]  # never the bare, shared name
        page.screenshot(path=str(tmp_path / f"play_{screen}.png"))
        assert (tmp_path / f"play_{screen}.png").stat().st_size > 10_000
        assert not page.errors, page.errors


def test_join_link_takes_the_seat(server, page):
    from playwright.sync_api import expect

    created = server.post("/api/tables", {"type": "create", "deal": 1,
                                          "seats": ["open", "random", "open", "random"]})
    table, token = created["table"], created["tokens"]["2"]
    page.goto(f"{server.url}?table={table}&seat=2&token={token}")
    # the invited person says who they are, and the table (and its records) call them so
    page.get_by_test_id("join-name").fill("Alice")
    page.get_by_test_id("join-button").click()
    expect(page.locator(CARDS)).to_have_count(13)
    expect(page.get_by_test_id("seat-name-2")).to_have_text("You")
    listed = next(t for t in server.get("/api/tables") if t["table"] == table)
    assert listed["players"][2]["name"] == "Alice"
    page.reload()  # the seat is kept for the tab: no second question
    expect(page.locator(CARDS)).to_have_count(13)
    expect(page.get_by_test_id("join")).to_be_hidden()
    expect(page.locator("#slot-bottom [data-testid=seat-2]")).to_have_count(1)  # self at bottom
    expect(page.locator("#slot-top [data-testid=seat-0]")).to_have_count(1)  # partner on top
    expect(page.get_by_test_id("connected-0")).to_have_attribute("data-connected", "false")
    expect(page.get_by_test_id("turn")).to_contain_text("Waiting for")
    # a wrong token is refused visibly, back in the lobby
    page.goto(f"{server.url}?table={table}&seat=0&token=wrong")
    page.get_by_test_id("join-button").click()
    expect(page.get_by_test_id("error")).to_contain_text("bad_token")
    expect(page.get_by_test_id("lobby")).to_be_visible()
    assert not page.errors, page.errors


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "laptop"])
def test_a_match_of_two_hands(server, page, size):
    """A two-hand match at a phone's and a laptop's size: the running totals and per-hand
    history after the first hand equal the rules engine's replay of the records, the Next hand
    button, the match's result, and its replay through both hands."""
    from playwright.sync_api import expect

    page.set_viewport_size({"width": size[0], "height": size[1]})
    open_table(page, server.url, FAST, DEAL, hands=2)
    page.evaluate("() => { window.scrofazero.trickHoldMs = 0; }")  # no pause to see each trick
    expect(page.get_by_test_id("match-panel")).to_contain_text("Hand 1 of 2")

    assert play_out_the_hand(page) == 13
    first = server.get(f"/api/games/{finished_id(page)}")
    replayed = replayed_team(first)
    scores = first["scores"]
    assert replayed == [scores[0] + scores[2], scores[1] + scores[3]]
    expect(page.get_by_test_id("match-hand-1")).to_contain_text(str(replayed[0]))
    expect(page.get_by_test_id("match-total-1")).to_have_text(str(replayed[1]))
    assert first["match_id"] is not None and first["hand"] == 1
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")
    button = page.get_by_test_id("next-hand")
    button.scroll_into_view_if_needed()
    box = button.bounding_box()  # within the screen's width once scrolled to
    assert box["x"] >= 0 and box["x"] + box["width"] <= size[0] and 0 <= box["y"] < size[1]
    page.get_by_test_id("next-hand").click()  # the bots are ready at once: the hand starts
    expect(page.locator(CARDS)).to_have_count(13)
    expect(page.get_by_test_id("match-panel")).to_contain_text("Hand 2 of 2")
    expect(page.locator("#table-info")).to_contain_text("deal told at the end of the match")
    # the deal number is told only when the match is over (hand 2 plays a random deal)
    assert server.get(f"/api/games/{first['id']}")["deal_number"] is None

    assert play_out_the_hand(page) == 13
    second = server.get(f"/api/games/{finished_id(page)}")
    assert second["match_id"] == first["match_id"] and second["hand"] == 2
    totals = [a + b for a, b in zip(replayed, replayed_team(second))]
    result = page.get_by_test_id("match-result")
    expect(result).to_contain_text(f"{totals[0]} to {totals[1]}, after 2 hands")
    expect(page.get_by_test_id("next-hand")).to_have_count(0)
    assert texts(page, "match-total-{}", 2) == [str(t) for t in totals]
    assert server.get(f"/api/games/{first['id']}")["deal_number"] == DEAL
    assert second["deal_number"] is None  # only the first hand's deal was chosen
    expect(page.locator("#table-info")).to_contain_text("random deal")
    expect(page.locator("#table-info")).to_contain_text("open deal")

    # the match's replay steps from the first hand into the second
    page.goto(f"{server.url}?match={first['match_id']}")
    label = page.get_by_test_id("replay-ply")
    expect(label).to_have_text("hand 1 of 2 · move 0 / 52")
    page.get_by_test_id("replay-hand").select_option("0")
    page.get_by_test_id("replay-slider").fill("52")
    expect(label).to_have_text("hand 1 of 2 · move 52 / 52")
    page.get_by_test_id("replay-next").click()
    expect(label).to_have_text("hand 2 of 2 · move 0 / 52")
    page.get_by_test_id("replay-last").click()
    expect(label).to_have_text("hand 2 of 2 · move 52 / 52")
    assert texts(page, "replay-match-total-{}", 2) == [str(t) for t in totals]
    assert not page.errors, page.errors


def test_the_lobby_asks_for_no_larger_page_than_the_server_gives(tmp_path, page):
    """A listing's limit past the server's max_page_size is refused (400): the lobby asks for
    the server's own (GET /api/options), so its open tables show on a server with small pages."""
    from playwright.sync_api import expect

    with play_server(tmp_path, "max_page_size=5") as small:
        table = small.post("/api/tables", {"type": "create", "public": True,
                                           "seats": ["random", "open", "random", "random"]})
        page.goto(small.url)
        expect(page.get_by_test_id(f"claim-{table['table']}-1")).to_be_visible()


def test_a_public_seat_is_taken_from_the_lobby(server, page):
    from playwright.sync_api import expect

    created = server.post("/api/tables", {"type": "create", "public": True,
                                          "seats": ["random", "open", "random", "open"]})
    table = created["table"]
    page.goto(server.url)
    page.get_by_test_id("player-name").fill("Bea")
    page.get_by_test_id(f"claim-{table}-3").click()
    expect(page.locator(CARDS)).to_have_count(13)
    expect(page.locator("#slot-bottom [data-testid=seat-3]")).to_have_count(1)
    listed = next(t for t in server.get("/api/tables") if t["table"] == table)
    assert listed["players"][3]["name"] == "Bea" and listed["open_seats"] == [1]
    # the lobby lists only the seat still open; taken meanwhile, it is refused in the server's words
    page.goto(server.url)
    expect(page.get_by_test_id(f"claim-{table}-1")).to_be_visible()
    expect(page.get_by_test_id(f"claim-{table}-3")).to_have_count(0)
    server.post(f"/api/tables/{table}/claim", {"seat": 1, "name": "Cy"})
    page.get_by_test_id(f"claim-{table}-1").click()
    expect(page.get_by_test_id("error")).to_contain_text("seat_taken")
    expect(page.get_by_test_id("lobby")).to_be_visible()


def test_the_small_things_a_person_meets_in_one_hand(server, browser):
    """One hand against fast bots, and the details a person notices at once: "You lead" (not "You
    (seat 0) leads"); the creator's own seat link, kept on the device, opens the seat in a new tab,
    and the tab it replaced goes inert and says so; Lobby asks before leaving a hand; a single
    hand's summary has no literal "null" and no "match"; the thinking panel's label after the hand;
    the phone lobby fits 390 px; replay labels name a seat once."""
    from playwright.sync_api import expect

    context = browser.new_context(viewport=PHONE)
    first = watched(context.new_page())
    first.goto(server.url)
    expect(first.get_by_test_id("create")).to_be_enabled()
    # the phone's lobby fits its width: nothing to scroll sideways
    assert first.evaluate("() => document.documentElement.scrollWidth") <= 390
    first.set_viewport_size(LAPTOP)
    open_table(first, server.url, OTHERS)
    log = first.get_by_test_id("log")
    expect(log).to_contain_text("The hand starts; You lead.")
    own = first.get_by_test_id("own-seat-link")
    expect(own).to_be_visible()
    table = first.evaluate("() => window.scrofazero.session.table")
    assert f"table={table}&seat=0&token=" in own.get_attribute("href")

    # a new tab of the same browser, with no token in its URL, finds the seat kept on the device
    second = watched(context.new_page(), errors=first.errors)
    second.goto(f"{server.url}?table={table}&seat=0")
    expect(second.locator(CARDS)).to_have_count(13)
    expect(second.get_by_test_id("join")).to_be_hidden()
    # the replaced tab: no card to click, no clock, and it says why
    expect(first.get_by_test_id("turn")).to_contain_text("played in another tab")
    expect(first.locator(LEGAL)).to_have_count(0)
    assert "left" not in first.get_by_test_id("turn").inner_text()

    # Lobby asks before it leaves a hand in play; dismissed, the hand goes on
    asked = []
    second.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    second.get_by_test_id("lobby-link").click()
    second.wait_for_timeout(300)
    assert asked and "Leave this table?" in asked[0]
    expect(second.get_by_test_id("game")).to_be_visible()

    second.evaluate("() => { window.scrofazero.trickHoldMs = 0; }")
    assert play_out_the_hand(second) == 13
    summary = second.get_by_test_id("game-over")
    expect(summary).to_contain_text("The hand is over")
    text = summary.inner_text()
    assert "null" not in text and "match" not in text, text
    assert "match" not in second.locator("#table-info").inner_text()
    status = second.locator("#thinking-status").inner_text()
    assert "in this hand" in status and "when the hand is over" not in status, status
    assert "You (seat 0)" not in second.get_by_test_id("log").inner_text()

    # a replay of four same-named bots names each seat once
    made = server.post("/api/tables", {"type": "create", "seats": ["random"] * 4, "deal": 3})
    for _ in range(200):
        if _finished(server, made["game_id"]):
            break
        time.sleep(0.1)
    second.goto(f"{server.url}?replay={made['game_id']}")
    second.get_by_test_id("replay-slider").fill("52")
    expect(second.get_by_test_id("replay-ply")).to_have_text("move 52 / 52", timeout=20_000)
    shown = second.get_by_test_id("replay").inner_text()
    assert not re.search(r"\(seat \d\) \(seat \d\)", shown), shown
    assert "(seat 3)" in shown
    assert not first.errors, first.errors
    context.close()


SUIT_ORDER = "SHDC"
# words of the code, not of the page: a bot's kind after "·", a seat's kind, "ply", "return"
INTERNAL = re.compile(r"· *(greed|random|scrofazero|raw|open|if)\b|\b[Pp]ly\b|\b[Rr]eturns?\b")


def played_by(page) -> dict[int, int]:
    """How many cards the event log says each other seat has played."""
    lines = game_lines(page)
    return {seat: sum(f". {page.get_by_test_id(f'seat-name-{seat}').inner_text()} played " in line
                      for line in lines) for seat in (1, 2, 3)}


def check_backs(page) -> None:
    """Each other hand shows as backs, as many as the cards it still holds, its count beside."""
    played = played_by(page)
    for seat in (1, 2, 3):
        left = 13 - played[seat]
        expect_text = page.get_by_test_id(f"cards-left-{seat}").inner_text()
        backs = page.locator(f"[data-testid=backs-{seat}] .back").count()
        assert (int(expect_text), backs) == (left, left), (seat, expect_text, backs, played)
        # a back shows no card: nothing of the hand is in the page
        assert page.get_by_test_id(f"hand-backs-{seat}").locator("[data-card]").count() == 0


def test_the_table_looks_like_a_card_table(server, page):
    """The other hands are card backs whose counts fall as they play, your hand is fanned and
    grouped by suit in order, a card played moves (a CSS transition), and no text of the page
    uses the code's words ("· greed", "ply", "return") at the table, after the hand, in the
    thinking panel and in the replay."""
    from playwright.sync_api import expect

    open_table(page, server.url, {1: "greed", 2: "scrofazero", 3: "greed"}, DEAL)  # thinking
    hand = page.locator(CARDS)
    suits = hand.evaluate_all("cs => cs.map(c => c.dataset.suit)")
    assert suits == sorted(suits, key=SUIT_ORDER.index), suits  # grouped, in S H D C order
    for seat in (1, 2, 3):
        expect(page.get_by_test_id(f"seat-{seat}")).to_be_visible()
    page.wait_for_selector(LEGAL)
    check_backs(page)
    # a played card moves to the table: a transition of some length on the trick's cards
    hand.and_(page.locator(":not(:disabled)")).first.click()
    card = page.locator("#trick-area .trick-card .card").first
    card.wait_for()
    assert card.evaluate("c => getComputedStyle(c).transitionDuration") != "0s"
    page.evaluate("() => { window.scrofazero.trickHoldMs = 0; }")  # no pause after a trick
    for _ in range(3):
        page.wait_for_selector(LEGAL)
        check_backs(page)
        hand.and_(page.locator(":not(:disabled)")).first.click()
    page.wait_for_selector(LEGAL)
    check_backs(page)
    assert min(played_by(page).values()) >= 3  # the counts did fall
    shown = page.get_by_test_id("game").inner_text()
    assert not INTERNAL.search(shown), INTERNAL.search(shown)

    play_out_the_hand(page)
    page.get_by_test_id("thinking-toggle").click()
    expect(page.get_by_test_id("thinking-item").first).to_be_visible()
    shown = page.get_by_test_id("game").inner_text()
    assert not INTERNAL.search(shown), INTERNAL.search(shown)
    expect(page.get_by_test_id("thinking-title")).to_contain_text("Move ")
    game_id = finished_id(page)
    page.goto(f"{server.url}?replay={game_id}")
    page.get_by_test_id("replay-slider").fill("10")
    expect(page.get_by_test_id("replay-ply")).to_have_text("move 10 / 52")
    shown = page.get_by_test_id("replay").inner_text()
    assert not INTERNAL.search(shown), INTERNAL.search(shown)
    assert not page.errors, page.errors


def test_a_phone_sees_names_and_score_on_its_turn_and_no_motion_when_asked(server, browser):
    """At 390x844, under the system's "reduce motion": on your turn the score and the
    opponents' names are on the screen without scrolling, nothing is wider than the screen, and
    a card played has no transition."""
    from playwright.sync_api import expect

    with browser_page(browser, PHONE, reduced_motion="reduce") as page:
        open_table(page, server.url, FAST, DEAL)
        hand = page.locator(CARDS)
        for played in range(3):
            page.wait_for_selector(LEGAL)
            page.mouse.move(0, 0)
            page.evaluate("() => scrollTo(0, 0)")  # the page as it opens: nothing scrolled
            assert page.evaluate("() => document.documentElement.scrollWidth") == 390
            on_screen = [page.get_by_test_id(t) for t in
                         ("score-strip", "strip-score-mine", "strip-score-theirs",
                          "seat-name-1", "seat-name-2", "seat-name-3", "cards-left-1",
                          "cards-left-3")]
            on_screen += [hand.nth(i) for i in range(hand.count())]
            for node in on_screen:
                box = node.bounding_box()
                assert box and inside(box, 390, 844), (node, box)
            hand.and_(page.locator(":not(:disabled)")).first.click()
            expect(hand).to_have_count(12 - played)
        card = page.locator("#trick-area .trick-card .card").first
        assert card.evaluate("c => getComputedStyle(c).transitionDuration") == "0s"
        assert hand.first.evaluate("c => getComputedStyle(c).transitionDuration") == "0s"
        team = page.get_by_test_id("team-score-0").inner_text()
        assert page.get_by_test_id("strip-score-mine").inner_text() == team
        assert not page.errors, page.errors


# --- the table's rough edges -----------------------------------------------------------------

def overlap(a: dict, b: dict) -> bool:
    """Whether two bounding boxes share some area."""
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def waiting_table(server, seats: list[str] | None = None) -> str:
    """A real table of the server, waiting for its open seats: a URL the page may open."""
    return server.post("/api/tables", {"type": "create",
                                       "seats": seats or ["open"] * 4})["table"]


def test_a_phone_opens_the_table_at_its_top_with_the_hand_clear_of_the_score_line(server,
                                                                                  browser):
    """On a phone with touch, a table opened from a lobby scrolled down opens at its top (the
    seats and the hand on the screen, the hand under no sticky score line); on your turn a hand
    the score line covers is scrolled clear of it."""
    from playwright.sync_api import expect

    with browser_page(browser, PHONE, has_touch=True, is_mobile=True) as page:
        page.goto(server.url)
        expect(page.get_by_test_id("create")).to_be_enabled()
        for seat, kind in FAST.items():
            page.get_by_test_id(f"seat-kind-{seat}").select_option(kind)
        more_choices(page)
        page.evaluate("() => scrollTo(0, document.body.scrollHeight)")
        assert page.evaluate("() => scrollY") > 400
        page.get_by_test_id("create").tap()
        page.wait_for_selector(LEGAL)
        strip = page.get_by_test_id("score-strip")

        def hand_clear() -> None:
            bar = strip.bounding_box()
            for card in page.locator(CARDS).all():
                box = card.bounding_box()
                assert inside(box, 390, 844) and not overlap(box, bar), (box, bar)

        assert page.evaluate("() => scrollY") == 0
        for seat in range(4):
            assert inside(page.get_by_test_id(f"seat-{seat}").bounding_box(), 390, 844), seat
        hand_clear()
        page.locator(LEGAL).first.tap()
        # the person scrolls down a page made long (as its log and panels grow) while the
        # others play: the hand slides under the score line
        page.evaluate("() => { document.querySelector('main').style.paddingBottom = '900px';"
                      " scrollBy(0, document.getElementById('hand').getBoundingClientRect()"
                      ".top + 30); }")
        assert overlap(page.locator("#hand").bounding_box(), strip.bounding_box())
        expect(page.locator(CARDS)).to_have_count(12)
        page.wait_for_selector(LEGAL)
        hand_clear()
        assert not page.errors, page.errors


def test_a_short_laptop_screen_shows_the_button_and_the_whole_table(server, browser):
    """At 1366x657 (a laptop's screen less the browser's bars) "Open the table" shows without
    scrolling, and at the table the top bar, every seat and every card of the hand do."""
    from playwright.sync_api import expect

    width, height = 1366, 657
    with browser_page(browser, {"width": width, "height": height}) as page:
        page.goto(server.url)
        expect(page.get_by_test_id("create")).to_be_enabled()
        assert inside(page.get_by_test_id("create").bounding_box(), width, height)
        open_table(page, server.url, FAST)
        page.wait_for_selector(LEGAL)
        page.mouse.move(0, 0)
        page.wait_for_timeout(300)  # no card lifted
        assert page.evaluate("() => scrollY") == 0
        shown = [page.locator(".topbar")] + [page.get_by_test_id(f"seat-{s}") for s in range(4)]
        for node in shown + page.locator(CARDS).all():
            assert inside(node.bounding_box(), width, height), node
        assert not page.errors, page.errors


def test_a_person_without_a_name_is_named_by_the_seat(server, browser):
    """Two people who gave no name: each sees itself as "You", the other as "Open seat" until
    it sits down and "Player at seat N" after, never the server's "open seat N" nor a seat
    told twice ("Player at seat 2 (seat 2)")."""
    from playwright.sync_api import expect

    made = server.post("/api/tables", {"type": "create", "deal": DEAL,
                                       "seats": ["open", "random", "open", "random"]})
    twice = re.compile(r"seat (\d)\)? \(seat \1\)")
    with browser_page(browser, LAPTOP) as first, browser_page(browser, LAPTOP) as second:
        for page, seat in ((first, 0), (second, 2)):
            page.goto(f"{server.url}?table={made['table']}&seat={seat}"
                      f"&token={made['tokens'][str(seat)]}")
            page.get_by_test_id("join-button").click()  # no name
            expect(page.get_by_test_id(f"seat-name-{seat}")).to_have_text("You")
            if seat == 0:
                expect(page.get_by_test_id("seat-name-2")).to_have_text("Open seat")
                expect(page.get_by_test_id("turn")).to_contain_text("Waiting for seat 2")
        expect(first.get_by_test_id("seat-name-2")).to_have_text("Player at seat 2")
        expect(second.get_by_test_id("seat-name-0")).to_have_text("Player at seat 0")
        expect(first.get_by_test_id("log")).to_contain_text("Player at seat 2 connected.")
        for page in (first, second):
            shown = page.get_by_test_id("game").inner_text()
            assert "open seat" not in shown.lower() and not twice.search(shown), shown
        assert not first.errors + second.errors, first.errors + second.errors


def test_an_error_page_has_its_style(server, page):
    """The plain page of a wrong URL takes its look from a stylesheet: the server's
    Content-Security-Policy refuses an inline style, which left it unstyled."""
    page.goto(f"{server.url}?replay=abc")
    problem = page.get_by_test_id("problem")
    assert problem.evaluate("m => getComputedStyle(m).maxWidth") == "600px"  # 40rem
    assert problem.evaluate("m => getComputedStyle(m).marginTop") == "30px"  # 2rem


@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_the_winner_note_and_a_big_pile_leave_every_card_readable(server, browser, screen):
    """A finished trick's "X wins the trick" covers none of its cards, and a pile of 14
    scoring cards shows each of them, none over another, within its seat's box."""
    size = SCREENS[screen]
    trick = [[1, "S5"], [2, "SK"], [3, "S9"], [0, "S2"]]  # the partner's king takes it
    pile = HEARTS + ["SQ"]
    hand = ["S3", "S4", "H2", "D3", "D4", "D5", "D6", "C2", "C3", "C4", "C5", "C6"]
    # no motion: the cards lie where they stay at once
    with browser_page(browser, size, reduced_motion="reduce") as page:
        join_fake_table(page, server.url, waiting_table(server), [welcome(
            "t", hand=hand, history=trick, ply=4, leader=2,
            captured=[[], pile, [], ["DJ", "C10"]], scores=[0, -300, 0, 200],
            team=[0, -100])], hold_ms=60_000)  # the trick stays whole
        note = page.locator("#trick-note")
        expect_note = "Mr. Greed (partner) wins the trick"
        page.wait_for_function(f"() => document.getElementById('trick-note').textContent"
                               f" === {expect_note!r}")
        note_box = note.bounding_box()
        for card in page.locator("#trick-area .card").all():
            assert not overlap(note_box, card.bounding_box()), (note_box, card.bounding_box())
        ranks = page.get_by_test_id("captured-1").locator("[data-card]")
        assert sorted(ranks.evaluate_all("rs => rs.map(r => r.dataset.card)")) == sorted(pile)
        seat_box = page.get_by_test_id("seat-1").bounding_box()
        boxes = [r.bounding_box() for r in ranks.all()]
        for i, box in enumerate(boxes):
            assert box["width"] > 4 and inside(box, size["width"], size["height"] * 3)
            assert (seat_box["x"] <= box["x"] and box["x"] + box["width"]
                    <= seat_box["x"] + seat_box["width"]), (box, seat_box)
            assert not any(overlap(box, other) for other in boxes[i + 1:]), (box, boxes)
        assert not page.errors, page.errors


def test_a_finished_trick_stays_two_seconds_or_until_a_click(server, page):
    """The fourth card of a trick and the next lead arrive together: the trick stays on the
    table about 2 s before the lead shows (it stayed 0.8 s whole); a click on the table ends
    the wait at once."""
    first = [[1, "S5"], [2, "SK"], [3, "S9"], [0, "S2"]]  # the partner's king takes it
    hand = ["S2", "S3", "H5", "D3", "D4", "D5", "D6", "C2", "C3", "C4", "C5", "C6", "C7"]
    socket = join_fake_table(page, server.url, waiting_table(server), [welcome(
        "t", hand=hand, history=first[:3], trick=first[:3], ply=3, leader=1)])
    shows = "cards => document.getElementById('trick-area').dataset.cards === cards"

    def trick_then_lead(trick: list[list], start: int, winner: int, lead: str) -> float:
        """Send the plays of `trick` from its card `start` on, its end and the winner's lead;
        once the whole trick shows, the time they were sent."""
        sent = time.monotonic()
        for i, (seat, card) in enumerate(trick[start:], start=start):
            socket.send({"type": "played", "seat": seat, "card": card, "ply": ply + i,
                         "fallback": None})
        socket.send({"type": "trick", "winner": winner, "cards": [c for _, c in trick],
                     "captured": [[]] * 4, "scores": [0] * 4, "team": [0, 0]})
        socket.send({"type": "played", "seat": winner, "card": lead, "ply": ply + 4,
                     "fallback": None})
        page.wait_for_function(shows, arg=" ".join(c for _, c in trick), polling=50)
        return sent

    ply = 1
    sent = trick_then_lead(first, 3, 2, "H3")
    page.wait_for_function(shows, arg="H3", polling=50, timeout=10_000)
    assert time.monotonic() - sent >= 1.7
    ply = 5
    trick_then_lead([[2, "H3"], [3, "H4"], [0, "H5"], [1, "H6"]], 1, 1, "D2")
    clicked = time.monotonic()
    page.locator("#felt").click()
    page.wait_for_function(shows, arg="D2", polling=50, timeout=10_000)
    assert time.monotonic() - clicked < 1.0
    assert not page.errors, page.errors


def test_back_asks_before_it_leaves_a_hand_in_play(server, page):
    """The browser's Back at a hand in play asks as the Lobby link does: kept, the hand goes
    on at the same address; left, the lobby shows."""
    from playwright.sync_api import expect

    open_table(page, server.url, FAST)
    page.wait_for_selector(LEGAL)
    table_url = page.url
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.go_back()
    page.wait_for_timeout(300)
    assert asked and "Leave this table?" in asked[0]
    expect(page.get_by_test_id("game")).to_be_visible()
    assert page.url == table_url
    page.locator(LEGAL).first.click()  # the hand goes on
    expect(page.locator(CARDS)).to_have_count(12)
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    page.go_back()
    expect(page.get_by_test_id("lobby")).to_be_visible()
    assert len(asked) == 2
