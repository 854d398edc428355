"""The web server: the page, a small JSON API over the records, and the protocol's WebSocket.

`create_app` builds the FastAPI application around a Hub (tables, bots) and the records
database; `serve` runs it on uvicorn for `python play.py`. docs/protocol.md is the contract of
`/ws`; the page (static/) is one more client of it.
"""

from __future__ import annotations

import asyncio
import gc
import math
import socket
import sys
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Callable

import torch
import uvicorn
from fastapi import FastAPI, Request, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

from scrofazero.agents import PLAYERS
from scrofazero.nn.checkpoint import load_model
from scrofazero.serve.config import PlayConfig, shipped
from scrofazero.serve.database import OpenDatabase, open_database
from scrofazero.serve.guards import (
    WILDCARD_ADDRESSES,
    OriginGuard,
    RequestRate,
    SecurityHeaders,
    allowed_hosts,
    check_allowed,
    request_timeout_protocol,
)
from scrofazero.serve.fish_hub import make_fish_hub
from scrofazero.serve.fish_routes import add_fish_routes
from scrofazero.serve.hub import Hub, HubSettings, created
from scrofazero.serve.messages import PROTOCOL_VERSION, STATUSES, Create, Error, seat_kinds
from scrofazero.serve.pages import problem_page, shown
from scrofazero.serve.protocol import (
    MAX_MESSAGE_BYTES,
    ProtocolError,
    parse_claim,
    parse_client_message,
)
from scrofazero.serve.limits import Limits, Reader, json_bytes
from scrofazero.serve.reviews import REVIEWER, Reviews
from scrofazero.serve.records import LIVE, Records, export_text, game_settled, replay_frames
from scrofazero.serve.sockets import (
    MAX_GAME_ID,
    client_address,
    closed_game,
    limited_body,
    page,
    page_size,
    serve_socket,
)
from scrofazero.serve.table import TableSettings

STATIC = Path(__file__).with_name("static")
# the HTTP status of an error code over HTTP (every other code: 400)
HTTP_STATUS = {"unknown_table": 404, "not_found": 404, "not_public": 403, "seat_taken": 409,
               "in_play": 409, "limit": 429}
def http_error(err: ProtocolError) -> JSONResponse:
    """A refusal over HTTP: the protocol's error object, with the code's HTTP status."""
    return JSONResponse(err.to_message(), status_code=HTTP_STATUS.get(err.code, 400))


def add_error_answers(app: FastAPI) -> None:
    """Every refusal of a route, the framework's own too (no such path, a query parameter of
    the wrong type), is answered with the protocol's error object."""

    @app.exception_handler(ProtocolError)
    async def refused(_request, err: ProtocolError):
        return http_error(err)

    @app.exception_handler(HTTPException)
    async def framework_refused(request: Request, err: HTTPException):
        if err.status_code == 404 and not request.url.path.startswith(("/api/", "/ws")):
            # a person's browser at a wrong address: a page that says so (the API keeps JSON)
            return problem_page("No such page", f"There is no page at "
                                f"{shown(request.url.path, 80)} on this server.")
        code = "not_found" if err.status_code == 404 else "bad_message"
        return JSONResponse(Error(code=code, message=str(err.detail)).model_dump(),
                            status_code=err.status_code, headers=err.headers)

    @app.exception_handler(RequestValidationError)
    async def bad_parameter(_request, err: RequestValidationError):
        problem = err.errors()[0]
        name = ".".join(str(p) for p in problem["loc"][1:]) or "the request"
        message = f"{problem['loc'][0]} parameter '{name}': {problem['msg']}, got " \
                  f"{problem.get('input')!r}"
        return http_error(ProtocolError("bad_message", message[:300]))


def hub_settings(cfg: PlayConfig) -> HubSettings:
    return HubSettings(checkpoint=shipped(cfg.checkpoint), bot_threads=cfg.bot_threads, seed=cfg.seed,
                       bot_match_threads=cfg.bot_match_threads,
                       table=TableSettings(move_deadline_s=cfg.move_deadline_s,
                                           reconnect_grace_s=cfg.reconnect_grace_s,
                                           thinking=cfg.thinking, next_hand_s=cfg.next_hand_s,
                                           idle_expire_s=cfg.idle_expire_s))


