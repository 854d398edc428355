"""Review a seat's moves in a played Gongzhu game: for each card the seat played, the value
the full ScrofaZero player finds for every legal card from that seat's view (never the true
deal), the card it would choose and the points given up (docs/commands.md, "Review").

    python review.py 12 --seat 0                   # game 12 of the server at 127.0.0.1:8000
    python review.py game.txt --seat 2 --json r.json  # an export (GET /api/games/ID/export)
    python review.py 12 --server http://host:8080 --checkpoint models/scrofazero.pt --seed 5

A file may hold several games (a match's exports one after another): each is reviewed, then
the match's summary. The seed defaults to the game's id (as the server's reviews), 0 for a file.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from pathlib import Path

from scrofazero.agents import PLAYERS
from scrofazero.eval.review import match_summary, review_hand
from scrofazero.games.gongzhu.game_record import GameRecordError, load_games
from scrofazero.nn.checkpoint import load_model
from scrofazero.serve.common.config import shipped
from scrofazero.serve.gongzhu.reviews import REVIEWER, record_moves


def games_of(source: str, server: str) -> list[tuple[str, list[int], int, list[int], int]]:
    """(name, deal, leader, moves, default seed) of each game of a file or a server's game id."""
    if Path(source).is_file():
        return [(f"{source} game {i + 1}", list(g.deal), g.leader, list(g.moves), 0)
                for i, g in enumerate(load_games(source))]
    if not source.isdecimal():
        raise SystemExit(f"review.py: {source!r} is neither a file nor a game number")
    url = f"{server.rstrip('/')}/api/games/{source}"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            game = json.loads(response.read())
    except urllib.error.HTTPError as err:
        raise SystemExit(f"review.py: {url}: {json.loads(err.read()).get('message', err)}")
    except OSError as err:
        raise SystemExit(f"review.py: cannot reach {url} ({err}); is python play.py running?")
    return [(f"game {source}", *record_moves(game), int(source))]


def show(name: str, review: dict) -> None:
    print(f"{name}, seat {review['seat']} (reviewed by {REVIEWER}, seed {review['seed']}):")
    for m in review["moves"]:
        values = " ".join(f"{v['card']}={'-' if v['value'] is None else v['value']}"
                          for v in m["values"])
        verdict = "forced" if m["forced"] else "as the AI" if m["card"] == m["ai_card"] \
            else f"AI: {m['ai_card']}, gave up {m['given_up']}"
        print(f"  ply {m['ply']:2d}: played {m['card']:3s} {verdict:28s} [{values}]")
    costly = ", ".join(f"ply {m['ply']} {m['card']} ({m['given_up']})"
                       for m in review["costliest"]) or "none"
    print(f"  given up in total: {review['total_given_up']}; costliest: {costly}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game", help="a game number of the server, or a game file (export)")
    parser.add_argument("--seat", type=int, default=0, help="the seat reviewed (0..3)")
    parser.add_argument("--server", default="http://127.0.0.1:8000", help="for a game number")
    parser.add_argument("--checkpoint", default="models/scrofazero.pt", help="the network")
    parser.add_argument("--seed", type=int, default=None, help="default: the game's id (0: file)")
    parser.add_argument("--json", default=None, help="also write the reviews here as JSON")
    args = parser.parse_args(argv)
    if not 0 <= args.seat < 4:
        raise SystemExit(f"review.py: --seat must be 0..3, got {args.seat}")
    try:
        games = games_of(args.game, args.server)
    except (GameRecordError, OSError) as err:
        raise SystemExit(f"review.py: {err}")
    agent = PLAYERS[REVIEWER].make(model=load_model(shipped(args.checkpoint)))
    reviews = []
    for name, deal, leader, moves, seed in games:
        review = review_hand(deal, leader, moves, args.seat, agent,
                             seed=seed if args.seed is None else args.seed)
        show(name, review)
        reviews.append({"game": name, **review})
    out = {"player": REVIEWER, "reviews": reviews}
    if len(reviews) > 1:
        out["match"] = match_summary(reviews)
        print(f"match: {out['match']['total_given_up']} given up over {len(reviews)} hands")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
