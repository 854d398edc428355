"""A real play.py server (uvicorn on a loopback port) in a background thread, for tests.

`running_server(tmp_path, **settings)` yields a Server with its base URL, WebSocket URL and the
app's Hub (for tests that look inside or swap a bot); it stops the server on exit. `Client` is a
small real WebSocket client that collects what the server sends.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import uvicorn
import websockets

from scrofazero.serve.app import create_app, uvicorn_config
from scrofazero.serve.config import PlayConfig

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
                  seed=0, **settings)
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