def check_play_config(cfg: PlayConfig) -> None:
    """Refuse, by name and before anything starts, what PlayConfig's types do not bound: the
    bots' kinds, times, counts and rates, the port and the allowed hosts and origins."""
    kinds = seat_kinds()
    if len(cfg.bots) != 3 or any(b not in kinds for b in cfg.bots):
        raise ValueError(f"play.bots must be 3 of {', '.join(kinds)}, got {list(cfg.bots)}")
    for key in ("move_deadline_s", "next_hand_s", "idle_expire_s", "request_timeout_s",
                "keep_alive_s"):
        if not 0 < getattr(cfg, key) < math.inf:
            raise ValueError(f"{key} must be a number of seconds > 0, got {getattr(cfg, key)}")
    if not 0 <= cfg.reconnect_grace_s < math.inf:
        raise ValueError(f"reconnect_grace_s must be a number of seconds >= 0, got "
                         f"{cfg.reconnect_grace_s}")
    for key in ("bot_threads", "bot_match_threads", "review_threads", "read_threads",
                "max_bot_matches", "max_waiting_tables", "max_waiting_tables_per_client",
                "max_page_size"):
        if getattr(cfg, key) < 1:
            raise ValueError(f"{key} must be >= 1, got {getattr(cfg, key)}")
    for key in ("table_creates_per_minute", "client_requests_per_s", "client_frames_per_s"):
        if not 0 < getattr(cfg, key) < math.inf:
            raise ValueError(f"{key} must be a number > 0, got {getattr(cfg, key)}")
    if not 0 <= cfg.read_cache_mb < math.inf:
        raise ValueError(f"read_cache_mb must be >= 0, got {cfg.read_cache_mb}")
    if not 0 <= cfg.port < 65536:
        raise ValueError(f"port must be 0..65535, got {cfg.port}")
    check_allowed(cfg.allowed_hosts, cfg.allowed_origins)


