"""The reviews under abuse: each costs seconds of a core, so what they may queue is bounded and
none is computed twice.

Invariants: an ask that would queue a review past max_reviews_queued_per_client (one client
address) or max_reviews_queued (the server) is refused with 429 naming the setting, and another
address still may up to the server's bound; asking again for a review queued or under way queues
nothing; a finished review is kept in the records database, so asking again, after a restart
too, computes nothing; a match's review queues its hands only as far as the bounds let and the
rest at later asks; any seat of a finished game may be reviewed, a bot's too.
"""

from __future__ import annotations

import json
import threading
import time
from http.client import HTTPConnection
from urllib.parse import urlsplit

import pytest
from quick_review import quick_reviews
from serve_thread import answer, finished_game, http, running_server

from scrofazero.serve.gongzhu import reviews as reviews_module

OTHER = "127.0.0.3"  # a second client address (Linux routes all of 127.0.0.0/8 to loopback)


@pytest.fixture
def gated(monkeypatch):
    """Reviews that wait for `gate` before they compute (quickly): a list of the (game, seat)
    computed, and the gate."""
    gate, computed = threading.Event(), []
    real = reviews_module.review_hand

    def review_hand(deal, leader, moves, seat, model, seed, **kw):
        computed.append((seed, seat))
        gate.wait(30)
        return real(deal, leader, moves, seat, model, seed=seed, **kw)

    monkeypatch.setattr(reviews_module, "review_hand", review_hand)
    with quick_reviews():
        try:
            yield computed, gate
        finally:
            gate.set()


def ask_from(server, source: str, path: str) -> tuple[int, dict]:
    """(status, answer) of a GET sent from the client address `source`."""
    url = urlsplit(server.url)
    conn = HTTPConnection(url.hostname, url.port, timeout=30,
                                      source_address=(source, 0))
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def until_done(server, path: str) -> dict:
    deadline = time.time() + 30
    while (got := answer(server, path))["status"] == "running":
        assert time.time() < deadline, got
        time.sleep(0.05)
    return got


def refused(status_answer, setting: str) -> None:
    status, got = status_answer
    assert (status, got["code"]) == (429, "limit"), got
    assert setting in got["message"], got


def test_reviews_queued_are_bounded_per_client_and_in_all(tmp_path, gated):
    computed, gate = gated
    with running_server(tmp_path, max_reviews_queued=3,
                        max_reviews_queued_per_client=2) as server:
        game = finished_game(server)["id"]
        path = f"/api/games/{game}/review?seat="
        assert answer(server, path + "0")["status"] == "running"
        assert answer(server, path + "0")["status"] == "running"  # the same review: shared
        assert answer(server, path + "1")["status"] == "running"
        refused(http(server, path + "2"), "max_reviews_queued_per_client=2")
        assert ask_from(server, OTHER, path + "2")[0] == 200  # another client may
        refused(ask_from(server, OTHER, path + "3"), "max_reviews_queued=3")
        gate.set()
        for seat in range(3):
            assert until_done(server, path + str(seat))["review"]["seat"] == seat
        assert sorted(computed) == [(game, 0), (game, 1), (game, 2)]  # seat 0 once
        assert ask_from(server, OTHER, path + "3")[0] == 200  # room again


def test_a_finished_review_is_kept_across_a_restart(tmp_path, gated):
    computed, gate = gated
    gate.set()
    db = str(tmp_path / "games.sqlite")
    with running_server(tmp_path, db=db) as server:
        game = finished_game(server)["id"]
        path = f"/api/games/{game}/review?seat=2"
        done = until_done(server, path)
        assert answer(server, path) == done
    with running_server(tmp_path, db=db) as again:
        assert answer(again, path) == done  # from the records at the first ask
    assert computed == [(game, 2)]


def test_a_match_review_queues_its_hands_as_far_as_the_bounds_let(tmp_path, gated):
    computed, gate = gated
    with running_server(tmp_path, max_reviews_queued_per_client=2) as server:
        match = finished_game(server, hands=3)["match_id"]
        hands = [g["id"] for g in answer(server, f"/api/matches/{match}")["games"]]
        path = f"/api/matches/{match}/review?seat=1"
        first = answer(server, path)
        assert first["status"] == "running" and first["summary"] is None
        assert [h["game_id"] for h in first["hands"]] == hands
        assert all(h["total"] == 13 for h in first["hands"])
        # two hands queued: the client has no room for the third
        refused(http(server, f"/api/games/{hands[2]}/review?seat=1"),
                "max_reviews_queued_per_client=2")
        assert answer(server, path)["status"] == "running"  # asking again is no refusal
        gate.set()
        got = until_done(server, path)
        assert [h["status"] for h in got["hands"]] == ["done"] * 3
        assert got["summary"]["hands"] == 3
        assert sorted(computed) == [(g, 1) for g in hands]  # each hand once
