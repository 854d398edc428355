"""Review a seat's moves in a played Gongzhu game: for each card the seat played, every legal
card is valued on the same 256 deals sampled from that seat's view (never the true deal) by the
full ScrofaZero player's search, with the AI's card and each card's loss against it with its
standard error; a loss is called a mistake only beyond 15 points and two standard errors, twice
(a second judgement on other deals must agree).
Values are the expected final margin: the seat's team's points minus the other team's at the
end of the hand (docs/commands.md, "Review").

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
from typing import Any

from scrofazero.eval.review import ReviewSettings, check_review, match_summary, review_hand
from scrofazero.games.gongzhu.game_record import GameRecordError, load_games
from scrofazero.nn.checkpoint import load_model
from scrofazero.serve.common.config import shipped
from scrofazero.serve.gongzhu.reviews import REVIEWER, record_moves


class BadInput(ValueError):
    """A source, seat or setting review.py cannot use (one line, exit 2)."""


def games_of(source: str, server: str) -> list[tuple[str, list[int], int, list[int], int]]:
    """(name, deal, leader, moves, default seed) of each game of a file or a server's game id."""
    if Path(source).is_file():
        return [(f"{source} game {i + 1}", list(g.deal), g.leader, list(g.moves), 0)
                for i, g in enumerate(load_games(source))]
    if not source.isdecimal():
        raise BadInput(f"{source!r} is neither a file nor a game number")
    url = f"{server.rstrip('/')}/api/games/{source}"
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            game = json.loads(response.read())
    except urllib.error.HTTPError as err:
        raise BadInput(f"{url}: {json.loads(err.read()).get('message', err)}") from None
    except OSError as err:
        raise BadInput(f"cannot reach {url} ({err}); is python play.py running?") from None
    return [(f"game {source}", *record_moves(game), int(source))]


PLACES = ("led", "played second", "played third", "played last")


def verdict(m: dict) -> str:
    """A move's verdict in words."""
    if m["verdict"] == "mistake":
        return f"mistake: AI {m['ai_card']}, {m['loss']:.1f} +- {m['loss_se']:.1f} points"
    if m["verdict"] == "as_good":
        return f"about as good as AI {m['ai_card']} ({m['loss']:.1f} +- {m['loss_se']:.1f})"
    return {"best": "the AI's card", "forced": "forced"}[m["verdict"]]


def show(name: str, review: dict) -> None:
    s = review["settings"]
    print(f"{name}, seat {review['seat']} (reviewed by {REVIEWER} on {s['worlds']} deals per "
          f"move, seed {review['seed']}; values: expected final margin, your team minus the "
          "other):")
    for m in review["moves"]:
        values = " ".join(f"{v['card']}={'-' if v['value'] is None else v['value']}"
                          for v in m["values"])
        where = f"trick {m['trick']:2d}, {PLACES[m['position'] - 1]}"
        print(f"  {where:26s} {m['card']:3s} {verdict(m):44s} [{values}]")
    print(f"  {review['explanation']}")


def main(argv: list[str] | None = None) -> None:
    try:
        run(argv)
    except BadInput as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


def run(argv: list[str] | None) -> None:
    parser = argparse.ArgumentParser(prog="review.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", help="a game number of the server, or a game file (export)")
    parser.add_argument("--seat", type=int, default=0, help="the seat reviewed (0..3)")
    parser.add_argument("--server", default="http://127.0.0.1:8000", help="for a game number")
    parser.add_argument("--checkpoint", default="models/scrofazero.pt", help="the network")
    parser.add_argument("--seed", type=int, default=None, help="default: the game's id (0: file)")
    parser.add_argument("--json", default=None, help="also write the reviews here as JSON")
    parser.add_argument("--worlds", type=int, default=ReviewSettings.worlds,
                        help="deals sampled and searched per move (default %(default)s)")
    parser.add_argument("--min-loss", type=float, default=ReviewSettings.min_loss,
                        help="points a mistake must lose at least (default %(default)s)")
    args = parser.parse_args(argv)
    if not 0 <= args.seat < 4:
        raise BadInput(f"--seat must be 0..3, got {args.seat}")
    try:
        settings = check_review(ReviewSettings(worlds=args.worlds, min_loss=args.min_loss))
        games = games_of(args.game, args.server)
        model = load_model(shipped(args.checkpoint))
    except (GameRecordError, OSError, ValueError) as err:
        raise BadInput(str(err)) from None
    reviews = []
    for name, deal, leader, moves, seed in games:
        review = review_hand(deal, leader, moves, args.seat, model, settings=settings,
                             seed=seed if args.seed is None else args.seed)
        show(name, review)
        reviews.append({"game": name, **review})
    out: dict[str, Any] = {"player": REVIEWER, "reviews": reviews}
    if len(reviews) > 1:
        out["match"] = match_summary(reviews)
        print(f"match: {out['match']['mistakes']} mistakes over {len(reviews)} hands, "
              f"{out['match']['total_given_up']} points of expected margin given up")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
