"""Reviews of a seat's moves in finished hands (scrofazero/eval/review.py), computed in the
background for GET /api/games/ID/review and /api/matches/ID/review (docs/protocol.md, "Review
of a seat's moves"), with what each may cost bounded (docs/play.md "Limits").

A review is asked for by (game, seat), any seat of a game that is over (its whole record is
public then, bots' seats too); every ask answers at once with its state: running (queued or
under way, with the moves done so far), done with the review, or failed. Each review is
computed once: asks for one queued or under way share it, and a finished one is kept in the
records database (`reviews`: a finished hand's moves never change, so neither does their
review), under its game, seat and what else decides it (the review's settings and the network
file's digest), so asking again, even after a restart, computes nothing; the latest `keep`
answers stay in memory too. Reviews queued or under way are at most `max_queued` on the server
and `max_queued_per_client` per client address: an ask past either is refused with the `limit`
error naming the setting. A match's review queues its hands in order, as many as the bounds
let, and more at each ask as those finish (the page asks each second).

The reviewers are the full player with the review's settings (eval/review.py: 256 deals per
move, every card searched on each, a mistake judged twice) and the server's network, fresh ones
per review, on the review threads (a pool of their own, so reviews never take the threads of the
tables' bots); the seed is the game's id, so the same game reviews the same on any server with
the same network. Answers are JSON bytes, built off the event loop.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor

from scrofazero.eval.review import ReviewSettings, match_summary, review_hand
from scrofazero.games.gongzhu.cards import card_index
from scrofazero.serve.common.limits import json_bytes
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.common.sockets import closed_game

REVIEWER = "scrofazero"  # the player that reviews, as the answers name it
Key = tuple[int, int]  # (game id, seat)


def record_moves(game: dict) -> tuple[list[int], int, list[int]]:
    """(deal, leader, moves) of a stored game (Records.game's dict) as card indices."""
    return ([card_index(c) for c in game["deal"].split()], int(game["leader"]),
            [card_index(m["card"]) for m in game["moves"]])


def decided_by(settings: ReviewSettings, network: str) -> str:
    """The digest of what decides a review besides its game and seat: the review's settings
    and the network (its file's digest)."""
    text = json.dumps({**settings.describe(), "network": network}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


class Reviews:
    def __init__(self, model: Callable[[], object], threads: int = 1,
                 settings: ReviewSettings | None = None, max_queued: int = 8,
                 max_queued_per_client: int = 2, keep: int = 200, network: str = "",
                 writer: Executor | None = None):
        """model() -> the policy/value network the reviews search with; `network` names it (its
        file's digest) in what a kept review is decided by; `writer`: the thread the records
        are written in (None: the review's own)."""
        self.model = model
        self.settings = settings or ReviewSettings()
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix="reviews")
        self.max_queued, self.max_queued_per_client = max_queued, max_queued_per_client
        self.keep = keep
        self.decided_by = decided_by(self.settings, network)
        self.writer = writer
        self._lock = threading.Lock()
        self._jobs: dict[Key, dict] = {}  # queued or under way: their answers as they go
        self._asker: dict[Key, str] = {}  # the client address that queued each of them
        self._queued: Counter[str] = Counter()  # client address -> its reviews queued or under way
        # finished reviews' (status, answer), the latest used last
        self._finished: OrderedDict[Key, tuple[str, bytes]] = OrderedDict()
        self._summaries: OrderedDict[Key, dict] = OrderedDict()  # (match id, seat) -> summary

    # --- asks (the routes'): `known` on the event loop, the rest in a worker thread ----------
    def known(self, game_id: int, seat: int) -> bytes | None:
        """The answer for (game, seat) when it needs no record: a review queued, under way or
        finished and still in memory; else None."""
        found = self._known((game_id, seat))
        return found[1] if found is not None else None

    def game_answer(self, records, game_id: int, seat: int, client: str) -> bytes:
        """The answer for `seat` of the game `game_id` (over: else not_found or in_play), its
        review queued when it is neither known nor kept (`limit` past the bounds)."""
        known = self.known(game_id, seat)
        if known is not None:
            return known
        # the game's status alone first: a refusal (the flood's answer) reads no whole game
        closed_game(lambda g: {"status": s} if (s := records.game_status(g)) else None, game_id)
        kept = self._kept(records, [game_id], seat)
        if game_id in kept:
            return kept[game_id][1]
        with self._lock:
            refusal = None if (game_id, seat) in self._jobs else self._refusal(client)
        if refusal is not None:
            raise ProtocolError("limit", refusal)
        game = closed_game(records.game, game_id)
        with self._lock:
            job = self._jobs.get((game_id, seat))
            if job is None:
                refusal = self._refusal(client)
                if refusal is not None:
                    raise ProtocolError("limit", refusal)
                job = self._queue(records, game, seat, client)
            return json_bytes(job)

    def match_answer(self, records, match_id: int, game_ids: list[int], seat: int,
                     client: str) -> bytes:
        """The reviews of `seat` in a match's hands (`game_ids`, in order, every one over) and,
        once all are done, the match's summary. Hands neither known nor kept are queued in
        order as far as the bounds let (the others answer running, 0 done); `limit` when none
        of them is queued or under way and none can be."""
        hands = {g: found for g in game_ids if (found := self._known((g, seat))) is not None}
        missing = [g for g in game_ids if g not in hands]
        if missing:
            hands.update(self._kept(records, missing, seat))
            missing = [g for g in game_ids if g not in hands]
        if missing:
            with self._lock:
                room = self._room(client)
            games = [closed_game(records.game, g) for g in missing[:room]]
            with self._lock:
                for game in games:
                    job = self._jobs.get((game["id"], seat))
                    if job is None and self._refusal(client) is None:
                        job = self._queue(records, game, seat, client)
                    if job is not None:
                        hands[game["id"]] = ("running", json_bytes(job))
                refusal = self._refusal(client)
                under_way = any((g, seat) in self._jobs for g in game_ids)
            missing = [g for g in game_ids if g not in hands]
            if missing and refusal is not None and not under_way:
                raise ProtocolError("limit", refusal)
            totals = records.seat_moves(missing, seat) if missing else {}
            for game_id in missing:  # to be queued at a later ask
                hands[game_id] = ("running", json_bytes({
                    "game_id": game_id, "seat": seat, "player": REVIEWER, "status": "running",
                    "done": 0, "total": totals.get(game_id, 0)}))
        states = [hands[g][0] for g in game_ids]
        answers = [hands[g][1] for g in game_ids]
        done = all(s == "done" for s in states)
        status = "done" if done else "failed" if "failed" in states else "running"
        summary = self._summary(match_id, seat, answers) if done else None
        head = json_bytes({"match_id": match_id, "seat": seat, "player": REVIEWER,
                           "status": status})
        return (head[:-1] + b',"hands":[' + b",".join(answers) + b'],"summary":' +
                json_bytes(summary) + b"}")

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)

    # --- the queue ---------------------------------------------------------------------------
    def _known(self, key: Key) -> tuple[str, bytes] | None:
        """(status, answer) of a review in memory: queued, under way or finished; else None."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                return job["status"], json_bytes(job)
            found = self._finished.get(key)
            if found is not None:
                self._finished.move_to_end(key)
            return found

    def _room(self, client: str) -> int:
        """How many more reviews `client` may queue now (under the lock)."""
        return max(0, min(self.max_queued - len(self._jobs),
                          self.max_queued_per_client - self._queued[client]))

    def _refusal(self, client: str) -> str | None:
        """Why `client` may queue no review now (the `limit` message), else None (under the
        lock)."""
        if len(self._jobs) >= self.max_queued:
            return (f"the server has {len(self._jobs)} reviews queued or under way, its most "
                    f"(max_reviews_queued={self.max_queued}): ask again in a minute")
        mine = self._queued[client]
        if mine >= self.max_queued_per_client:
            return (f"{client} has {mine} reviews queued or under way, the most a client may "
                    f"have (max_reviews_queued_per_client={self.max_queued_per_client}): ask "
                    "again when one is done")
        return None

    def _queue(self, records, game: dict, seat: int, client: str) -> dict:
        """Queue the review of `seat` in `game` for `client` (under the lock); its answer."""
        key = (int(game["id"]), seat)
        total = sum(1 for m in game["moves"] if m["seat"] == seat)
        job = {"game_id": key[0], "seat": seat, "player": REVIEWER, "status": "running",
               "done": 0, "total": total}
        self._jobs[key] = job
        self._asker[key] = client
        self._queued[client] += 1
        self.pool.submit(self._run, records, key, job, game)
        return job

    def _run(self, records, key: Key, job: dict, game: dict) -> None:
        def progress(done: int, total: int) -> None:
            job["done"], job["total"] = done, total

        review = None
        try:
            deal, leader, moves = record_moves(game)
            review = review_hand(deal, leader, moves, key[1], self.model(), seed=key[0],
                                 settings=self.settings, progress=progress)
            answer = {**job, "status": "done", "review": review}
        except Exception as err:  # a review must never take the server down; it says why
            answer = {**job, "status": "failed", "error": f"{type(err).__name__}: {err}"[:300]}
        body = (answer["status"], json_bytes(answer))
        with self._lock:
            del self._jobs[key]
            client = self._asker.pop(key)
            self._queued[client] -= 1
            if not self._queued[client]:
                del self._queued[client]
            self._remember(key, body)
        if review is not None:
            self._save(records, key, json_bytes(review).decode())

    # --- what is kept ------------------------------------------------------------------------
    def _remember(self, key: Key, body: tuple[str, bytes]) -> None:
        """A finished answer in memory (under the lock), the oldest dropped past `keep`."""
        self._finished[key] = body
        self._finished.move_to_end(key)
        while len(self._finished) > self.keep:
            self._finished.popitem(last=False)

    def _kept(self, records, game_ids: list[int],
              seat: int) -> dict[int, tuple[str, bytes]]:
        """The answers of the reviews the records keep of `seat` in `game_ids` (remembered)."""
        stored = getattr(records, "stored_reviews", None)
        found = stored(game_ids, seat, self.decided_by) if stored is not None else {}
        out = {}
        for game_id, text in found.items():
            review = json.loads(text)
            moves = len(review["moves"])
            out[game_id] = ("done", json_bytes({
                "game_id": game_id, "seat": seat, "player": REVIEWER, "status": "done",
                "done": moves, "total": moves, "review": review}))
        with self._lock:
            for game_id, body in out.items():
                self._remember((game_id, seat), body)
        return out

    def _save(self, records, key: Key, review: str) -> None:
        save = getattr(records, "save_review", None)
        if save is None:
            return
        args = (save, *key, self.decided_by, review)
        try:
            if self.writer is not None:
                self.writer.submit(_quietly, *args)
            else:
                _quietly(*args)
        except RuntimeError:  # the writer is shut down: the server is stopping
            pass

    def _summary(self, match_id: int, seat: int, answers: list[bytes]) -> dict:
        """The summary of a match whose hands' reviews are all done (kept once made)."""
        key = (match_id, seat)
        with self._lock:
            summary = self._summaries.get(key)
        if summary is None:
            summary = match_summary([json.loads(a)["review"] for a in answers])
            with self._lock:
                self._summaries[key] = summary
                while len(self._summaries) > self.keep:
                    self._summaries.popitem(last=False)
        return summary


def _quietly(save: Callable, *args) -> None:
    """Keep a review; a failure to keep it loses nothing but the keeping (it stays in memory
    a while, and is computed again when asked after that)."""
    with contextlib.suppress(Exception):
        save(*args)
