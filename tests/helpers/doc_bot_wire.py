"""What the two bots written from docs/protocol.md alone share (doc_bot.py for Gongzhu,
doc_bot_fish.py for Fish): the socket plumbing and the guard on the fields they read.

Standard library and websockets only, like the bots: they model an outside author who has the
document and no project code. `Seen` is a received message that refuses every field its bot's
READS does not list, and notes each field read; `WireBot` sends and receives JSON frames
(logging each when given a log), makes a table, and plays a seat by handing every message to
its `on_<type>` handler; `record_example` and `write_example` capture one game through a real
server into the document (the server is imported for the capture only).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

import websockets


class DocMismatch(AssertionError):
    """The server did something other than docs/protocol.md says."""


class Seen(dict):
    """A received message that lets its bot read only the fields READS lists for its type, and
    notes each field read (`read`: (type, field) pairs). A bot's subclass sets READS (server
    message type -> the fields it reads) and BOT (its name, for the refusal)."""

    READS: dict[str, set[str]] = {}
    BOT = "the bot"
    read: set[tuple[str, str]]

    def __init__(self, data: dict, read: set[tuple[str, str]]):
        super().__init__(data)
        self.read = read

    def __getitem__(self, key):
        kind = dict.__getitem__(self, "type")
        if key != "type":
            if key not in self.READS.get(kind, ()):
                raise KeyError(f"{self.BOT} does not read {kind}.{key} (not in READS)")
            self.read.add((kind, key))
        return dict.__getitem__(self, key)


class WireBot:
    """One seat's socket. `log` (optional) collects every frame as ("> " sent | "< " received,
    text). A bot's subclass sets SEEN (its Seen), CREATE and CREATED (the message that makes a
    table and its answer), JOIN (the message that takes a seat) and UNTIL (the message its
    play ends with, by default)."""

    SEEN: type[Seen] = Seen
    CREATE = CREATED = JOIN = UNTIL = ""

    def __init__(self, log: list[tuple[str, str]] | None = None):
        self.log = log
        self.read: set[tuple[str, str]] = set()

    async def send(self, ws, msg: dict) -> None:
        text = json.dumps({"v": 1, **msg})
        if self.log is not None:
            self.log.append(("> ", text))
        await ws.send(text)

    async def receive(self, ws) -> Seen:
        text = await ws.recv()
        if self.log is not None:
            self.log.append(("< ", text))
        return self.SEEN(json.loads(text), self.read)

    async def create(self, ws, seats: list[str], **options) -> tuple[str, dict[str, str]]:
        """Make a table on this socket; returns its id and the open seats' tokens. The socket
        holds no seat yet."""
        await self.send(ws, {"type": self.CREATE, "seats": seats, **options})
        msg = await self.receive(ws)
        if msg["type"] != self.CREATED:
            raise DocMismatch(f"{self.CREATE} was answered with {dict(msg)}")
        return msg["table"], msg["tokens"]

    async def play(self, ws, table: str, seat: int, token: str, name: str,
                   until: str | None = None) -> dict:
        """Join `seat` on this socket and hand every message to its `on_<type>` handler until
        one of type `until` (UNTIL when not given); returns that message."""
        await self.send(ws, {"type": self.JOIN, "table": table, "seat": seat, "token": token,
                             "name": name})
        while True:
            msg = await self.receive(ws)
            handler = getattr(self, f"on_{msg['type']}", None)
            if handler is not None:
                await handler(ws, msg)
            if msg["type"] == (until or self.UNTIL):
                return dict(msg)


async def record_example(bot: WireBot, url: str, table: dict) -> list[tuple[str, str]]:
    """One game as a document shows it: make `table` on a socket, join seat 0 on that same
    socket, play to the end; every frame in order (`bot` must have a log)."""
    async with websockets.connect(url) as ws:
        table_id, tokens = await bot.create(ws, **table)
        await bot.play(ws, table_id, 0, tokens["0"], "docbot")
    return bot.log


def capture(record, path: str = "") -> list[tuple[str, str]]:
    """`record(url)`'s frames against a fresh real server (tests/helpers/serve_thread.py), the
    url its WebSocket /ws followed by `path`."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from serve_thread import running_server  # the server, for the capture only: the bot needs none

    with tempfile.TemporaryDirectory() as tmp, running_server(Path(tmp)) as server:
        return asyncio.run(record(server.ws + path))


def write_example(doc: Path, anchors: list[str], block: str) -> None:
    """Replace the first code block after the anchors (found one after the other) with
    `block`."""
    text = doc.read_text(encoding="utf-8")
    at = 0
    for anchor in anchors:
        at = text.index(anchor, at)
    start = text.index("```\n", at) + 4
    end = text.index("```", start)
    doc.write_text(text[:start] + block + "\n" + text[end:], encoding="utf-8")
