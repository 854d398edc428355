"""`python play.py` settings (configs/play.yaml extends this schema). No web imports here, so the
entry points can register the schema without the `[play]` extra installed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from scrofazero.settings import Count, NonNegative, NonNegativeInt, Positive, Seed, at_most, one_of

LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")  # uvicorn's


@dataclass
class PlayConfig:
    host: str = "127.0.0.1"  # address to serve on (0.0.0.0 lets other machines in)
    port: at_most(65535, low=0) = 8000  # port to serve on (0: any free port, printed at start)
    db: str = "records/games.sqlite"  # a SQLite file, or any SQLAlchemy URL (postgresql://...)
    checkpoint: str = "models/scrofazero.pt"  # network of the ScrofaZero seats
    bots: List[str] = field(default_factory=lambda: ["scrofazero", "scrofazero", "scrofazero"])
    # ^ the page's default for the three other seats: open or a registered player's name
    move_deadline_s: Positive = 120.0  # time for a move; then the lowest legal card is played
    reconnect_grace_s: NonNegative = 60.0  # a disconnected seat is held this long, then plays fallbacks
    thinking: bool = True  # new tables show what ScrofaZero was thinking (page can switch off)
    bot_threads: Count = 2  # threads our bots think in
    torch_threads: NonNegativeInt = 1  # torch threads per bot decision (0: torch's default)
    seed: Optional[Seed] = None  # seeds random deals and bots (None: fresh each start)
    log_level: one_of(*LOG_LEVELS) = "warning"  # uvicorn's log level
    debug: bool = False  # show tracebacks of user errors
