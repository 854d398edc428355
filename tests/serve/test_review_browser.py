"""The review of a person's moves and its practice in a real browser, at a phone's size (with
touch) and a laptop's: each move shown where it happened (its trick as it lay, the cards that
could be played with their values and verdicts), the way into the replay at that moment and
back, the practice of the worst moves; a match keeps every hand's review reachable while the
next hand is played.

The server runs in this process (serve_thread.py) so that its reviews can be the quick ones of
tests/helpers/quick_review.py: the server's own review of the moves with made-up values, at
once instead of half a minute a hand. Chromium is the fixture of tests/serve/conftest.py.
"""

from __future__ import annotations

import re

import pytest
from browser_table import CARDS, LAPTOP, LEGAL, PHONE, browser_page, open_table, watched
from quick_review import quick_reviews
from serve_thread import answer, running_server

FAST = {1: "greed", 2: "random", 3: "greed"}  # bots that answer at once
SCREENS = {"phone": PHONE, "laptop": LAPTOP}
POSITIONS = ["led", "played second", "played third", "played last"]
PLAYS = ["lead", "play second", "play third", "play last"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with quick_reviews(), running_server(tmp_path_factory.mktemp("review")) as running:
        yield running


def screen_page(browser, screen: str):
    """A page of `screen`'s size; the phone's with touch."""
    phone = screen == "phone"
    return browser_page(browser, SCREENS[screen], has_touch=phone, is_mobile=phone)


def play_out(page, last: bool = False) -> int:
    """Play the hand out from the page, the first legal card each time (the last with
    `last`), without the pause after each trick; the finished game's id."""
    page.evaluate("() => { window.scrofazero.trickHoldMs = 0; }")
    over = page.get_by_test_id("game-over")
    while True:
        page.wait_for_function(
            "() => !document.querySelector('[data-testid=game-over]').hidden"
            " || document.querySelector('#hand button[data-card]:not(:disabled)')")
        if over.is_visible():
            return int(over.get_attribute("data-game-id"))
        legal = page.locator(LEGAL)
        card = legal.last if last else legal.first
        code = card.get_attribute("data-card")
        card.click()
        page.locator(f'#hand [data-card="{code}"]').wait_for(state="detached")


def done_review(server, game_id: int, seat: int = 0) -> dict:
    """The server's review of `seat` in the game, once done."""
    got = answer(server, f"/api/games/{game_id}/review?seat={seat}")
    assert got["status"] == "done", got
    return got["review"]


def words(v: dict) -> str:
    """A verdict as the page words it."""
    if v["verdict"] == "mistake":
        return f"mistake: about {round(v['loss'])} points"
    return "about as good" if v["verdict"] == "as_good" else v["verdict"]


def number_pair(text: str) -> tuple[float, float]:
    """'12.3 ± 0.4' as (12.3, 0.4)."""
    value, error = text.split("±")
    return float(value), float(error)


def check_move(page, move: dict) -> None:
    """The detail of a reviewed move is the server's: the trick as it lay, the hand, each
    legal card's value ± error and verdict, the AI's card and the card played marked."""
    from playwright.sync_api import expect

    detail = page.get_by_test_id("review-detail")
    expect(detail).to_have_attribute("data-ply", str(move["ply"]))
    expect(detail.locator("h4")).to_contain_text(
        f"Trick {move['trick']}, you {POSITIONS[move['position'] - 1]}")
    table = " ".join(t["card"] for t in move["table"])
    expect(page.get_by_test_id("review-table")).to_have_attribute("data-cards", table)
    shown = page.get_by_test_id("review-hand").locator("[data-card]")
    assert shown.evaluate_all("cs => cs.map(c => c.dataset.card)") == move["hand"]
    rows = page.get_by_test_id("review-values").locator("tbody tr")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.card)") == [
        v["card"] for v in move["values"]]
    for v, row in zip(move["values"], rows.all()):
        cells = row.locator("td").all_inner_texts()
        if v["value"] is None:
            assert cells[1] == "—"
        else:
            value, error = number_pair(cells[1])
            assert abs(value - v["value"]) < 0.051 and abs(error - v["se"]) < 0.051, (cells, v)
        assert cells[2] == words(v), (cells, v)
        tags = {t.strip() for t in cells[3].split(",") if t.strip()}
        assert tags == {t for t, card in (("you", move["card"]), ("AI", move["ai_card"]))
                        if card == v["card"]}, (cells, v)


