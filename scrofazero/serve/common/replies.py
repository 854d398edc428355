"""Which message answers which client frame (docs/protocol.md, "Answers and notices").

A socket's frames are handled one at a time, in order (sockets.serve_socket), and each gets
exactly one answer: the first message its handling sends to its own connection (its `welcome`,
`created`, `pong`, its own `played`, `asked` or `called`, or the `error` refusing it). That
message is sent stamped with `in_reply_to` (the frame's `type`, or INVALID for a frame that is
no message of the protocol) and the frame's `id` when it had a valid one, so a client that pairs
its requests with their answers stays in step. Nothing else is stamped: not what the handling
sends to other connections, not what reaches the connection later (other seats' moves, timers),
and not the notices (a `limit` of `client_frames_per_s`, `replaced`, `expired`).

`replying(conn)` marks the handling of one frame (a context variable, so the tasks and timers it
starts, which copy it, find the answer sent or the handling over; a frame a bot of ours sends
from inside it is handled inside its own); `stamped(conn, msg)` is what a socket sends.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from scrofazero.serve.common.messages import MAX_ID_CHARS, MAX_ID_INT
from scrofazero.serve.common.protocol import ProtocolError, load_json

INVALID = "invalid"  # in_reply_to of an answer to a frame that is no message of the protocol


class Reply:
    """The answer owed to one frame of `conn`; `to` says what it answers (its `in_reply_to` and
    `id`) once the frame is read."""

    def __init__(self, conn):
        self.conn = conn
        self.fields: dict | None = None
        self.owed = True  # until the answer is sent, or the handling ends

    def to(self, in_reply_to: str, request_id: str | int | None) -> None:
        self.fields = {"in_reply_to": in_reply_to}
        if request_id is not None:
            self.fields["id"] = request_id


_REPLY: ContextVar[Reply | None] = ContextVar("reply", default=None)


def request_of(text: str | bytes, kinds) -> tuple[str, str | int | None]:
    """(in_reply_to, id) of a refused frame: its `type` when it is one of `kinds` (else
    INVALID), and its `id` when that is one ClientMessage takes (else None)."""
    try:
        frame = load_json(text)
    except ProtocolError:
        return INVALID, None
    if not isinstance(frame, dict):
        return INVALID, None
    kind, request_id = frame.get("type"), frame.get("id")
    valid_id = (isinstance(request_id, str) and len(request_id) <= MAX_ID_CHARS) or (
        type(request_id) is int and abs(request_id) <= MAX_ID_INT)
    return (kind if isinstance(kind, str) and kind in kinds else INVALID,
            request_id if valid_id else None)


@contextmanager
def replying(conn) -> Iterator[Reply]:
    """The handling of one frame of `conn`: the first message sent to `conn` inside it is the
    frame's answer (stamped as the Reply yielded says, once the frame is read)."""
    reply = Reply(conn)
    token = _REPLY.set(reply)
    try:
        yield reply
    finally:
        reply.owed = False
        _REPLY.reset(token)


def stamped(conn, msg: dict) -> dict:
    """`msg` as it goes to `conn`: with `in_reply_to` (and `id`) when it is the answer owed to
    the frame of `conn` being handled (a copy: a table sends one dict to every seat)."""
    reply = _REPLY.get()
    if reply is None or not reply.owed or reply.conn is not conn or reply.fields is None:
        return msg
    reply.owed = False
    return {**msg, **reply.fields}
