"""The screenshots of docs/figures, remade from a real server and Chromium: the Gongzhu table
mid-hand, the review of your moves after a hand, and Fish at a table, each at 1280x800 (a
laptop) and 390x844 (a phone). Marked slow, so never run by default; remake them with

    python -m pytest -n 0 -m slow tests/serve/test_screenshots.py

Uses the server and browser fixtures of tests/serve/test_browser.py.
"""

from __future__ import annotations

import pytest
from test_browser import FIGURES, browser, play_out_the_hand, server  # noqa: F401

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
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
def test_the_table_and_the_review(server, browser):  # noqa: F811
    from playwright.sync_api import expect

    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(server.url)
        expect(page.get_by_test_id("create")).to_be_enabled()
        for seat, kind in BOTS.items():
            page.get_by_test_id(f"seat-kind-{seat}").select_option(kind)
        page.get_by_test_id("deal-number").fill(str(DEAL))
        page.get_by_test_id("create").click()
        hand = page.locator("#hand button[data-card]")
        expect(hand).to_have_count(13)
        for played in range(5):  # a hand in progress, with some scoring cards taken
            page.locator("#hand button[data-card]:not(:disabled)").first.click()
            expect(hand).to_have_count(12 - played)
        page.wait_for_selector("#hand button[data-card]:not(:disabled)")
        page.wait_for_timeout(1500)  # the last trick gathered, the table clear for your card
        page.wait_for_selector("#hand button[data-card]:not(:disabled)")
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
    finally:
        context.close()


@pytest.mark.slow
def test_fish_at_a_table(server, browser):  # noqa: F811
    from playwright.sync_api import expect

    made = server.post("api/fish/tables", {
        "type": "fish_create", "seats": ["open", "random", "logic", "random", "random", "random"],
        "seed": 3})
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        page.goto(f"{server.url}fish?table={made['table']}&seat=0&token={made['tokens']['0']}")
        page.get_by_test_id("fish-join-name").fill("Ann")
        page.get_by_test_id("fish-join").click()
        for _ in range(2):  # two asks: the table's middle tells the latest move
            page.locator("[data-testid^=fish-ask-card-]").first.click()
            logged = page.locator("#history li").count()
            page.get_by_test_id("fish-whom").locator("button.primary").first.click()
            page.wait_for_function(f"() => document.querySelectorAll('#history li').length > "
                                   f"{logged}")
            page.wait_for_selector("[data-testid^=fish-ask-card-]", timeout=60_000)
        page.locator("[data-testid^=fish-ask-card-]").first.click()  # the ask's second step
        expect(page.get_by_test_id("fish-whom")).to_be_visible()
        shoot(page, "fish_laptop.png", LAPTOP)
        shoot(page, "fish_phone.png", PHONE)
    finally:
        context.close()
