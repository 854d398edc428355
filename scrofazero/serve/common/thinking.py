"""The threads our bots think in, shared fairly between the clients whose tables wait on them.

A plain thread pool serves its jobs first come, first served: a client with twenty tables whose
open seats answer at once keeps twenty decisions queued, and a person's table waits behind all
of them (issue 49: ScrofaZero's waits 10x). `FairThreads.run(owner, group, fn, *args)` queues a
job under its owner (the client address that made the table) and its group (the table): when a
thread is free it goes to the next owner in turn that has a job waiting, and within that owner to
its next table in turn, so each client gets one share of the threads however many tables it has,
and each of its tables a share of that. An owner holds at most its share of the threads at once
(the threads over the owners active in the last ACTIVE_S: waiting, thinking, or done thinking
lately), so a person's table whose bots think again a few seconds after its last move finds a
thread free rather than waiting for another client's decision to end; alone, an owner may use
every thread. Everything but the work itself runs on the event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future, ThreadPoolExecutor

ACTIVE_S = 30.0  # an owner whose bots thought this recently keeps its share of the threads


class FairThreads(Executor):
    """`threads` worker threads whose turns go round the owners, then their groups (see the
    module docstring). As an Executor (`submit`, e.g. for `run_in_executor`) it queues a job in
    arrival order behind the fair turns already given: for the one-off work of loading and
    warming up, not for moves."""

    def __init__(self, threads: int, thread_name_prefix: str = ""):
        self.size = threads
        self.pool = ThreadPoolExecutor(threads, thread_name_prefix=thread_name_prefix)
        # owner -> group -> the turns waiting there, each a future set when its job may start
        self._waiting: OrderedDict[Hashable, OrderedDict[Hashable, deque]] = OrderedDict()
        self._held: Counter = Counter()  # owner -> turns given whose job has not ended
        self._seen: dict[Hashable, float] = {}  # owner -> when its last job ended

    def submit(self, fn: Callable, /, *args, **kwargs) -> Future:
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for groups in self._waiting.values():
            for turns in groups.values():
                for turn in turns:
                    turn.cancel()
        self._waiting.clear()
        self.pool.shutdown(wait=wait, cancel_futures=cancel_futures)

    def waiting(self) -> int:
        """Jobs waiting for a turn."""
        return sum(len(t) for groups in self._waiting.values() for t in groups.values())

    async def run(self, owner: Hashable, group: Hashable, fn: Callable, *args):
        """`fn(*args)` in a worker thread once its turn comes; its result (or its exception)."""
        loop = asyncio.get_running_loop()
        turn = loop.create_future()
        self._waiting.setdefault(owner, OrderedDict()).setdefault(group, deque()).append(turn)
        self._give_turns()
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # given, then its waiter was cancelled
                self._ended(owner)
            raise
        try:
            job = self.pool.submit(fn, *args)
        except RuntimeError:  # shut down meanwhile
            self._ended(owner)
            raise
        # the turn ends when the thread is done, even if the waiter below is cancelled first
        job.add_done_callback(lambda _: loop.call_soon_threadsafe(self._ended, owner))
        return await asyncio.wrap_future(job)

    def _ended(self, owner: Hashable) -> None:
        self._held[owner] -= 1
        if self._held[owner] <= 0:
            del self._held[owner]
        self._seen[owner] = time.monotonic()
        self._give_turns()

    def _give_turns(self) -> None:
        while sum(self._held.values()) < self.size:
            found = self._next_turn()
            if found is None:
                return
            owner, turn = found
            self._held[owner] += 1
            turn.set_result(None)

    def _share(self) -> int:
        """The most threads one owner may hold now: the threads over the active owners."""
        now = time.monotonic()
        for owner in [o for o, t in self._seen.items() if now - t > ACTIVE_S]:
            del self._seen[owner]
        active = set(self._waiting) | set(self._held) | set(self._seen)
        return max(1, self.size // max(1, len(active)))

    def _next_turn(self) -> tuple[Hashable, asyncio.Future] | None:
        """The owner next in turn below its share, and the first waiting turn of its next group
        in turn; the owner and the group go to the back of their lines (dropped once they have
        nothing waiting). None: no owner below its share has a job waiting."""
        share = self._share()
        for owner in list(self._waiting):
            if self._held[owner] >= share:
                continue
            groups = self._waiting[owner]
            while groups:
                group, turns = next(iter(groups.items()))
                turn = turns.popleft()
                if turns:
                    groups.move_to_end(group)
                else:
                    del groups[group]
                if not turn.done():  # a cancelled waiter's turn is skipped
                    break
            else:
                del self._waiting[owner]
                continue
            if groups:
                self._waiting.move_to_end(owner)
            else:
                del self._waiting[owner]
            return owner, turn
        return None
