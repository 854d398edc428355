"""The small things a person meets at the edges of the server, checked without a browser
(cheaper here than in the browser suite): a wrong URL gets a plain page that says what is wrong
and where to go (the API keeps its JSON errors); an over-long name is not echoed in full; the
Fish `learned` seats load their network wherever the server was started, are offered only when
it loads, and the lobby never shows the server's file path.
"""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest
from serve_thread import Client, answer, http, running_server


def get_page(server, path: str) -> tuple[int, str, str]:
    """(status, Content-Type, body text) of a GET, errors included."""
    try:
        with urllib.request.urlopen(server.url + path, timeout=30) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read().decode()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("edges")) as running:
        yield running


@pytest.mark.parametrize("path, status, words", [
    ("/?replay=abc", 400, "'abc' is not a game number"),
    ("/?replay=99999", 404, "no game 99999"),
    ("/?replay=-3", 400, "'-3' is not a game number"),
    ("/?match=abc", 400, "'abc' is not a match number"),
    ("/?match=4242", 404, "no match 4242"),
    ("/?review=abc", 400, "'abc' is not a game number: a review link reads /?review=N"),
    ("/?review=99999&seat=1", 404, "no game 99999"),
    ("/?review=1&seat=7", 400, "seats are 0, 1, 2 and 3, not '7'"),
    ("/?table=nosuch&seat=9&token=abc", 404, "There is no table 'nosuch'"),
    ("/nowhere/at/all", 404, "There is no page at /nowhere/at/all"),
])
def test_a_wrong_url_gets_a_plain_page_that_says_what_and_where_to_go(server, path, status,
                                                                      words):
    got, kind, body = get_page(server, path)
    assert (got, kind.split(";")[0]) == (status, "text/html")
    assert words in body, body
    assert 'href="/"' in body and 'href="/fish"' in body  # where to go
    assert "data-testid=\"create\"" not in body  # not the table page with its controls


def test_a_wrong_seat_of_a_real_table_is_named(server):
    made = answer(server, "/api/tables", {"type": "create", "seats": ["open"] * 4})
    got, _, body = get_page(server, f"/?table={made['table']}&seat=9")
    assert got == 400 and "seats are 0, 1, 2 and 3, not '9'" in body
    got, _, body = get_page(server, f"/?table={made['table']}&seat=2")
    assert got == 200 and 'data-testid="create"' in body  # the table page itself
    assert get_page(server, "/?replay=")[0] == 400


def test_the_api_keeps_its_json_errors(server):
    assert http(server, "/api/nothing") == (404, {"v": 1, "type": "error", "code": "not_found",
                                                  "message": "Not Found"})


def test_an_over_long_name_is_not_echoed_in_full(server):
    made = answer(server, "/api/tables", {"type": "create", "seats": ["open"] * 4})
    name = "x" * 3000

    async def case():
        client = await Client.connect(server.ws)
        reply = await client.ask({"type": "join", "table": made["table"], "seat": 0,
                                  "token": made["tokens"]["0"], "name": name}, "error")
        await client.close()
        return reply

    reply = asyncio.run(case())
    assert reply["code"] == "bad_message" and reply["message"].startswith("'name' must be")
    assert len(reply["message"]) < 200 and "3000 characters" in reply["message"]
    status, body = http(server, f"/api/tables/{made['table']}/claim",
                        json.dumps({"seat": 1, "name": name + "\n"}).encode())
    assert status == 400 and len(body["message"]) < 200, body


def test_the_fish_learned_seat_loads_wherever_the_server_starts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no models/ here: the shipped network is found by the package
    with running_server(tmp_path) as server:
        options = answer(server, "/api/fish/options")
        assert "learned" in options["seat_kinds"]
        assert "models/" not in json.dumps(options)  # no server path in the lobby
        made = answer(server, "/api/fish/tables", {"type": "fish_create",
                                                   "seats": ["learned"] * 6})
        assert made["table"]


def test_a_fish_learned_seat_without_its_network_is_not_offered(tmp_path):
    with running_server(tmp_path, fish_checkpoint="models/no_such_scorer.pt") as server:
        options = answer(server, "/api/fish/options")
        assert "learned" not in options["seat_kinds"]
        assert "learned" not in [b["kind"] for b in options["bots"]]
        status, body = http(server, "/api/fish/tables",
                            {"type": "fish_create", "seats": ["open"] + ["learned"] * 5})
        assert status == 400 and "no network for the learned seats" in body["message"]
        assert "no_such_scorer" not in body["message"]


def test_a_review_of_a_seats_moves_is_computed_in_the_background(server):
    """GET /api/games/ID/review?seat=S answers at once, running with its progress, then done
    with the review (docs/protocol.md "Review of a seat's moves"); asked again, the same."""
    import time

    made = answer(server, "/api/tables", {"type": "create", "seats": ["random"] * 4, "deal": 2})
    for _ in range(300):
        status, game = http(server, f"/api/games/{made['game_id']}")
        if status == 200 and game["status"] == "finished":
            break
        time.sleep(0.1)
    path = f"/api/games/{made['game_id']}/review?seat=1"
    first = answer(server, path)
    assert first["status"] in ("running", "done") and first["total"] == 13
    assert first["player"] == "scrofazero" and 0 <= first["done"] <= 13
    for _ in range(600):
        got = answer(server, path)
        if got["status"] != "running":
            break
        time.sleep(0.1)
    assert got["status"] == "done" and got["done"] == 13, got
    review = got["review"]
    mine = [m["card"] for m in game["moves"] if m["seat"] == 1]
    assert [m["card"] for m in review["moves"]] == mine
    assert review["total_given_up"] == pytest.approx(sum(m["given_up"] for m in review["moves"]))
    assert len(review["costliest"]) <= 3 and all(m["given_up"] >= 0 for m in review["moves"])
    assert review["settings"]["worlds"] == 16  # the server's review_worlds
    assert [m["trick"] for m in review["moves"]] == list(range(1, 14))
    assert all((m["verdict"] == "mistake") == (m["given_up"] > 0) for m in review["moves"])
    assert review["mistakes"] == sum(m["verdict"] == "mistake" for m in review["moves"])
    assert sum(review["result"].values()) == sum(game["scores"])
    assert review["explanation"].startswith(f"Your team finished with {review['result']['team']}")
    assert answer(server, path) == got
    assert http(server, f"/api/games/{made['game_id']}/review?seat=7")[0] == 400
    assert http(server, "/api/games/99999/review?seat=0")[0] == 404
    assert http(server, "/api/matches/99999/review?seat=0")[0] == 404
