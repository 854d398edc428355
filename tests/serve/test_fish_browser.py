"""The Fish page in a real browser: a person takes a seat by its link, plays a 6-player game
against our bots to the end by tapping (an ask: a card among the legal ones, then whom; a call:
the set, then who holds each card), at laptop and phone sizes, and the sets the page shows at
the end are the records' (replayed on the rules engine); what the bots believed opens on
something better than a flat 0.20 for every card, or says why it is flat.

Starts `python play.py` and Chromium as tests/serve/test_browser.py does (the fixtures of
tests/serve/conftest.py). The screenshots of docs/figures are made by
tests/serve/test_screenshots.py.
"""

from __future__ import annotations

from browser_table import FISH_TABLE, LAPTOP, PHONE, browser_page, take_fish_seat

from scrofazero.serve.fish.records import replayed_state

READY = """() => !document.getElementById('over').hidden
  || document.querySelector('[data-testid^=fish-ask-card-]')
  || document.getElementById('status').textContent.includes('must call')"""


def make_a_call(page) -> None:
    """The call as a guided step: open it (it opens by itself when a call is due), choose the
    set offered first, place each card not in the hand with the first teammate offered."""
    from playwright.sync_api import expect

    if page.get_by_test_id("fish-call").is_visible():
        page.get_by_test_id("fish-call").click()
    flow = page.get_by_test_id("fish-call-panel")
    expect(flow).to_be_visible()
    flow.locator("[data-testid^=fish-call-set-]").first.click()
    send = page.get_by_test_id("fish-call-send")
    expect(send).to_be_visible()
    for row in flow.locator(".holder-row").all():
        buttons = row.locator("button")
        if buttons.count() and not row.locator("button.picked").count():
            expect(send).to_be_disabled()  # not until every card is placed
            buttons.first.click()
    expect(send).to_be_enabled()
    send.click()


def ask_by_tapping(page) -> None:
    """An ask: tap a legal card (dashed, beside its set in the hand), then whom to ask."""
    from playwright.sync_api import expect

    card = page.locator("[data-testid^=fish-ask-card-]").first
    code = card.get_attribute("data-card")
    card.click()
    expect(page.get_by_test_id("fish-step")).to_contain_text("Ask whom for")
    whom = page.get_by_test_id("fish-whom")
    expect(whom).to_be_visible()
    expect(whom.locator(f"[data-card='{code}']")).to_have_count(1)
    assert page.locator("#seats li.askable").count() >= 1  # the ones to ask, lit at the table
    whom.locator("button.primary").first.click()


def test_a_person_plays_fish_to_the_end_in_the_browser(server, browser):
    made = server.post("api/fish/tables", FISH_TABLE)
    with browser_page(browser, LAPTOP, timeout_ms=30_000) as page:
        take_fish_seat(page, server.url, made)
        page.get_by_test_id("fish-game").wait_for()
        for seat in range(6):  # every player at the table, with its card count
            assert int(page.get_by_test_id(f"fish-count-{seat}").inner_text()) == 9
        turns = calls = 0
        widths = []  # the page's width on a phone, mid-game and at the end
        while True:
            page.wait_for_function(READY, timeout=60_000)
            if page.get_by_test_id("fish-over").is_visible():
                break
            status = page.get_by_test_id("fish-status").inner_text()
            logged = page.locator("#history li").count()
            if "must call" in status or (turns == 1 and calls == 0):
                make_a_call(page)
                calls += 1
            else:
                ask_by_tapping(page)
            turns += 1
            page.wait_for_function(f"() => document.querySelectorAll('#history li').length > "
                                   f"{logged}")
            if turns == 3:
                page.set_viewport_size(PHONE)
                widths.append(page.evaluate("document.documentElement.scrollWidth"))
        shown = [int(page.get_by_test_id(f"fish-final-{t}").inner_text()) for t in (0, 1)]
        sets_column = [page.get_by_test_id(f"fish-set-{s}").inner_text() for s in range(9)]
        rows = page.get_by_test_id("fish-belief-rows").locator("tr")
        belief_rows = rows.count()
        ps = rows.evaluate_all("rs => rs.map(r => r.children[2].textContent)")
        note = page.get_by_test_id("fish-belief-note")
        flat_note = note.is_visible() and "nothing yet told" in note.inner_text()
        widths.append(page.evaluate("document.documentElement.scrollWidth"))
    game = server.get(f"api/fish/games/{made['game_id']}")
    assert shown == game["score"] == list(replayed_state(game).score)
    assert sum("team 0" in s for s in sets_column) == shown[0]
    assert sum("team 1" in s for s in sets_column) == shown[1]
    mine = [m for m in game["moves"] if m["seat"] == 0]
    assert any(m["kind"] == "call" for m in mine) and any(m["kind"] == "ask" for m in mine)
    assert game["seats"][0]["name"] == "Ann" and turns >= 3
    assert belief_rows > 0  # the logic seat's belief at one of its moves
    # the belief shown first is not 0.20 for every card, or the page says why it is flat
    assert len(set(ps)) > 1 or flat_note, (ps, flat_note)
    assert flat_note == (len(set(ps)) == 1), (ps, flat_note)
    assert max(widths) <= PHONE["width"], f"the page scrolls sideways on a phone: {widths}"
    assert not page.errors, page.errors
