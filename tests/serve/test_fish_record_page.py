"""The page a person reads of a Fish game's record, GET /fish/record/ID (fish/record_page.py).

Invariants: the page of a finished game lists every player by name with their team, kind and
dealt cards, every move once, in order, as a sentence that names the players (no seat number,
no card code: cards in words) with the recorded outcome, and the result as the records hold it;
it links the record's JSON beside it, carries no inline script or style (the site's
Content-Security-Policy refuses them) and escapes a person's name; an id that is not a number,
names no game or names a game still in play gets a plain page saying so.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import urllib.error
import urllib.request
from html import unescape

from serve_thread import http, running_server

from scrofazero.games.fish.cards import card_code
from scrofazero.serve.fish.hub import FishHub, FishHubSettings
from scrofazero.serve.fish.messages import FishCreate
from scrofazero.serve.fish.record_page import card_words, player_names, record_page
from scrofazero.serve.fish.records import FishRecords
from scrofazero.serve.fish.table import fallback_move
from scrofazero.serve.gongzhu.records import Records

NAME = "Ann <b>&"  # a person's name, with what HTML must escape
SENTENCE = re.compile(r"^(?P<who>.+?) (?:asked (?P<target>.+?) for (?P<card>the .+?): "
                      r"(?P<answer>yes|no)|called the (?P<set>.+?) \(.+\): (?P<right>right|wrong), "
                      r"team (?P<team>[01]) gets it)$")


def played_game(tmp_path) -> dict:
    """The record of a game in which a person named NAME at seat 0 played five random bots to
    the end (its first legal ask each turn, the fallback call when it must call)."""
    async def case():
        hub = FishHub(FishRecords(Records(str(tmp_path / "records.sqlite")).engine),
                      FishHubSettings(seed=0))
        table, tokens = await hub.create_table(FishCreate(seats=["open"] + ["random"] * 5,
                                                          seed=6))
        queue: asyncio.Queue = asyncio.Queue()

        class Person:
            async def send(self, msg):
                queue.put_nowait(msg)

            async def close(self, reason):
                pass

        me = Person()
        await hub.receive(me, json.dumps({"type": "fish_join", "table": table.id, "seat": 0,
                                          "token": tokens[0], "name": NAME}))
        while (msg := await asyncio.wait_for(queue.get(), 30))["type"] != "fish_over":
            if msg["type"] == "fish_turn" and msg["move"] == table.moves + 1:
                move = fallback_move(table.state)
                answer = {"type": "ask", "target": msg["asks"][0][0],
                          "card": msg["asks"][0][1]} if msg["asks"] else \
                    {"type": "call", "set": move.set_id,
                     "holders": {card_code(c): s for c, s in move.assignment}}
                await hub.receive(me, json.dumps({**answer, "move": msg["move"]}))
        game = await hub.read("game", table.game_id)
        await hub.shutdown()
        return game

    return asyncio.run(case())


def test_the_record_page_tells_the_game_in_sentences(tmp_path):
    game = played_game(tmp_path)
    page = record_page(game)
    names = player_names(game["seats"])
    assert names[0] == NAME and len(set(names)) == 6  # the five random bots told apart
    assert not any(re.search(r"\d", name) for name in names)  # by letter, not by seat
    assert "<b>&" not in page and "Ann &lt;b&gt;&amp;" in page
    assert "<script" not in page and "<style" not in page and " style=" not in page
    moves = re.findall(r'<li class="(?:ask|call)" data-testid="fish-record-move"><span '
                       r'class="num">(\d+)</span><span>(.*?)</span></li>', page)
    assert len(moves) == len(game["moves"]) > 20
    for (number, shown), move in zip(moves, game["moves"]):
        assert int(number) == move["move"], (number, move)
        sentence = unescape(shown)
        found = SENTENCE.match(sentence.removesuffix(f" [{move['fallback']}]"))
        assert found, sentence
        assert found["who"] == names[move["seat"]]
        if move["kind"] == "ask":
            assert found["target"] == names[move["target"]]
            assert found["card"] == card_words(move["card"])
            assert found["answer"] == ("yes" if move["success"] else "no")
        else:
            assert found["right"] == ("right" if move["success"] else "wrong")
        assert not re.search(r"\bseat \d|\b[DCHS][2-9TJQKA]\b|\*[SB]", sentence), sentence
    result = re.search(r'data-testid="fish-record-result">(.*?)</p>', page)[1]
    score = game["score"]
    won = int(score[1] > score[0])
    assert f"Team {won} won {score[won]}-{score[1 - won]}" in unescape(result)
    players = re.search(r'data-testid="fish-record-players">(.*?)</table>', page)[1]
    for seat in game["seats"]:
        assert unescape(players).count(names[seat["seat"]]) >= 1
    assert f'href="/api/fish/games/{game["id"]}"' in page


def test_card_words_name_every_kind_of_card():
    assert [card_words(c) for c in ("H5", "ST", "DJ", "CQ", "HK", "SA", "*S", "*B")] == [
        "the 5 of hearts", "the 10 of spades", "the jack of diamonds", "the queen of clubs",
        "the king of hearts", "the ace of spades", "the small joker", "the big joker"]


def get_page(server, path: str) -> tuple[int, str, dict]:
    try:
        with urllib.request.urlopen(server.url + path, timeout=30) as resp:
            return resp.status, resp.read().decode(), dict(resp.headers)
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), dict(err.headers)


def test_the_server_serves_the_record_page_and_says_when_it_cannot(tmp_path):
    with running_server(tmp_path) as server:
        _, bots = http(server, "/api/fish/tables", {"type": "fish_create",
                                                     "seats": ["random"] * 6, "seed": 1})
        _, waiting = http(server, "/api/fish/tables", {"type": "fish_create",
                                                        "seats": ["open"] + ["random"] * 5})
        deadline = time.time() + 30
        while http(server, f"/api/fish/games/{bots['game_id']}")[0] == 409:
            assert time.time() < deadline, "the bots' game did not end"
            time.sleep(0.1)
        status, page, headers = get_page(server, f"/fish/record/{bots['game_id']}")
        answers = [get_page(server, f"/fish/record/{path}")[:2]
                   for path in (waiting["game_id"], 999999, "abc")]
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in headers["content-security-policy"]
    assert page.count('data-testid="fish-record-move"') > 20
    assert f'<a href="/api/fish/games/{bots["game_id"]}"' in page
    assert [code for code, _ in answers] == [409, 404, 400]
    assert "still in play" in answers[0][1] and 'data-testid="problem"' in answers[1][1]
    assert "is not a game number" in answers[2][1]
