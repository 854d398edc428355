"""The web server: the page, a small JSON API over the records, and the protocol's WebSocket.

`create_app` builds the FastAPI application around a Hub (tables, bots) and the records
database; `serve` runs it on uvicorn for `python play.py`. docs/protocol.md is the contract of
`/ws`; the page (static/) is one more client of it.
"""

from __future__ import annotations

import asyncio
import gc
import socket
from contextlib import asynccontextmanager
from pathlib import Path

import torch
import uvicorn
from fastapi import FastAPI, HTTPException, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles

from scrofazero.agents import PLAYERS
from scrofazero.nn.checkpoint import load_model
from scrofazero.serve.config import PlayConfig
from scrofazero.serve.hub import Hub, HubSettings, created
from scrofazero.serve.messages import PROTOCOL_VERSION, STATUSES, Create, seat_kinds
from scrofazero.serve.protocol import MAX_MESSAGE_BYTES, ProtocolError, parse_client_message
from scrofazero.serve.records import Records, export_text, replay_frames
from scrofazero.serve.table import TableSettings

STATIC = Path(__file__).with_name("static")
MAX_GAME_ID = 2**63 - 1  # the largest id the records' integer column holds
SEND_TIMEOUT_S = 10.0  # a client that stops reading this long is dropped: it cannot stall a table


class SocketClient:
    """A WebSocket at the hub. Sends are serialised per socket."""

    def __init__(self, ws: WebSocket):
        self.ws = ws
        self.lock = asyncio.Lock()
        self.closed = False

    async def send(self, msg: dict) -> None:
        if self.closed:
            raise ConnectionError("closed")
        async with self.lock:
            try:
                await asyncio.wait_for(self.ws.send_json(msg), SEND_TIMEOUT_S)
            except asyncio.TimeoutError:
                self.closed = True
                raise ConnectionError("the client stopped reading") from None

    async def close(self, reason: str) -> None:
        if not self.closed:
            self.closed = True
            try:
                await self.ws.close(code=4000, reason=reason)
            except RuntimeError:
                pass  # already closed by the other side


