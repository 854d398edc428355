"""The Fish page in a real browser: a person takes a seat by its link, plays a 6-player game
against our bots to the end by tapping (an ask: a card among the legal ones, then whom; a call:
the set, then who holds each card), at laptop and phone sizes, and the sets the page shows at
the end are the records' (replayed on the rules engine); the table's middle keeps the last few
moves as sentences ("Ann asked random bot A for the 5 of hearts: no") and the history names
players, never seat numbers; what the bots believed opens on the bot's move at which it was sure
of the most cards; "record" opens the game's readable page, its JSON linked beside it. A
history past 100 moves shows every move's number whole.

Starts `python play.py` and Chromium as tests/serve/test_browser.py does (the fixtures of
tests/serve/conftest.py). The screenshots of docs/figures are made by
tests/serve/test_screenshots.py.
"""

from __future__ import annotations

import json
import re

from browser_table import FISH_TABLE, LAPTOP, PHONE, browser_page, take_fish_seat

from scrofazero.serve.fish.record_page import card_words, player_names
from scrofazero.serve.fish.records import replayed_state

RECENT = 4  # the moves the table's middle keeps (fish.js)
NO_SEAT_NUMBER = re.compile(r"\bseat \d|\(\d\)|\u2192\d")
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
            if turns == 2:
                recent = page.get_by_test_id("fish-recent").locator("li").all_inner_texts()
                latest = page.locator("#history li").evaluate_all(
                    "lis => lis.map(li => li.lastChild.textContent)")
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
        belief_seat = int(page.get_by_test_id("fish-belief-seat").input_value())
        belief_move = int(re.search(r"at move (\d+) ", page.locator("#belief-move-text")
                                    .inner_text())[1])
        history = page.locator("#history li").evaluate_all(
            "lis => lis.map(li => li.lastChild.textContent)")
        widths.append(page.evaluate("document.documentElement.scrollWidth"))
        page.set_viewport_size(LAPTOP)
        json_link = page.get_by_test_id("fish-json-link").get_attribute("href")
        with page.context.expect_page() as opened:
            page.get_by_test_id("fish-record-link").click()
        record = opened.value
        record.get_by_test_id("fish-record").wait_for()
        record_moves = record.get_by_test_id("fish-record-move").count()
        record_look = record.locator(".topbar").evaluate(
            "bar => getComputedStyle(bar).backgroundColor")  # fish.css came with it
    game = server.get(f"api/fish/games/{made['game_id']}")
    assert shown == game["score"] == list(replayed_state(game).score)
    assert sum("team 0" in s for s in sets_column) == shown[0]
    assert sum("team 1" in s for s in sets_column) == shown[1]
    mine = [m for m in game["moves"] if m["seat"] == 0]
    assert any(m["kind"] == "call" for m in mine) and any(m["kind"] == "ask" for m in mine)
    assert game["seats"][0]["name"] == "Ann" and turns >= 3
    assert belief_rows > 0  # the logic seat's belief at one of its moves
    # the belief shown first is the bot's move at which it was sure (p >= 0.5) of the most cards
    sure = {m["move"]: sum(c["p"] >= 0.5 for c in m["belief"]["cards"]) for m in game["moves"]
            if m["seat"] == belief_seat and m["belief"]}
    assert sure[belief_move] == max(sure.values()) > 0, (belief_move, sure)
    assert flat_note == (len(set(ps)) == 1), (ps, flat_note)
    # the middle keeps the last few moves, the latest last, as the history tells them
    # (a call there without the holders it named, which the history lists)
    told = [re.sub(r" \(.*\)(?=: )", "", line) for line in latest[:len(recent)][::-1]]
    assert 2 <= len(recent) <= RECENT and recent == told, (recent, latest)
    names = player_names(game["seats"])
    cards = {card_words(m["card"]) for m in game["moves"] if m["kind"] == "ask"}
    for sentence in recent:
        asked = re.match(r"^(.+) asked (.+) for (the .+): (yes|no)$", sentence)
        called = re.match(r"^(.+) called the .+: (right|wrong), team [01] gets it$", sentence)
        assert asked or called, sentence
        assert asked is None or ({asked[1], asked[2]} <= set(names) and asked[3] in cards)
        assert called is None or called[1] in names, sentence
    assert any(line.startswith("Ann asked ") for line in history)
    assert not [line for line in history if NO_SEAT_NUMBER.search(line)], history
    assert (record_moves, record_look) == (len(game["moves"]), "rgb(31, 107, 69)")
    assert json_link == f"/api/fish/games/{made['game_id']}"
    assert max(widths) <= PHONE["width"], f"the page scrolls sideways on a phone: {widths}"
    assert not page.errors, page.errors


def table_past(server, moves: int) -> dict:
    """A table of a person at seat 0 and five random bots, the person played over a socket (its
    first legal ask each turn) until it is to move after `moves` moves: the table's
    fish_created answer. A game that ends sooner, or asks the person for a call, is left and
    another table made."""
    from websockets.sync.client import connect

    for _ in range(6):
        made = server.post("api/fish/tables", {"type": "fish_create",
                                               "seats": ["open"] + ["random"] * 5})
        with connect(server.url.replace("http", "ws", 1) + "ws/fish") as ws:
            ws.send(json.dumps({"type": "fish_join", "table": made["table"], "seat": 0,
                                "token": made["tokens"]["0"], "name": "Ann"}))
            while (msg := json.loads(ws.recv(timeout=30)))["type"] != "fish_over":
                if msg["type"] != "fish_turn":
                    continue
                if msg["move"] > moves:
                    return made
                if msg["must_call"]:
                    break
                target, card = msg["asks"][0]
                ws.send(json.dumps({"type": "ask", "target": target, "card": card,
                                    "move": msg["move"]}))
    raise AssertionError(f"no game of random bots reached {moves} moves in 6 tries")


def test_history_numbers_past_100_are_shown_whole(server, browser):
    made = table_past(server, 120)
    with browser_page(browser, LAPTOP) as page:
        take_fish_seat(page, server.url, made)
        page.wait_for_function("() => document.querySelectorAll('#history li').length > 120")
        measured = {}
        for name, size in (("laptop", LAPTOP), ("phone", PHONE)):
            page.set_viewport_size(size)
            measured[name] = page.locator("#history li").evaluate_all("""lis => lis.map(li => {
                const num = li.querySelector('.num');
                if (!num) return null;
                const box = li.parentElement.getBoundingClientRect();
                return {text: num.textContent, whole: num.scrollWidth <= num.clientWidth
                  && num.getBoundingClientRect().left >= box.left};
            })""")
    for name, numbers in measured.items():
        assert None not in numbers, f"{name}: a history line without its number's element"
        assert [int(n["text"]) for n in numbers] == list(range(len(numbers), 0, -1))
        assert len(numbers) > 120 and all(n["whole"] for n in numbers), (name, numbers[:3])
    assert not page.errors, page.errors