def create_app(cfg: PlayConfig, database: OpenDatabase | None = None) -> FastAPI:
    """The application; `database` is the records database already claimed (serve), else the
    lifespan claims cfg.db (database.open_database: refused while another server holds it)."""
    check_play_config(cfg)
    limits = Limits(cfg)
    reader = Reader(cfg.read_threads, int(cfg.read_cache_mb * 2**20))
    state: dict = {"limits": limits, "reader": reader}

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        db = database or open_database(cfg.db)
        try:
            state["abandoned"] = db.abandoned  # left by a server that stopped
            state["records"] = db.records
            state["hub"] = Hub(db.records, hub_settings(cfg), limits)
            state["reviews"] = Reviews(lambda: state["hub"].make_bot(REVIEWER),
                                       cfg.review_threads)
            state["fish_hub"] = make_fish_hub(cfg, db.records, state["hub"],
                                              limits)  # fish_routes.py
            # compile and load every bot now: the server is ready only when a first move is fast
            state["warm_s"] = await asyncio.get_running_loop().run_in_executor(
                state["hub"].bot_threads, state["hub"].warm)
            # the Fish seats this server can fill (a learned seat needs its network)
            await asyncio.get_running_loop().run_in_executor(
                state["fish_hub"].bot_threads, state["fish_hub"].seat_kinds)
            # Everything imported so far (torch, numpy, the web stack) lives as long as the
            # server: keep it out of the garbage collector's full passes, which otherwise
            # stalled every table for ~0.2 s under load (benchmarks/serve.py's p99).
            gc.freeze()
            yield
            await state["fish_hub"].shutdown()
            await state["hub"].shutdown()
            state["reviews"].shutdown()
        finally:
            db.close()

    app = FastAPI(title="ScrofaZero tables", lifespan=lifespan)
    app.state.play = state
    hosts = allowed_hosts(cfg.host, cfg.allowed_hosts)
    app.add_middleware(OriginGuard, hosts=hosts, origins=cfg.allowed_origins)
    app.add_middleware(RequestRate, rate=limits.requests, per_s=cfg.client_requests_per_s)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=hosts, www_redirect=False)
    app.add_middleware(SecurityHeaders)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    add_error_answers(app)

    def hub() -> Hub:
        return state["hub"]

    def records() -> Records:
        return state["records"]

    add_fish_routes(app, lambda: state["fish_hub"], STATIC, reader, cfg.max_page_size)

    @app.get("/")
    async def index(request: Request):
        problem = await url_problem(request.query_params)
        return problem or FileResponse(STATIC / "index.html")

    async def url_problem(params) -> Response | None:
        """A plain page when the page's URL cannot be served (a replay id that is not a
        number or names no game, a table not on the server, a seat not 0..3); else None."""
        for kind, what in (("replay", "game"), ("match", "match")):
            if kind not in params:
                continue
            text = params[kind]
            if not text.isdecimal() or not 0 < int(text) <= MAX_GAME_ID:
                return problem_page(f"No such {what}", f"'{shown(text)}' is not a {what} "
                                    f"number: a replay link reads /?{kind}=N, N a {what}'s "
                                    "number from the lobby's list.", 400)
            try:
                if kind == "replay":
                    await reader.answer(("game", int(text)),
                                        stored_answer("game", int(text), json_bytes))
                else:
                    await reader.answer(("match", int(text)),
                                        lambda: match_answer(int(text)))
            except ProtocolError as err:
                title = f"{what.capitalize()} {text} is still in play" \
                    if err.code == "in_play" else f"No {what} {text}"
                return problem_page(title, f"{err.message}.", HTTP_STATUS.get(err.code, 400))
            return None
        if "table" in params:
            table, seat = params["table"], params.get("seat", "")
            if table not in hub().tables:
                return problem_page("No such table", f"There is no table '{shown(table)}' on "
                                    "this server: it may have ended and closed, the server may "
                                    "have restarted, or the link is mistyped.")
            if seat not in ("0", "1", "2", "3"):
                return problem_page("No such seat", f"A table's seats are 0, 1, 2 and 3, not "
                                    f"'{shown(seat)}': check the join link you were given.", 400)
        return None

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
        msg = parse_client_message(await limited_body(request))
        if not isinstance(msg, Create):
            raise ProtocolError("bad_message", "POST /api/tables takes a 'create' message")
        table, tokens = await hub().create_table(msg, client_address(request))
        return created(table, tokens).model_dump(exclude={"v", "type"})

    @app.get("/api/tables")
    async def tables(offset: int = 0, limit: int = 50, public: bool = False):
        """The live tables in the order they were made, a page at a time (public=true: only
        public tables with an open seat, what the lobby lists)."""
        live = (t for t in hub().tables.values() if t.status in ("waiting", "playing", "between")
                and (not public or (t.rules.public and t.open_seats())))
        return [t.info() for t in page(live, offset, limit, cfg.max_page_size)]

    @app.get("/api/games")
    async def games(limit: int = 50, status: str | None = None, offset: int = 0):
        if status is not None and status not in STATUSES:
            raise ProtocolError("bad_message", f"status must be one of {', '.join(STATUSES)}, "
                                               f"got {status!r}"[:300])
        rows = await reader.run(records().list_games, page_size(limit, cfg.max_page_size),
                                status, max(offset, 0))
        return Response(json_bytes(rows), media_type="application/json")

    def stored_answer(kind: str, game_id: int, shape) -> Callable:
        """A finished game's answer (`shape` of its record), computed off the event loop."""
        def compute():
            game = closed_game(records().game, game_id)
            return shape(game), game_settled(records(), game)
        return compute

    async def answer(kind: str, game_id: int, shape, media: str = "application/json"):
        body = await reader.answer((kind, game_id), stored_answer(kind, game_id, shape))
        return Response(body, media_type=media)

    @app.get("/api/games/{game_id}")
    async def game(game_id: int):
        return await answer("game", game_id, json_bytes)

    @app.get("/api/games/{game_id}/replay")
    async def replay(game_id: int):
        return await answer("replay", game_id, lambda g: json_bytes(replay_frames(g)))

    @app.get("/api/games/{game_id}/export", response_class=PlainTextResponse)
    async def export(game_id: int):
        return await answer("export", game_id, lambda g: export_text(g).encode(),
                            "text/plain; charset=utf-8")

    def review_seat(seat: int) -> int:
        if not 0 <= seat < 4:
            raise ProtocolError("bad_message", f"seat must be 0..3, got {seat}")
        return seat

    @app.get("/api/games/{game_id}/review")
    async def game_review(game_id: int, seat: int):
        """The review of `seat`'s moves in a finished game, started by the first ask."""
        review_seat(seat)
        game = await reader.run(closed_game, records().game, game_id)
        return state["reviews"].ask(game, seat)

    @app.get("/api/matches/{match_id}/review")
    async def match_review(match_id: int, seat: int):
        """The reviews of `seat` in a match's finished hands, and the match's summary."""
        review_seat(seat)

        def finished_games() -> list[dict]:
            return [records().game(g["id"]) for g in stored_match(match_id)["games"]
                    if g["status"] not in ("waiting", "playing")]

        games = await reader.run(finished_games)
        return {"match_id": match_id, **state["reviews"].ask_match(games, seat)}

    @app.post("/api/tables/{table_id}/claim")
    async def claim(table_id: str, request: Request):
        asked = parse_claim(await limited_body(request))
        token = await hub().claim(table_id, asked.seat, asked.name)
        return {"seat": asked.seat, "token": token}

    def stored_match(match_id: int) -> dict:
        """The match `match_id` (in a worker thread)."""
        match = records().match(match_id) if 0 < match_id <= MAX_GAME_ID else None
        if match is None:
            raise ProtocolError("not_found", f"no match {match_id}")
        return match

    def match_answer(match_id: int) -> tuple[bytes, bool]:
        match = stored_match(match_id)
        return json_bytes(match), match["status"] not in LIVE

    def match_replay_answer(match_id: int) -> tuple[bytes, bool]:
        """Every hand of the match that is over (a hand in play opens when it ends)."""
        found = stored_match(match_id)
        games = [records().game(g["id"]) for g in found["games"]
                 if g["status"] not in ("waiting", "playing")]
        return (json_bytes({"match": found, "hands": [replay_frames(g) for g in games]}),
                found["status"] not in LIVE)

    @app.get("/api/matches/{match_id}")
    async def match(match_id: int):
        body = await reader.answer(("match", match_id), lambda: match_answer(match_id))
        return Response(body, media_type="application/json")

    @app.get("/api/matches/{match_id}/replay")
    async def match_replay(match_id: int):
        body = await reader.answer(("match_replay", match_id),
                                   lambda: match_replay_answer(match_id))
        return Response(body, media_type="application/json")

    @app.websocket("/ws")
    async def ws_endpoint(ws: WebSocket):
        await ws.accept()
        await serve_socket(ws, hub(), limits)

    return app