async def limited_body(request: Request) -> bytes:
    """The request's body, refused as too_large as soon as it passes MAX_MESSAGE_BYTES (the
    rest is never read)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_MESSAGE_BYTES:
            raise ProtocolError("too_large", f"a body of more than {MAX_MESSAGE_BYTES} bytes; "
                                             f"the limit is {MAX_MESSAGE_BYTES}")
    return bytes(body)


def hub_settings(cfg: PlayConfig) -> HubSettings:
    return HubSettings(checkpoint=cfg.checkpoint, bot_threads=cfg.bot_threads, seed=cfg.seed,
                       table=TableSettings(move_deadline_s=cfg.move_deadline_s,
                                           reconnect_grace_s=cfg.reconnect_grace_s,
                                           thinking=cfg.thinking))


def check_settings(cfg: PlayConfig) -> None:
    """Refuse bad settings by name before anything starts."""
    kinds = seat_kinds()
    if len(cfg.bots) != 3 or any(b not in kinds for b in cfg.bots):
        raise ValueError(f"play.bots must be 3 of {', '.join(kinds)}, got {list(cfg.bots)}")
    for key in ("move_deadline_s", "reconnect_grace_s"):
        if not getattr(cfg, key) > 0:
            raise ValueError(f"{key} must be > 0, got {getattr(cfg, key)}")
    if cfg.bot_threads < 1:
        raise ValueError(f"bot_threads must be >= 1, got {cfg.bot_threads}")
    if not 0 <= cfg.port < 65536:
        raise ValueError(f"port must be 0..65535, got {cfg.port}")


def create_app(cfg: PlayConfig) -> FastAPI:
    check_settings(cfg)
    state: dict = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        records = Records(cfg.db)
        state["abandoned"] = records.abandon_unfinished()  # left by a server that stopped
        state["hub"] = Hub(records, hub_settings(cfg))
        # compile and load every bot now: the server is ready only when a first move is fast
        state["warm_s"] = await asyncio.get_running_loop().run_in_executor(
            state["hub"].bot_threads, state["hub"].warm)
        # Everything imported so far (torch, numpy, the web stack) lives as long as the server:
        # keep it out of the garbage collector's full passes, which otherwise stalled every
        # table for ~0.2 s under load (benchmarks/serve.py's p99).
        gc.freeze()
        yield
        await state["hub"].shutdown()
        records.close()

    app = FastAPI(title="ScrofaZero tables", lifespan=lifespan)
    app.state.play = state
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def hub() -> Hub:
        return state["hub"]

    @app.get("/")
    async def index():
        return FileResponse(STATIC / "index.html")

    @app.get("/api/options")
    async def options():
        return {"protocol": PROTOCOL_VERSION, "seat_kinds": list(seat_kinds()),
                "bots": [{"kind": s.name, "name": s.title, "about": s.about}
                         for s in PLAYERS.values()],
                "bot_names": {s.name: s.title for s in PLAYERS.values()},
                "default_bots": list(cfg.bots),
                "checkpoint": cfg.checkpoint, "thinking": cfg.thinking,
                "move_deadline_s": cfg.move_deadline_s,
                "reconnect_grace_s": cfg.reconnect_grace_s,
                "standard_deals": len(hub().standard_deals())}

    @app.post("/api/tables")
    async def create_table(request: Request):
        try:
            body = await limited_body(request)
            msg = parse_client_message(body)
            if not isinstance(msg, Create):
                raise ProtocolError("bad_message", "POST /api/tables takes a 'create' message")
            table, tokens = await hub().create_table(msg)
        except ProtocolError as err:
            return JSONResponse(err.to_message(), status_code=400)
        return created(table, tokens).model_dump(exclude={"v", "type"})

    @app.get("/api/tables")
    async def tables():
        return [t.info() for t in hub().tables.values() if t.status in ("waiting", "playing")]

    @app.get("/api/games")
    async def games(limit: int = 50, status: str | None = None):
        if status is not None and status not in STATUSES:
            raise HTTPException(400, f"status must be one of {', '.join(STATUSES)}, "
                                     f"got {status!r}"[:300])
        return await hub().read("list_games", max(1, min(limit, 1000)), status)

    async def stored(game_id: int) -> dict:
        if not 0 < game_id <= MAX_GAME_ID:  # beyond the database's integers: no such game
            raise HTTPException(404, f"no game {game_id}")
        game = await hub().read("game", game_id)
        if game is None:
            raise HTTPException(404, f"no game {game_id}")
        if game["status"] in ("waiting", "playing"):
            # the record shows every hand: it opens only when the game is over
            raise HTTPException(409, f"game {game_id} is still in play; its record opens when "
                                     "it ends")
        return game

    @app.get("/api/games/{game_id}")
    async def game(game_id: int):
        return await stored(game_id)

    @app.get("/api/games/{game_id}/replay")
    async def replay(game_id: int):
        return replay_frames(await stored(game_id))

    @app.get("/api/games/{game_id}/export", response_class=PlainTextResponse)
    async def export(game_id: int):
        return export_text(await stored(game_id))

    @app.websocket("/ws")
    async def ws_endpoint(ws: WebSocket):
        await ws.accept()
        client = SocketClient(ws)
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                text = message.get("text")
                if text is None:
                    text = message.get("bytes") or b""
                await hub().receive(client, text)
        except WebSocketDisconnect:
            pass
        finally:
            client.closed = True
            await hub().disconnect(client)

    return app


def serve(cfg: PlayConfig) -> None:
    """Run the server until interrupted (python play.py)."""
    if cfg.torch_threads > 0:
        torch.set_num_threads(cfg.torch_threads)
    load_model(cfg.checkpoint)  # a missing or damaged network is refused now, by name
    app = create_app(cfg)
    sock = socket.socket(socket.AF_INET6 if ":" in cfg.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((cfg.host, cfg.port))
    except OSError as err:
        raise OSError(f"cannot serve on {cfg.host}:{cfg.port}: {err.strerror or err}") from None
    sock.listen(2048)  # from here a client's connection waits in the backlog until uvicorn runs
    host, port = sock.getsockname()[:2]
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(f"ScrofaZero tables: http://{shown}:{port}/  (records: {cfg.db}; Ctrl-C stops)",
          flush=True)
    # Messages are a few hundred bytes: compressing each cost more CPU than it saved (profiled
    # under benchmarks/serve.py).
    config = uvicorn.Config(app, log_level=cfg.log_level, ws_max_size=16 * MAX_MESSAGE_BYTES,
                            ws_per_message_deflate=False)
    uvicorn.Server(config).run(sockets=[sock])
