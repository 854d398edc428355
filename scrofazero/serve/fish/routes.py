"""The Fish part of the web server: the page, the JSON API over the Fish tables and records, a
game's record as a page and the `/ws/fish` WebSocket (docs/protocol.md section "Fish"), one
FastAPI `APIRouter` made by `fish_router`, which app.py includes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response

from scrofazero.fish.players.roster import FISH_PLAYERS
from scrofazero.games.fish.cards import TABLE_SIZES
from scrofazero.games.fish.rules import CALL_MODES
from scrofazero.serve.common.limits import Reader, json_bytes
from scrofazero.serve.common.messages import PROTOCOL_VERSION
from scrofazero.serve.common.pages import problem_page, shown
from scrofazero.serve.common.protocol import ProtocolError
from scrofazero.serve.common.sockets import (
    check_status,
    client_address,
    closed_game,
    limited_body,
    page,
    page_limit,
    serve_socket,
)
from scrofazero.serve.fish.hub import FishHub
from scrofazero.serve.fish.messages import (
    FishCreate,
    FishCreated,
    FishProtocolError,
    parse_fish_message,
)
from scrofazero.serve.fish.record_page import record_page
from scrofazero.serve.fish.records import fish_export, fish_replay

# what the lobby says of a player whose roster line names a command-line option and a file
SERVER_ABOUT = {"learned": "the self-play trained scorer over the exact belief's features"}


def fish_options_answer(hub: FishHub, max_page_size: int) -> dict:
    """GET /api/fish/options: the protocol's version, the seat kinds and bots this server can
    seat, the tables' sizes, call modes and settings."""
    settings = hub.settings.table
    kinds = hub.seat_kinds()  # a learned seat only when its network loads
    return {"protocol": PROTOCOL_VERSION, "seat_kinds": list(kinds),
            "bots": [{"kind": s.name, "about": SERVER_ABOUT.get(s.name, s.about)}
                     for s in FISH_PLAYERS.values() if s.name in kinds],
            "table_sizes": list(TABLE_SIZES), "call_modes": list(CALL_MODES),
            "calls": settings.calls, "move_deadline_s": settings.move_deadline_s,
            "reconnect_grace_s": settings.reconnect_grace_s,
            "max_moves": settings.max_moves, "max_page_size": max_page_size}


async def create_fish_table_answer(fish_hub: Callable[[], FishHub], request: Request):
    """POST /api/fish/tables: the table made and its seats' tokens, or the Fish protocol's
    error object (429 for a limit, else 400)."""
    try:
        try:
            body = await limited_body(request)
        except ProtocolError as err:
            raise FishProtocolError(err.code, err.message) from None
        msg = parse_fish_message(body)
        if not isinstance(msg, FishCreate):
            raise FishProtocolError("bad_message",
                                    "POST /api/fish/tables takes a 'fish_create' message")
        table, tokens = await fish_hub().create_table(msg, client_address(request))
    except FishProtocolError as err:
        return JSONResponse(err.to_message(), status_code=429 if err.code == "limit" else 400)
    return FishCreated.of(table, tokens).model_dump(exclude={"v", "type"})


async def stored_answer(fish_hub: Callable[[], FishHub], reader: Reader, kind: str,
                        game_id: int, shape, media: str = "application/json") -> Response:
    """A finished Fish game's answer (`shape` of its record), computed off the event loop and
    kept once the game is over."""
    def compute():
        game = closed_game(fish_hub().records.game, game_id, "Fish game")
        return shape(game), True  # a Fish game is one hand: over is settled

    return Response(await reader.answer((kind, game_id), compute), media_type=media)


async def record_page_answer(fish_hub: Callable[[], FishHub], reader: Reader,
                             game_id: str) -> Response:
    """GET /fish/record/ID: the page of record_page.py, or a plain page that says why not."""
    if not game_id.isdecimal():
        return problem_page("No such Fish game", f"'{shown(game_id)}' is not a game "
                            "number: a record link reads /fish/record/N.", 400)
    try:
        return await stored_answer(fish_hub, reader, "fish_record", int(game_id),
                                   lambda g: record_page(g).encode(), "text/html; charset=utf-8")
    except ProtocolError as err:
        title = f"Fish game {game_id} is still in play" if err.code == "in_play" \
            else f"No Fish game {game_id}"
        return problem_page(title, f"{err.message}.", 409 if err.code == "in_play" else 404)


def fish_router(fish_hub: Callable[[], FishHub], static: Path, reader: Reader,
                max_page_size: int) -> APIRouter:
    """GET /fish, /fish/record/ID, /api/fish/..., and /ws/fish; `fish_hub()` gives the hub
    (made in the app's lifespan), `static` is the folder of the page's files, `reader` runs the
    reads of finished games off the event loop."""
    router = APIRouter()

    @router.get("/fish")
    async def fish_page():
        return FileResponse(static / "fish.html")

    @router.get("/api/fish/options")
    async def fish_options():
        return fish_options_answer(fish_hub(), max_page_size)

    @router.post("/api/fish/tables")
    async def create_fish_table(request: Request):
        return await create_fish_table_answer(fish_hub, request)

    @router.get("/api/fish/tables")
    async def fish_tables(offset: int = 0, limit: int | None = None):
        """The live Fish tables in the order they were made, a page at a time."""
        live = (t for t in fish_hub().tables.values() if t.status in ("waiting", "playing"))
        return [t.info() for t in page(live, offset, limit, max_page_size)]

    @router.get("/api/fish/games")
    async def fish_games(limit: int | None = None, status: str | None = None, offset: int = 0):
        """The Fish games in the records, newest first, a page at a time (no cards shown)."""
        size = page_limit(limit, offset, max_page_size)
        check_status(status)
        rows = await reader.run(fish_hub().records.list_games, size, status, offset)
        return Response(json_bytes(rows), media_type="application/json")

    @router.get("/api/fish/games/{game_id}")
    async def fish_game(game_id: int):
        return await stored_answer(fish_hub, reader, "fish_game", game_id, json_bytes)

    @router.get("/api/fish/games/{game_id}/replay")
    async def fish_game_replay(game_id: int):
        return await stored_answer(fish_hub, reader, "fish_replay", game_id,
                                   lambda g: json_bytes(fish_replay(g)))

    @router.get("/fish/record/{game_id}")
    async def fish_record(game_id: str):
        """A finished game's record as a page a person reads (record_page.py); a plain page
        says why when the id is not a number, names no game, or the game is in play."""
        return await record_page_answer(fish_hub, reader, game_id)

    @router.get("/api/fish/games/{game_id}/export", response_class=PlainTextResponse)
    async def fish_game_export(game_id: int):
        return await stored_answer(fish_hub, reader, "fish_export", game_id,
                                   lambda g: fish_export(g).encode(), "text/plain; charset=utf-8")

    @router.websocket("/ws/fish")
    async def fish_ws(ws: WebSocket):
        await ws.accept()
        await serve_socket(ws, fish_hub(), fish_hub().limits)

    return router
