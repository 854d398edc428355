"""Reviews of a person's moves in finished hands (scrofazero/eval/review.py), computed in the
background for GET /api/games/ID/review and /api/matches/ID/review (docs/protocol.md, "Review
of a seat's moves").

A review is asked for by (game, seat); the first ask starts it on the review threads (a bounded
pool of its own, so reviews never take the threads of the tables' bots) and every ask answers
at once with its state: running with the moves done so far, done with the review, or failed.
The reviewers are the full player with the review's settings (eval/review.py: 256 deals per
move, every card searched on each, a mistake judged twice) and the server's network, fresh ones
per review;
the seed is the game's id, so the same game reviews the same on any server with the same
network. The latest `keep` reviews are kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from scrofazero.eval.review import ReviewSettings, match_summary, review_hand
from scrofazero.games.gongzhu.cards import card_index

REVIEWER = "scrofazero"  # the player that reviews, as the answers name it


def record_moves(game: dict) -> tuple[list[int], int, list[int]]:
    """(deal, leader, moves) of a stored game (Records.game's dict) as card indices."""
    return ([card_index(c) for c in game["deal"].split()], int(game["leader"]),
            [card_index(m["card"]) for m in game["moves"]])


class Reviews:
    def __init__(self, model: Callable[[], object], threads: int = 1, keep: int = 200,
                 settings: ReviewSettings | None = None):
        """model() -> the policy/value network the reviews search with."""
        self.model = model
        self.settings = settings or ReviewSettings()
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="reviews")
        self.keep = keep
        self._lock = threading.Lock()
        self._jobs: OrderedDict[tuple[int, int], dict] = OrderedDict()

    def ask(self, game: dict, seat: int) -> dict:
        """The state of the review of `seat` in the finished `game` (started by the first
        ask): {game_id, seat, player, status: running|done|failed, done, total, review|error}."""
        key = (int(game["id"]), seat)
        with self._lock:
            job = self._jobs.get(key)
            if job is None:
                total = sum(1 for m in game["moves"] if m["seat"] == seat)
                job = {"game_id": key[0], "seat": seat, "player": REVIEWER, "status": "running",
                       "done": 0, "total": total}
                self._jobs[key] = job
                while len(self._jobs) > self.keep:
                    self._jobs.popitem(last=False)
                self.pool.submit(self._run, job, game)
            else:
                self._jobs.move_to_end(key)
            return dict(job)

    def _run(self, job: dict, game: dict) -> None:
        def progress(done: int, total: int) -> None:
            job["done"], job["total"] = done, total

        try:
            deal, leader, moves = record_moves(game)
            review = review_hand(deal, leader, moves, job["seat"], self.model(),
                                 seed=job["game_id"], settings=self.settings, progress=progress)
            job.update(review=review, status="done")
        except Exception as err:  # a review must never take the server down; it says why
            job.update(status="failed", error=f"{type(err).__name__}: {err}"[:300])

    def ask_match(self, games: list[dict], seat: int) -> dict:
        """The reviews of `seat` in a match's finished hands (in order) and, once all are done,
        the match's summary."""
        hands = [self.ask(g, seat) for g in games]
        done = all(h["status"] == "done" for h in hands)
        return {"seat": seat, "player": REVIEWER,
                "status": "done" if done else "failed" if any(h["status"] == "failed"
                                                             for h in hands) else "running",
                "hands": hands,
                "summary": match_summary([h["review"] for h in hands]) if done else None}

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
