"""The transport both protocols share: a WebSocket as a hub's client (SocketClient: a queue and
a writer task per socket, so a client that stops reading delays nobody else), the receive loop of
one socket (`serve_socket`), a request body read with its size limit, listings a page at a time
(their bounds and status filter checked), and a stored game's record once it is over
(`closed_game`, run in a worker thread). Used by gongzhu/routes.py (`/ws`) and fish/routes.py
(`/ws/fish`). Frames of one socket are read no faster than `socket_frames_per_s`, and those of
one client address no faster than `client_frames_per_s`, shared fairly between its sockets
(limits.py's SharedRate).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import islice

from fastapi import Request, WebSocket, WebSocketDisconnect
from starlette.requests import ClientDisconnect, HTTPConnection

from scrofazero.serve.common.messages import STATUSES
from scrofazero.serve.common.protocol import MAX_MESSAGE_BYTES, ProtocolError
from scrofazero.serve.common.replies import stamped

MAX_GAME_ID = 2**63 - 1  # the largest id the records' integer column holds
SEND_TIMEOUT_S = 5.0  # one send to a client taking longer drops it: it stopped reading
MAX_QUEUED = 256  # messages waiting for one client; one more drops it (it stopped reading)


@dataclass
class _Close:
    reason: str


_STOP = object()  # the socket is gone: the writer ends (SocketClient.stop)


class SocketClient:
    """A WebSocket at the hub. `send` never waits on the socket: it queues the message for this
    client's own writer task, which sends them in order, so a client that stops reading delays
    nobody but itself. A client with MAX_QUEUED messages waiting, or one of whose sends takes
    over SEND_TIMEOUT_S, is closed; once `closed`, `send` raises ConnectionError, which a table
    treats as a disconnect. `close` sends the messages already queued first. The answer to the
    frame being handled goes out stamped as such (replies.py)."""

    def __init__(self, ws: WebSocket):
        self.ws = ws
        self.address = client_address(ws)
        self.closed = False
        self._queue: asyncio.Queue = asyncio.Queue()
        self._writer = asyncio.ensure_future(self._write())
        self._closer: asyncio.Future | None = None

    async def send(self, msg: dict) -> None:
        if self.closed:
            raise ConnectionError("closed")
        if self._queue.qsize() >= MAX_QUEUED:
            self._drop(f"more than {MAX_QUEUED} messages unread: the client stopped reading")
            raise ConnectionError("the client stopped reading")
        self._queue.put_nowait(stamped(self, msg))

    async def close(self, reason: str) -> None:
        if not self.closed:
            self.closed = True
            self._queue.put_nowait(_Close(reason))

    def stop(self) -> None:
        """The socket is gone (its receive loop ended): write nothing more. The writer is both
        cancelled and handed _STOP: on Python 3.11 `wait_for` can swallow a cancellation
        that meets a send finishing, and the writer then waited on its queue for ever (the
        "Task was destroyed but it is pending! ... SocketClient._write()" of every such
        socket, and a server whose shutdown waited on it)."""
        self.closed = True
        self._queue.put_nowait(_STOP)
        self._writer.cancel()

    async def stopped(self) -> None:
        """After `stop`: wait (SEND_TIMEOUT_S at most) for the writer task and a close under
        way to end, so no task of the socket outlives it."""
        tasks = [t for t in (self._writer, self._closer) if t is not None and not t.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=SEND_TIMEOUT_S)

    def _drop(self, reason: str) -> None:
        self.closed = True
        self._writer.cancel()
        self._closer = asyncio.ensure_future(self._close_socket(reason))

    async def _write(self) -> None:
        while True:
            msg = await self._queue.get()
            if msg is _STOP:
                return
            if isinstance(msg, _Close):
                await self._close_socket(msg.reason)
                return
            try:
                await asyncio.wait_for(self.ws.send_json(msg), SEND_TIMEOUT_S)
            except asyncio.TimeoutError:
                self.closed = True
                await self._close_socket(f"a send took over {SEND_TIMEOUT_S:g} s: the client "
                                         "stopped reading")
                return
            except Exception:  # noqa: BLE001  (the socket is gone; its receive loop ends it)
                self.closed = True
                return

    async def _close_socket(self, reason: str) -> None:
        # closed by the other side, or it reads nothing: nothing more is written to it either way
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(code=4000, reason=reason[:120]), SEND_TIMEOUT_S)


async def limited_body(request: Request) -> bytes:
    """The request's body, refused as too_large as soon as it passes MAX_MESSAGE_BYTES (the
    rest is never read)."""
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_MESSAGE_BYTES:
                raise ProtocolError("too_large", f"a body of more than {MAX_MESSAGE_BYTES} "
                                                 f"bytes; the limit is {MAX_MESSAGE_BYTES}")
    except ClientDisconnect:  # e.g. closed by request_timeout_s: the answer goes nowhere
        raise ProtocolError("bad_message", "the client left before sending its body") from None
    return bytes(body)


FRAME_NOTICE_S = 10.0  # a socket held back by client_frames_per_s is told at most this often


async def serve_socket(ws: WebSocket, hub, limits=None) -> None:
    """One accepted WebSocket at `hub` (a Hub, or the Fish hub): every text or binary frame to
    `hub.receive` in order until the socket goes (or is dropped as a slow reader), then
    `hub.disconnect`. With `limits`, a frame past its address's client_frames_per_s waits its
    turn, and the socket is told so (a `limit` notice; the frame is handled after the wait)."""
    client = SocketClient(ws)
    told = -FRAME_NOTICE_S
    if limits is not None:
        limits.frames.open(client.address, client)
    try:
        while True:
            message = await ws.receive()
            if message["type"] == "websocket.disconnect":
                break
            text = message.get("text")
            if text is None:
                text = message.get("bytes") or b""
            wait = limits.frames.wait(client.address, client) if limits is not None else 0.0
            if wait:
                now = asyncio.get_running_loop().time()
                if now - told >= FRAME_NOTICE_S:
                    told = now
                    await client.send(hub.error("limit", frames_notice(limits.settings,
                                                                       client.address)
                                                ).to_message())
                await asyncio.sleep(wait)
            await hub.receive(client, text)
    except (WebSocketDisconnect, ConnectionError):  # gone, or dropped as a slow reader
        pass
    finally:
        if limits is not None:
            limits.frames.close(client.address, client)
        client.stop()
        await hub.disconnect(client)
        await client.stopped()


def frames_notice(cfg, address: str) -> str:
    """The `limit` notice of a socket read slower (PlayConfig `cfg`'s frame rates)."""
    return (f"more than {cfg.socket_frames_per_s:g} frames a second on this socket "
            f"(socket_frames_per_s), or {cfg.client_frames_per_s:g} from {address} in all "
            "(client_frames_per_s): its frames are read no faster")


def client_address(conn: HTTPConnection) -> str:
    """The peer address of a request or WebSocket (what the limits count by)."""
    client = getattr(conn, "client", None)
    return client.host if client is not None else "unknown"


DEFAULT_PAGE = 50  # a listing's page without a `limit` (at most the server's max_page_size)


def page_limit(limit: int | None, offset: int, most: int) -> int:
    """A listing's page size: `limit` (None: DEFAULT_PAGE, or `most` if smaller); refused
    (bad_message, naming the bounds) outside 1..most (the server's max_page_size), as is an
    `offset` outside 0..MAX_GAME_ID."""
    if limit is None:
        limit = min(DEFAULT_PAGE, most)
    if not 1 <= limit <= most:
        raise ProtocolError("bad_message", f"limit must be 1..{most} (the server's "
                                           f"max_page_size), got {limit}"[:300])
    if not 0 <= offset <= MAX_GAME_ID:
        raise ProtocolError("bad_message", f"offset must be 0..{MAX_GAME_ID}, "
                                           f"got {offset}"[:300])
    return limit


def check_status(status: str | None) -> None:
    """Refuse (bad_message) a listing's `status` filter that is no status (None: no filter)."""
    if status is not None and status not in STATUSES:
        raise ProtocolError("bad_message", f"status must be one of {', '.join(STATUSES)}, "
                                           f"got {status!r}"[:300])


def page(items: Iterable, offset: int, limit: int | None, most: int) -> list:
    """Items `offset`.. of a listing, page_limit(limit, offset, most) of them at most."""
    size = page_limit(limit, offset, most)
    # two slices: offset + size may pass sys.maxsize, islice's bound, where offset alone does not
    return list(islice(islice(items, offset, None), size))


def closed_game(read: Callable, game_id: int, what: str = "game") -> dict:
    """The stored game `game_id` (read(id) -> its dict or None, in a worker thread) once it is
    over: its record shows every hand, so one still in play is refused (in_play), as is an
    unknown or out-of-range id (not_found); `what` names the game in those errors."""
    if not 0 < game_id <= MAX_GAME_ID:  # beyond the database's integers: no such game
        raise ProtocolError("not_found", f"no {what} {game_id}")
    game = read(game_id)
    if game is None:
        raise ProtocolError("not_found", f"no {what} {game_id}")
    if game["status"] in ("waiting", "playing"):
        raise ProtocolError("in_play", f"{what} {game_id} is still in play; its record opens "
                                       "when it ends")
    return game
