"""The Fish part of the web server: the page, the JSON API over the Fish records and the
`/ws/fish` WebSocket (docs/protocol.md section "Fish"), added to the app by `add_fish_routes`.
"""

from __future__ import annotations

from typing import Callable

from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse

from scrofazero.fish.players.roster import FISH_PLAYERS
from scrofazero.games.fish.cards import TABLE_SIZES
from scrofazero.games.fish.rules import CALL_MODES
from scrofazero.serve.fish_hub import FishHub, fish_created, make_fish_hub  # noqa: F401 (app.py)
from scrofazero.serve.fish_messages import (
    FishCreate,
    FishProtocolError,
    fish_seat_kinds,
    parse_fish_message,
)
from scrofazero.serve.fish_records import fish_export, fish_replay
from scrofazero.serve.messages import PROTOCOL_VERSION
from scrofazero.serve.protocol import ProtocolError

MAX_GAME_ID = 2**63 - 1  # the largest id the records' integer column holds


def add_fish_routes(app: FastAPI, fish_hub: Callable[[], FishHub], static) -> None:
    """Register GET /fish, /api/fish/..., and /ws/fish on `app`; `fish_hub()` gives the hub
    (made in the app's lifespan), `static` is the folder of the page's files."""
    # imported here: app.py imports this module to call this function
    from scrofazero.serve.app import SocketClient, limited_body

    @app.get("/fish")
    async def fish_page():
        return FileResponse(static / "fish.html")

    @app.get("/api/fish/options")
    async def fish_options():
        settings = fish_hub().settings.table
        return {"protocol": PROTOCOL_VERSION, "seat_kinds": list(fish_seat_kinds()),
                "bots": [{"kind": s.name, "about": s.about} for s in FISH_PLAYERS.values()],
                "table_sizes": list(TABLE_SIZES), "call_modes": list(CALL_MODES),
                "calls": settings.calls, "move_deadline_s": settings.move_deadline_s,
                "reconnect_grace_s": settings.reconnect_grace_s,
                "max_moves": settings.max_moves}

    @app.post("/api/fish/tables")
    async def create_fish_table(request: Request):
        try:
            try:
                body = await limited_body(request)
            except ProtocolError as err:
                raise FishProtocolError(err.code, err.message) from None
            msg = parse_fish_message(body)
            if not isinstance(msg, FishCreate):
                raise FishProtocolError("bad_message",
                                        "POST /api/fish/tables takes a 'fish_create' message")
            table, tokens = await fish_hub().create_table(msg)
        except FishProtocolError as err:
            return JSONResponse(err.to_message(), status_code=400)
        return fish_created(table, tokens).model_dump(exclude={"v", "type"})

    @app.get("/api/fish/tables")
    async def fish_tables():
        return [t.info() for t in fish_hub().tables.values()
                if t.status in ("waiting", "playing")]

    async def stored(game_id: int) -> dict:
        if not 0 < game_id <= MAX_GAME_ID:
            raise ProtocolError("not_found", f"no Fish game {game_id}")
        game = await fish_hub().read("game", game_id)
        if game is None:
            raise ProtocolError("not_found", f"no Fish game {game_id}")
        if game["status"] in ("waiting", "playing"):
            # the record shows every hand: it opens only when the game is over
            raise ProtocolError("in_play", f"Fish game {game_id} is still in play; its record "
                                           "opens when it ends")
        return game

    @app.get("/api/fish/games/{game_id}")
    async def fish_game(game_id: int):
        return await stored(game_id)

    @app.get("/api/fish/games/{game_id}/replay")
    async def fish_game_replay(game_id: int):
        return fish_replay(await stored(game_id))

    @app.get("/api/fish/games/{game_id}/export", response_class=PlainTextResponse)
    async def fish_game_export(game_id: int):
        return fish_export(await stored(game_id))

    @app.websocket("/ws/fish")
    async def fish_ws(ws: WebSocket):
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
                await fish_hub().receive(client, text)
        except (WebSocketDisconnect, ConnectionError):  # gone, or dropped as a slow reader
            pass
        finally:
            client.stop()
            await fish_hub().disconnect(client)