@pytest.mark.parametrize("screen", sorted(SCREENS))
def test_the_review_shows_each_move_where_it_happened_and_practises_the_worst(server, browser,
                                                                            screen):
    """After a hand the review lists every move by its trick and place in it with its verdict
    in words, explains the hand's total in a sentence and what a value is; a move shows its
    trick as it lay and every card that could be played; its link opens the replay just before
    that move, whose own link leads back to the review; Practise asks each mistake again, worst
    first, from the person's view, judges the card chosen by the review's values and sums up."""
    from playwright.sync_api import expect

    with screen_page(browser, screen) as page:
        open_table(page, server.url, FAST)
        game_id = play_out(page)
        page.get_by_test_id("review-button").click()
        expect(page.get_by_test_id("review-explanation")).to_be_visible()
        review = done_review(server, game_id)
        moves = review["moves"]
        mistakes = sorted((m for m in moves if m["verdict"] == "mistake"),
                          key=lambda m: (-m["given_up"], m["ply"]))
        assert len(mistakes) >= 2 and review["result"] is not None  # the first card of many

        expect(page.get_by_test_id("review-explanation")).to_have_text(review["explanation"])
        shown = page.get_by_test_id("review-panel").inner_text()
        assert not re.search(r"\b(null|undefined|NaN)\b", shown), shown
        total = page.get_by_test_id("review-total")
        expect(total).to_contain_text(f"Your team {review['result']['team']}, the others "
                                      f"{review['result']['other']}")
        expect(total).to_contain_text(f"{review['mistakes']} mistakes in 13 moves")
        expect(page.get_by_test_id("review-values-meaning")).to_contain_text(
            "your team's points minus the other team's to be at the end of the hand")
        for m in moves:
            row = page.get_by_test_id(f"review-move-{m['ply']}")
            expect(row).to_contain_text(f"Trick {m['trick']}, you {POSITIONS[m['position'] - 1]}")
            expect(row.locator(".verdict-word")).to_have_text(words(m))
        check_move(page, mistakes[0])  # the costliest is shown first
        # a move with cards on the table, picked from the list
        move = next(m for m in moves if m["table"] and m["ply"] != mistakes[0]["ply"])
        page.get_by_test_id(f"review-move-{move['ply']}").locator("button").click()
        check_move(page, move)
        assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")

        # the replay opens just before that move: the same trick on the table, the same hand
        page.get_by_test_id("review-replay-link").click()
        expect(page.get_by_test_id("replay-ply")).to_have_text(f"move {move['ply'] - 1} / 52")
        expect(page.get_by_test_id("replay-at-move")).to_contain_text(f"move {move['ply']}")
        expect(page.get_by_test_id("replay-trick")).to_have_attribute(
            "data-cards", " ".join(t["card"] for t in move["table"]))
        held = page.get_by_test_id("replay-hand-0").locator("[data-card]")
        assert held.evaluate_all("cs => cs.map(c => c.dataset.card)") == move["hand"]

        # and the replay's link leads back to the review, on a page of its own
        page.get_by_test_id("replay-review-link").click()
        expect(page.get_by_test_id("review-page")).to_be_visible()
        expect(page.get_by_test_id("review-explanation")).to_have_text(review["explanation"])

        page.get_by_test_id("practise-button").click()
        practice = page.get_by_test_id("practice")
        good = 0
        for i, m in enumerate(mistakes):
            expect(practice).to_have_attribute("data-ply", str(m["ply"]))
            expect(page.get_by_test_id("practice-where")).to_have_text(
                f"Position {i + 1} of {len(mistakes)}: trick {m['trick']}, "
                f"you {PLAYS[m['position'] - 1]}")
            expect(page.get_by_test_id("practice-table")).to_have_attribute(
                "data-cards", " ".join(t["card"] for t in m["table"]))
            hand = page.get_by_test_id("practice-hand").locator("[data-card]")
            assert hand.evaluate_all("cs => cs.map(c => c.dataset.card)") == m["hand"]
            enabled = page.get_by_test_id("practice-hand").locator("[data-card]:not(:disabled)")
            assert enabled.evaluate_all("cs => cs.map(c => c.dataset.card)") == [
                v["card"] for v in m["values"]]
            # the AI's card the first time, the same mistake again the second, then the AI's
            card = m["card"] if i == 1 else m["ai_card"]
            pick = page.locator(f'[data-testid=practice-hand] [data-card="{card}"]')
            pick.tap() if screen == "phone" else pick.click()
            verdict = page.get_by_test_id("practice-verdict")
            if card == m["card"]:
                expect(verdict).to_have_attribute("data-good", "false")
                expect(verdict).to_contain_text("Not as good as the AI.")
                expect(verdict.locator(f'[data-card="{m["ai_card"]}"]').first).to_be_visible()
                said = re.search(r"gives up about (\S+) ± (\S+) points", verdict.inner_text())
                loss, error = float(said[1]), float(said[2])
                assert abs(loss - m["loss"]) < 0.051 and abs(error - m["loss_se"]) < 0.051
            else:
                good += 1
                expect(verdict).to_have_attribute("data-good", "true")
                expect(verdict).to_contain_text("As good as the AI.")
            assert inside_width(page, verdict)
            page.get_by_test_id("practice-next").click()
        expect(page.get_by_test_id("practice-summary")).to_have_text(
            f"{good} of {len(mistakes)} now as good as the AI.")
        assert not page.errors, page.errors


