"""The base of every records table (the Gongzhu games in gongzhu/records.py, the Fish games in
fish/records.py): one declarative Base, so one `create_all` makes every table; the columns every
game and seat table starts with, and how a stored game's answer begins with them; the statuses
still in play; and how the `db` option becomes a SQLAlchemy URL and a SQLite connection is set
up.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from sqlalchemy import DateTime, Integer, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


def now() -> datetime:
    """The time every record is stamped with: now, in UTC."""
    return datetime.now(timezone.utc)


def iso_time(stamp: datetime | None) -> str | None:
    """A stored time as every answer gives it: ISO 8601 in UTC with its offset ("+00:00").
    SQLite hands back the naive UTC time it was given (it keeps no zone), PostgreSQL an aware
    one in the session's zone: both come out as the same UTC text."""
    if stamp is None:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    return stamp.astimezone(timezone.utc).isoformat()


class Base(DeclarativeBase):
    pass


FIRST, LAST = -1, 1  # sort_order of a mixin's columns: before or after the table's own


class GameColumns:
    """The first columns of every game table (games, fish_games): its table, where it stands."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, sort_order=FIRST)
    table_id: Mapped[str] = mapped_column(String(32), index=True, sort_order=FIRST)
    status: Mapped[str] = mapped_column(String(16), index=True,
                                        sort_order=FIRST)  # one of STATUSES
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=now,
                                                 sort_order=FIRST)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True,
                                                         sort_order=FIRST)


class SeatColumns:
    """Every column of a seat table (seats, fish_seats) but its game's foreign key, game_id,
    which comes second."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, sort_order=FIRST)
    seat: Mapped[int] = mapped_column(Integer, sort_order=LAST)
    kind: Mapped[str] = mapped_column(String(16), sort_order=LAST)  # open or a bot
    name: Mapped[str] = mapped_column(String(64), sort_order=LAST)


def game_head(game: GameColumns) -> dict:
    """The first fields of a stored game's answer (either game's): its id, table, status and
    times."""
    return {"id": game.id, "table": game.table_id, "status": game.status,
            "created_at": iso_time(game.created_at), "finished_at": iso_time(game.finished_at)}


def seat_list(seats: Sequence[SeatColumns]) -> list[dict]:
    """A stored game's seats as its answer lists them."""
    return [{"seat": s.seat, "kind": s.kind, "name": s.name} for s in seats]


LIVE = ("waiting", "playing", "between")  # statuses of what a running server still plays


class RecordsError(ValueError):
    """The database cannot be opened or used; the message names the URL."""


def database_url(db: str) -> str:
    """A SQLAlchemy URL from the `db` option: a URL as is, else a SQLite file path."""
    if "://" in db:
        return db
    path = Path(db).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def sqlite_pragmas(dbapi_connection, _record) -> None:
    # WAL: readers never block the writer; FULL: a commit is on disk (the WAL synced) before it
    # returns, so a power loss keeps every move a client was told of (NORMAL could lose the last).
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()
