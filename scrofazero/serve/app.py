"""The web server: both games' tables on one FastAPI application, and `serve`, which runs it on
uvicorn for `python play.py`.

`create_app` builds the application around the Gongzhu hub (tables, bots), the Fish hub and the
records database, with the guards both games share (common/web.py) and each game's routes, one
`APIRouter` per area (gongzhu/routes.py: tables, records, review; fish/routes.py: Fish).
docs/protocol.md is the contract of `/ws` and `/ws/fish`; the pages (static/) are clients of
them.
"""

from __future__ import annotations

import asyncio
import gc
import math
import socket
import sys
from contextlib import asynccontextmanager

import torch
import uvicorn
from fastapi import FastAPI

from scrofazero.eval.review import ReviewSettings, check_review
from scrofazero.nn.checkpoint import file_sha256, load_model
from scrofazero.serve.common.config import PlayConfig, shipped
from scrofazero.serve.common.database import OpenDatabase, open_database
from scrofazero.serve.common.guards import WILDCARD_ADDRESSES, check_allowed
from scrofazero.serve.common.limits import Limits, Reader
from scrofazero.serve.common.web import STATIC, add_guards, uvicorn_config
from scrofazero.serve.fish.hub import make_fish_hub
from scrofazero.serve.fish.routes import fish_router
from scrofazero.serve.gongzhu.hub import Hub, hub_settings
from scrofazero.serve.gongzhu.messages import seat_kinds
from scrofazero.serve.gongzhu.records import Records
from scrofazero.serve.gongzhu.reviews import Reviews
from scrofazero.serve.gongzhu.routes import (
    StoredGames,
    records_router,
    review_router,
    tables_router,
)


def check_play_config(cfg: PlayConfig) -> None:
    """Refuse, by name and before anything starts, what PlayConfig's types do not bound: the
    bots' kinds, times, counts and rates, the port and the allowed hosts and origins."""
    kinds = seat_kinds()
    if len(cfg.bots) != 3 or any(b not in kinds for b in cfg.bots):
        raise ValueError(f"play.bots must be 3 of {', '.join(kinds)}, got {list(cfg.bots)}")
    for key in ("move_deadline_s", "next_hand_s", "idle_expire_s", "empty_table_expire_s",
                "request_timeout_s", "keep_alive_s"):
        if not 0 < getattr(cfg, key) < math.inf:
            raise ValueError(f"{key} must be a number of seconds > 0, got {getattr(cfg, key)}")
    if not 0 <= cfg.reconnect_grace_s < math.inf:
        raise ValueError(f"reconnect_grace_s must be a number of seconds >= 0, got "
                         f"{cfg.reconnect_grace_s}")
    for key in ("bot_threads", "bot_match_threads", "review_threads", "read_threads",
                "max_bot_matches", "max_waiting_tables", "max_waiting_tables_per_client",
                "max_bot_tables_per_client", "max_reviews_queued",
                "max_reviews_queued_per_client", "max_page_size"):
        if getattr(cfg, key) < 1:
            raise ValueError(f"{key} must be >= 1, got {getattr(cfg, key)}")
    for key in ("table_creates_per_minute", "connection_requests_per_s", "client_requests_per_s",
                "socket_frames_per_s", "client_frames_per_s"):
        if not 0 < getattr(cfg, key) < math.inf:
            raise ValueError(f"{key} must be a number > 0, got {getattr(cfg, key)}")
    if not 0 <= cfg.read_cache_mb < math.inf:
        raise ValueError(f"read_cache_mb must be >= 0, got {cfg.read_cache_mb}")
    if not 0 <= cfg.port < 65536:
        raise ValueError(f"port must be 0..65535, got {cfg.port}")
    check_allowed(cfg.allowed_hosts, cfg.allowed_origins)
    try:
        check_review(ReviewSettings(worlds=cfg.review_worlds))
    except ValueError as err:
        raise ValueError(str(err).replace("review.worlds", "review_worlds")) from None


def network_digest(path: str) -> str:
    """The network file's digest, which kept reviews are decided by ("" when it cannot be
    read: its seats and reviews are refused by name then)."""
    try:
        return file_sha256(path)
    except OSError:
        return ""


def create_app(cfg: PlayConfig, database: OpenDatabase | None = None) -> FastAPI:
    """The application; `database` is the records database already claimed (serve), else the
    lifespan claims cfg.db (common/database.py's open_database: refused while another server
    holds it)."""
    check_play_config(cfg)
    limits = Limits(cfg)
    reader = Reader(cfg.read_threads, int(cfg.read_cache_mb * 2**20))
    state: dict = {"limits": limits, "reader": reader}

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        db = database or open_database(cfg.db, Records)
        try:
            state["abandoned"] = db.abandoned  # left by a server that stopped
            state["records"] = db.records
            state["hub"] = Hub(db.records, hub_settings(cfg), limits)
            review = ReviewSettings(worlds=cfg.review_worlds)
            state["reviews"] = Reviews(
                state["hub"].model, cfg.review_threads, settings=review,
                max_queued=cfg.max_reviews_queued,
                max_queued_per_client=cfg.max_reviews_queued_per_client,
                network=network_digest(state["hub"].settings.checkpoint),
                writer=state["hub"].db_thread)
            # the Fish records share the database and its one writer thread (fish/hub.py)
            state["fish_hub"] = make_fish_hub(cfg, db.records, state["hub"].db_thread, limits)
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
    add_guards(app, cfg, limits)

    def hub() -> Hub:
        return state["hub"]

    stored = StoredGames(lambda: state["records"], reader)
    app.include_router(fish_router(lambda: state["fish_hub"], STATIC, reader, cfg.max_page_size))
    app.include_router(tables_router(cfg, hub, stored, STATIC, limits))
    app.include_router(records_router(stored, cfg.max_page_size))
    app.include_router(review_router(stored, lambda: state["reviews"]))
    return app


def serve(cfg: PlayConfig) -> None:
    """Run the server until interrupted (python play.py)."""
    check_play_config(cfg)
    # the records first: a database another server holds, or an unusable one, is refused now
    database = open_database(cfg.db, Records)
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
