"""The screenshots of docs/figures, remade from a real server and Chromium: the Gongzhu table
mid-hand, the review of your moves after a hand, a reviewed move at its trick and the practice
of a mistake, and Fish at a table, each at 1280x800 (a laptop) and 390x844 (a phone), and the
Fish table's last few moves at 1366x768. Marked slow, so never run by default; remake them with

    python -m pytest -n 0 -m slow tests/serve/test_screenshots.py

Uses the server and browser fixtures of tests/serve/conftest.py.
"""

from __future__ import annotations

import pytest
from browser_table import (
    FISH_TABLE,
    LAPTOP,
    LEGAL,
    PHONE,
    REPO,
    browser_page,
    open_table,
    play_cards,
    play_out_the_hand,
    take_fish_seat,
)

FIGURES = REPO / "docs" / "figures"
WIDE = {"width": 1366, "height": 768}  # a common laptop screen
BOTS = {1: "greed", 2: "scrofazero", 3: "random"}
DEAL = 7


def small(path) -> None:
    """The screenshot in 256 colours: the felt's gradient would make it several times larger."""
    from PIL import Image

    with Image.open(path) as image:
        fewer = image.convert("RGB").quantize(colors=256, dither=Image.Dither.NONE)
    fewer.save(path, optimize=True)


def shoot(page, name: str, size: dict) -> None:
    page.set_viewport_size(size)
    page.mouse.move(0, 0)
    page.wait_for_timeout(500)  # the layout settles, the card moves end
    path = FIGURES / name
    page.screenshot(path=str(path))
    small(path)
    assert 10_000 < path.stat().st_size < 300_000, (name, path.stat().st_size)


@pytest.mark.slow
def test_the_table_and_the_review(server, browser):
    from playwright.sync_api import expect

    with browser_page(browser, LAPTOP, timeout_ms=30_000) as page:
        open_table(page, server.url, BOTS, DEAL)
        play_cards(page, 5)  # a hand in progress, with some scoring cards taken
        page.wait_for_selector(LEGAL)
        page.wait_for_timeout(1500)  # the last trick gathered, the table clear for your card
        page.wait_for_selector(LEGAL)
        shoot(page, "table_laptop.png", LAPTOP)
        shoot(page, "table_phone.png", PHONE)

        page.set_viewport_size(LAPTOP)
        page.evaluate("() => { window.scrofazero.trickHoldMs = 0; }")
        play_out_the_hand(page)
        page.get_by_test_id("review-button").click()
        expect(page.get_by_test_id("review-total")).to_be_visible(timeout=180_000)
        for name, size in (("review_laptop.png", LAPTOP), ("review_phone.png", PHONE)):
            page.set_viewport_size(size)
            # the panel's top under the phone's score line, the hand's verdict above it
            page.get_by_test_id("review-panel").evaluate(
                "p => { p.scrollIntoView(); scrollBy(0, -Math.min(140, innerHeight / 6)); }")
            shoot(page, name, size)

        # a reviewed move at its trick (a mistake with cards on the table, if there is one)
        game_id = int(page.get_by_test_id("game-over").get_attribute("data-game-id"))
        moves = server.get(f"/api/games/{game_id}/review?seat=0")["review"]["moves"]
        move = max((m for m in moves if m["table"]), key=lambda m: (m["given_up"], -m["ply"]))
        page.get_by_test_id(f"review-move-{move['ply']}").locator("button").click()
        top = "n => { n.scrollIntoView(); scrollBy(0, -Math.min(60, innerHeight / 12)); }"
        for name, size in (("review_trick_laptop.png", LAPTOP), ("review_trick_phone.png", PHONE)):
            page.set_viewport_size(size)
            page.get_by_test_id("review-detail").evaluate(top)
            shoot(page, name, size)

        # the practice of the worst mistake, the AI's card chosen
        page.get_by_test_id("practise-button").click()
        practice = page.get_by_test_id("practice")
        if practice.get_attribute("data-ply"):
            worst = next(m for m in moves if m["ply"] == int(practice.get_attribute("data-ply")))
            page.locator(f'[data-testid=practice-hand] [data-card="{worst["ai_card"]}"]').click()
        for name, size in (("practise_laptop.png", LAPTOP), ("practise_phone.png", PHONE)):
            page.set_viewport_size(size)
            practice.evaluate(top)
            shoot(page, name, size)


@pytest.mark.slow
def test_fish_at_a_table(server, browser):
    from playwright.sync_api import expect

    made = server.post("api/fish/tables", FISH_TABLE)
    with browser_page(browser, LAPTOP, timeout_ms=30_000) as page:
        take_fish_seat(page, server.url, made)
        for _ in range(2):  # two asks: the table's middle tells the latest move
            page.locator("[data-testid^=fish-ask-card-]").first.click()
            logged = page.locator("#history li").count()
            page.get_by_test_id("fish-whom").locator("button.primary").first.click()
            page.wait_for_function(f"() => document.querySelectorAll('#history li').length > "
                                   f"{logged}")
            page.wait_for_selector("[data-testid^=fish-ask-card-]", timeout=60_000)
        shoot(page, "fish_table_pace.png", WIDE)  # the last few moves in the table's middle
        page.set_viewport_size(LAPTOP)
        page.locator("[data-testid^=fish-ask-card-]").first.click()  # the ask's second step
        expect(page.get_by_test_id("fish-whom")).to_be_visible()
        shoot(page, "fish_laptop.png", LAPTOP)
        shoot(page, "fish_phone.png", PHONE)