def uvicorn_config(app: FastAPI, cfg: PlayConfig) -> uvicorn.Config:
    """How uvicorn runs the app: a whole request within request_timeout_s (guards.py), idle
    keep-alive connections closed after keep_alive_s."""
    # Messages are a few hundred bytes: compressing each cost more CPU than it saved (profiled
    # under benchmarks/serve.py).
    return uvicorn.Config(app, log_level=cfg.log_level, ws_max_size=16 * MAX_MESSAGE_BYTES,
                          ws_per_message_deflate=False,
                          http=request_timeout_protocol(cfg.request_timeout_s),
                          timeout_keep_alive=cfg.keep_alive_s)


def serve(cfg: PlayConfig) -> None:
    """Run the server until interrupted (python play.py)."""
    check_play_config(cfg)
    # the records first: a database another server holds, or an unusable one, is refused now
    database = open_database(cfg.db)
    try:
        _serve(cfg, database)
    finally:
        database.close()


def _serve(cfg: PlayConfig, database: OpenDatabase) -> None:
    if cfg.torch_threads > 0:
        torch.set_num_threads(cfg.torch_threads)
    load_model(shipped(cfg.checkpoint))  # a missing or damaged network is refused now, by name
    app = create_app(cfg, database)
    sock = socket.socket(socket.AF_INET6 if ":" in cfg.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((cfg.host, cfg.port))
    except OSError as err:
        raise OSError(f"cannot serve on {cfg.host}:{cfg.port}: {err.strerror or err}") from None
    sock.listen(2048)  # from here a client's connection waits in the backlog until uvicorn runs
    host, port = sock.getsockname()[:2]
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(f"ScrofaZero tables: http://{shown}:{port}/  (records: {database.shown}; Ctrl-C "
          "stops)", flush=True)
    if cfg.host in WILDCARD_ADDRESSES and not cfg.allowed_hosts:
        print(f"note: host={cfg.host} lets other machines in, but only under the names in "
              "allowed_hosts (now the loopback names): add yours, e.g. "
              "allowed_hosts=[games.example.com,192.168.1.5]", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn_config(app, cfg)).run(sockets=[sock])
