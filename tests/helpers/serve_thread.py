"""A real play.py server (uvicorn on a loopback port) in a background thread, for tests.

`running_server(tmp_path, **settings)` yields a Server with its base URL, WebSocket URL and the
app's Hub (for tests that look inside or swap a bot); it stops the server on exit. Its Fish bots
move at once (fish_bot_delay 0) unless `settings` say otherwise. `Client` is a
small real WebSocket client that collects what the server sends; `http` and `answer` ask the
server's HTTP API.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import uvicorn
import websockets

from scrofazero.serve.app import create_app, uvicorn_config
from scrofazero.serve.common.config import PlayConfig

ROOT = Path(__file__).resolve().parents[2]
# The small shipped network: these tests are about the server, and it moves twice as fast.
CHECKPOINT = str(ROOT / "models" / "scrofazero_small.pt")


@dataclass
class Server:
    url: str
    ws: str
    app: object
    db: str

    @property
    def hub(self):
        return self.app.state.play["hub"]


@contextmanager
def running_server(tmp_path, db: str | None = None, **settings):
    cfg = replace(PlayConfig(), db=db or str(tmp_path / "records.sqlite"), checkpoint=CHECKPOINT,
                  **{"seed": 0, "fish_bot_delay": 0.0, "review_worlds": 16, **settings})
    app = create_app(cfg)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app, cfg))  # the options play.py runs with
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.02)
    try:
        yield Server(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws", app, cfg.db)
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        sock.close()


class Client:
    """A WebSocket client that keeps every message it receives."""

    def __init__(self, ws):
        self.ws = ws
        self.got: list[dict] = []

    @classmethod
    async def connect(cls, url: str) -> Client:
        return cls(await websockets.connect(url))

    async def send(self, msg) -> None:
        await self.ws.send(msg if isinstance(msg, (str, bytes)) else json.dumps(msg))

    async def next(self, kind: str | None = None, timeout: float = 10.0) -> dict:
        """The next message (of `kind`, skipping others)."""
        end = time.monotonic() + timeout
        while True:
            frame = await asyncio.wait_for(self.ws.recv(), max(0.01, end - time.monotonic()))
            msg = json.loads(frame)
            self.got.append(msg)
            if kind is None or msg["type"] == kind:
                return msg

    async def ask(self, msg, kind: str | None = None) -> dict:
        await self.send(msg)
        return await self.next(kind)

    async def close(self) -> None:
        await self.ws.close()


def http(server, path: str, body=None, **headers: str) -> tuple[int, object]:
    """(status, answer) of a GET, or of a POST of `body` (bytes as they are, anything else as
    JSON; sent as JSON unless a Content-Type is given; headers are keyword arguments,
    Content_Type for Content-Type). The answer is its JSON, or its text when it is not JSON;
    a refusal's is its error object."""
    data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"Content-Type": "application/json"} if body is not None else {}
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    req = urllib.request.Request(server.url + path, data=data, headers=sent,
                                 method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            text = resp.read().decode()
            return resp.status, (json.loads(text) if text[:1] in "[{" else text)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def answer(server, path: str, body=None):
    """The answer of `http(server, path, body)`, which must have succeeded (200)."""
    status, got = http(server, path, body)
    assert status == 200, (path, status, got)
    return got


def finished_game(server, hands: int = 1) -> dict:
    """A match of four Mr. Randoms (`hands` hands) played to its end: its first game's record,
    which names its match (`match_id`)."""
    made = answer(server, "/api/tables", {"type": "create", "seats": ["random"] * 4,
                                          "hands": hands})
    deadline = time.time() + 60
    while True:
        status, game = http(server, f"/api/games/{made['game_id']}")
        if status == 200 and answer(server, f"/api/matches/{game['match_id']}")["status"] \
                == "finished":
            return game
        assert time.time() < deadline, "the match did not finish within 60 s"
        time.sleep(0.05)