def inside_width(page, node) -> bool:
    """Whether `node` lies within the screen's width, and the page is no wider than it."""
    box = node.bounding_box()
    width = page.viewport_size["width"]
    return (box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5
            and page.evaluate("() => document.documentElement.scrollWidth <= innerWidth"))


def test_nothing_to_practise_after_a_hand_without_a_mistake(server, browser):
    """Every card the AI's own (the last legal one, to the quick reviewer): the review says so
    and Practise has nothing to ask."""
    from playwright.sync_api import expect

    with screen_page(browser, "phone") as page:
        open_table(page, server.url, FAST)
        game_id = play_out(page, last=True)
        page.get_by_test_id("review-button").tap()
        expect(page.get_by_test_id("review-explanation")).to_be_visible()
        assert done_review(server, game_id)["mistakes"] == 0
        expect(page.get_by_test_id("review-total")).to_contain_text("0 mistakes in 13 moves")
        page.get_by_test_id("practise-button").tap()
        expect(page.get_by_test_id("practice-none")).to_contain_text("Nothing to practise")
        page.get_by_test_id("practice-back").tap()
        expect(page.get_by_test_id("review-moves")).to_be_visible()
        assert not page.errors, page.errors


def test_every_hand_of_a_match_keeps_its_review_reachable(server, browser):
    """In a match the review of a finished hand stays a click away from the match panel while
    the next hand is played (it opens in a tab of its own), and from that hand's replay."""
    from playwright.sync_api import expect

    with browser_page(browser, LAPTOP) as page:
        open_table(page, server.url, FAST, hands=2)
        first = play_out(page)
        page.get_by_test_id("review-button").click()
        expect(page.get_by_test_id("review-explanation")).to_be_visible()
        page.get_by_test_id("next-hand").click()
        expect(page.locator(CARDS)).to_have_count(13)  # the second hand is under way
        expect(page.get_by_test_id("review-panel")).to_be_hidden()
        link = page.get_by_test_id("match-review-1")
        expect(link).to_have_attribute("href", f"/?review={first}&seat=0")
        with page.context.expect_page() as opened:
            link.click()
        tab = watched(opened.value)
        review = done_review(server, first)
        expect(tab.get_by_test_id("review-explanation")).to_have_text(review["explanation"])
        expect(tab.get_by_test_id("review-title")).to_contain_text(f"game {first} (hand 1")
        expect(page.locator(CARDS)).to_have_count(13)  # the table played on meanwhile
        tab.goto(f"{server.url}?replay={first}")
        tab.get_by_test_id("replay-review-link").click()
        expect(tab.get_by_test_id("review-explanation")).to_have_text(review["explanation"])
        assert re.search(rf"\?review={first}&seat=0$", tab.url)
        assert not page.errors + tab.errors, page.errors + tab.errors
