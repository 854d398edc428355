"""The Fish page in a real browser: a person takes a seat by its link, plays a 6-player game
against our bots to the end by clicking (asks, and a call), at laptop and phone sizes, and the
sets the page shows at the end are the records' (replayed on the rules engine).

Starts `python play.py` and Chromium the way tests/serve/test_browser.py does (its fixtures).
Set SCROFAZERO_SCREENSHOT=1 to refresh docs/figures/fish_laptop.png and fish_phone.png.
"""

from __future__ import annotations

import os

from test_browser import REPO, browser, server  # noqa: F401  (its fixtures)

from scrofazero.serve.fish_records import replayed_state

LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
FIGURES = REPO / "docs" / "figures"
READY = """() => !document.getElementById('over').hidden
  || !document.getElementById('ask').disabled
  || document.getElementById('status').textContent.includes('must call')"""


def test_a_person_plays_fish_to_the_end_in_the_browser(server, browser):  # noqa: F811
    made = server.post("api/fish/tables", {
        "type": "fish_create", "seats": ["open", "random", "logic", "random", "random", "random"],
        "seed": 3})
    context = browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    page.set_default_timeout(30_000)
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    shots = os.environ.get("SCROFAZERO_SCREENSHOT") == "1"
    try:
        page.goto(f"{server.url}fish?table={made['table']}&seat=0&token={made['tokens']['0']}")
        page.get_by_test_id("fish-join-name").fill("Ann")
        page.get_by_test_id("fish-join").click()
        page.get_by_test_id("fish-game").wait_for()
        turns = calls = 0
        widths = []  # the page's width on a phone, mid-game and at the end
        while True:
            page.wait_for_function(READY, timeout=60_000)
            if page.get_by_test_id("fish-over").is_visible():
                break
            status = page.get_by_test_id("fish-status").inner_text()
            logged = page.locator("#history li").count()
            if "must call" in status or (turns == 1 and calls == 0):
                page.get_by_test_id("fish-call").click()
                calls += 1
            else:
                assert page.get_by_test_id("fish-ask-card").locator("option").count() > 0
                page.get_by_test_id("fish-ask").click()
            turns += 1
            page.wait_for_function(f"() => document.querySelectorAll('#history li').length > "
                                   f"{logged}")
            if turns == 3:
                if shots:
                    page.screenshot(path=str(FIGURES / "fish_laptop.png"))
                page.set_viewport_size(PHONE)
                widths.append(page.evaluate("document.documentElement.scrollWidth"))
                if shots:
                    page.screenshot(path=str(FIGURES / "fish_phone.png"), full_page=True)
        shown = [int(page.get_by_test_id(f"fish-final-{t}").inner_text()) for t in (0, 1)]
        sets_column = [page.get_by_test_id(f"fish-set-{s}").inner_text() for s in range(9)]
        belief_rows = page.get_by_test_id("fish-belief-rows").locator("tr").count()
        widths.append(page.evaluate("document.documentElement.scrollWidth"))
    finally:
        context.close()
    game = server.get(f"api/fish/games/{made['game_id']}")
    assert shown == game["score"] == list(replayed_state(game).score)
    assert sum("team 0" in s for s in sets_column) == shown[0]
    assert sum("team 1" in s for s in sets_column) == shown[1]
    mine = [m for m in game["moves"] if m["seat"] == 0]
    assert any(m["kind"] == "call" for m in mine) and any(m["kind"] == "ask" for m in mine)
    assert game["seats"][0]["name"] == "Ann" and turns >= 3
    assert belief_rows > 0  # the logic seat's belief at one of its moves
    assert max(widths) <= PHONE["width"], f"the page scrolls sideways on a phone: {widths}"
    assert not errors, errors
