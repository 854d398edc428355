"""`python play.py` settings (configs/play.yaml extends this schema). No web imports here, so the
entry points can register the schema without the `[play]` extra installed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

from pydantic import Field

from scrofazero.settings import Count, NonNegative, NonNegativeInt, Positive, Seed, choice

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")  # uvicorn's
# the folder that holds the package: the shipped models/ are beside it in a checkout
PROJECT = Path(__file__).resolve().parents[3]  # serve/common/config.py -> the checkout


def shipped(path: str) -> str:
    """A model file named relative to the project (`models/...`) found wherever the server was
    started: `path` itself when it exists from the working directory (or is absolute), else
    the same path under the project's folder when it is there, else `path` unchanged (so the
    error names what was asked for)."""
    if Path(path).is_absolute() or Path(path).exists():
        return path
    beside = PROJECT / path
    return str(beside) if beside.exists() else path


@dataclass
class PlayConfig:
    host: str = "127.0.0.1"  # address to serve on (0.0.0.0 lets other machines in)
    port: Annotated[int, Field(ge=0, le=65535)] = 8000
    # ^ port to serve on (0: any free port, printed at start)
    db: str = "records/games.sqlite"  # a SQLite file, or any SQLAlchemy URL (postgresql://...)
    checkpoint: str = "models/scrofazero.pt"  # network of the ScrofaZero seats
    fish_checkpoint: str = "models/fish_learned.pt"
    # ^ scorer of the Fish `learned` seats (not loadable: those seats are not offered)
    bots: list[str] = field(default_factory=lambda: ["scrofazero", "scrofazero", "scrofazero"])
    # ^ the page's default for the three other seats: open or a registered player's name
    move_deadline_s: Positive = 120.0  # time for a move; then the lowest legal card is played
    reconnect_grace_s: NonNegative = 60.0
    # ^ a disconnected seat is held this long, then plays fallbacks
    thinking: bool = True  # new tables show what ScrofaZero was thinking (page can switch off)
    next_hand_s: Positive = 30.0  # between hands of a match: the next starts after this anyway
    idle_expire_s: Positive = 1800.0
    # ^ a table (Gongzhu or Fish) whose first hand has not started by then is closed
    fish_bot_delay: NonNegative = 1.0
    # ^ seconds our bots wait after a move before their ask or call at a Fish table with an
    #   open seat, so a person reads each move (0: none; tables of bots only never wait)
    bot_threads: Count = 2  # threads our bots think in
    torch_threads: NonNegativeInt = 1  # torch threads per bot decision (0: torch's default)
    seed: Seed | None = None  # seeds random deals and bots (None: fresh each start)
    log_level: Annotated[str, choice(*LOG_LEVELS)] = "warning"  # uvicorn's log level
    allowed_hosts: list[str] = field(default_factory=list)
    # ^ Host names served besides 127.0.0.1, localhost and `host` (needed with host=0.0.0.0;
    #   *.example.com: its subdomains; *: any). Other Host headers get 400 (DNS rebinding).
    allowed_origins: list[str] = field(default_factory=list)
    # ^ pages that may use the server besides http://NAME:PORT of the allowed hosts, e.g.
    #   https://games.example.com behind a proxy (*: any); other pages' Origin gets 403
    request_timeout_s: Positive = 10.0  # a connection must send a whole request within this
    keep_alive_s: Positive = 5.0  # an idle HTTP keep-alive connection is closed after this
    # --- limits (docs/play.md "Limits"); "per client" is per client address ---------------
    table_creates_per_minute: Positive = 60.0
    # ^ tables and matches one client creates (burst: as many)
    max_waiting_tables_per_client: Count = 20  # tables waiting for players one client has made
    max_waiting_tables: Count = 500
    # ^ tables waiting for players on the server, both games (when full, a newcomer's table
    #   takes the place of the oldest of the client holding the most)
    empty_table_expire_s: Positive = 300.0
    # ^ a waiting table nobody sits at (no open seat connected) is closed after this
    max_bot_tables_per_client: Count = 20
    # ^ tables with our bots and an open seat one client has in play (waiting or playing)
    max_bot_matches: Count = 2  # tables of bots only (no open seat) played at once
    review_threads: Count = 1
    # ^ threads reviews of a person's moves think in (GET /api/games/ID/review)
    review_worlds: Count = 256
    # ^ deals each reviewed move is judged on (more: less noise, slower; about 1.7 s per hand)
    max_reviews_queued: Annotated[int, Field(ge=1, le=10_000)] = 8
    # ^ reviews queued or under way on the server (past it: refused; finished ones are kept)
    max_reviews_queued_per_client: Annotated[int, Field(ge=1, le=10_000)] = 2
    # ^ reviews queued or under way that one client asked for (past it: refused)
    bot_match_threads: Count = 1
    # ^ threads the bots of those tables think in (apart from bot_threads)
    connection_requests_per_s: Positive = 20.0
    # ^ HTTP requests on one connection (past it: wait up to 1 s, then 429)
    client_requests_per_s: Positive = 50.0
    # ^ HTTP requests of one client in all, a backstop shared fairly between its connections
    socket_frames_per_s: Positive = 50.0  # WebSocket frames of one socket (past it: read slower)
    client_frames_per_s: Positive = 100.0
    # ^ WebSocket frames of one client in all, a backstop shared fairly between its sockets
    read_threads: Count = 2  # threads reading records, replays and exports off the event loop
    read_cache_mb: NonNegative = 64.0  # answers of finished games and matches kept in memory
    max_page_size: Count = 100  # the most items one listing returns (GET /api/tables, /api/games)
    debug: bool = False  # show tracebacks of user errors
