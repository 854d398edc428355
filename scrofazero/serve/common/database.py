"""The records database as the server claims it: one server per database, and an unusable one
refused by name before anything is served.

`open_database(db)` locks the database for this process, opens the records, and marks the games
a stopped server left waiting or playing as abandoned (safe only under the lock: they are no
other server's live games). A SQLite file is locked by the kernel's exclusive flock on the
database file itself, so the lock belongs to the file, not to the name it was opened by: a
symlink, a hard link, a relative path or a `file:` URI of the same file all meet the same lock
(flock and SQLite's own fcntl locks are independent on Linux; the kernel drops the flock whenever
the process ends, even on kill -9). Which file that is, SQLite itself says (`PRAGMA
database_list` on a connection the driver opened from the URL), never the URL's options read
here: the driver ignores `mode=memory` without `uri=true` and opens the file. An in-memory (or
temporary) database, whose main file SQLite names as empty, is refused: each connection, and so
each of the server's threads, would get its own empty database. The holder's pid is read from
/proc/locks. A PostgreSQL
database is locked by a session advisory lock on a connection held while the server runs; any
other SQLAlchemy database by a row lock (`SELECT ... FOR UPDATE NOWAIT` on the one row of
`server_claim`) in a transaction held open while the server runs, dropped by the database when
the connection ends. Every failure is a RecordsError (a ValueError: one line and exit status 2
from play.py) naming the URL, password hidden.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from sqlalchemy import Column, Integer, MetaData, Table, create_engine, select, text
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from scrofazero.serve.common.records import RecordsError, database_url

# pg_try_advisory_lock's key: any fixed 64-bit number, the same for every server of this project
ADVISORY_KEY = 0x5C0F_A2E0_7AB1_E500


# the one-row table whose row lock claims a database of any other backend (not SQLite, not
# PostgreSQL): kept apart from the records' models, created when first needed
CLAIM = Table("server_claim", MetaData(), Column("id", Integer, primary_key=True))


class Records(Protocol):
    """What the claim needs of the records a server keeps (gongzhu/records.py's Records, whose
    engine the Fish records share): the engine, marking a stopped server's games, closing."""

    engine: Engine

    def abandon_unfinished(self) -> int: ...

    def close(self) -> None: ...


R = TypeVar("R", bound=Records)  # the records class a server opens (gongzhu/records.py's)


class DatabaseInUse(RecordsError):
    """Another live server holds the database."""


class FileLock:
    """An exclusive flock on a SQLite database file (created empty if missing: SQLite takes an
    empty file as a new database), keyed by the kernel on the file itself."""

    def __init__(self, path: Path, shown: str):
        self.path = path
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = lock_owner(os.fstat(fd))
            os.close(fd)
            who = f"process {owner}" if owner is not None else "another process"
            raise DatabaseInUse(f"the records database {shown} is in use by {who} (another "
                                f"python play.py? it holds the file {path.resolve()}): stop it, "
                                "or choose another db=") from None
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def lock_owner(st: os.stat_result, locks: str = "/proc/locks") -> int | None:
    """The pid holding a flock on the file of `st` (Linux's /proc/locks), else None."""
    inode = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    try:
        lines = Path(locks).read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if "->" in fields:  # a process waiting for the lock, not holding it
            continue
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == inode:
            try:
                return int(fields[4])
            except ValueError:
                return None
    return None


def sqlite_file(url: URL) -> Path:
    """The file SQLite opens for `url`, as SQLite itself names it (the main database of
    `PRAGMA database_list` on a connection the driver opens with the URL's own options; nothing
    is written). An in-memory or temporary database (no file) is refused: the server reads and
    writes from several threads, and each connection would be a database of its own."""
    probe = create_engine(url, poolclass=NullPool)
    try:
        with probe.connect() as connection:
            rows = connection.exec_driver_sql("PRAGMA database_list").fetchall()
    finally:
        probe.dispose()
    name = next((row[2] for row in rows if row[1] == "main"), "")
    if not name:
        raise RecordsError("an in-memory SQLite database is one database per connection, and "
                           "the server reads and writes from several threads (each would see "
                           "its own, empty one): give a file, e.g. db=/tmp/games.sqlite")
    return Path(name)


class OpenDatabase(Generic[R]):
    """The records of one claimed database. `close` releases the claim (idempotent)."""

    def __init__(self, records: R, shown: str, lock: FileLock | None,
                 held: Connection | None, abandoned: int):
        self.records = records
        self.shown = shown  # the URL as messages show it (no password)
        self.abandoned = abandoned  # games a stopped server left, now marked abandoned
        self._lock = lock
        self._held = held

    def close(self) -> None:
        if self._held is not None:
            self._held.close()  # ends the session, and with it the advisory lock
            self._held = None
        self.records.close()
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def open_database(db: str, open_records: Callable[[str], R]) -> OpenDatabase[R]:
    """Claim and open the records database `db` (a SQLite path or a SQLAlchemy URL) with
    `open_records(db)`; raises RecordsError (DatabaseInUse when another server holds it),
    changing nothing then."""
    shown = db
    try:
        url = make_url(database_url(db))
        if "://" in db:  # a file path is shown as given
            shown = url.render_as_string(hide_password=True)
        lock = None
        if url.get_backend_name() == "sqlite":
            lock = FileLock(sqlite_file(url), shown)
    except DatabaseInUse:
        raise
    except (SQLAlchemyError, OSError, RecordsError) as err:
        raise RecordsError(f"cannot open the records database {shown}: {_one_line(err)}") from None
    records = held = None
    try:
        records = open_records(db)
        dialect = records.engine.dialect.name
        if dialect == "postgresql":
            held = _advisory_lock(records, shown)
        elif dialect != "sqlite":
            held = _row_lock(records, shown)
        abandoned = records.abandon_unfinished()  # also proves the database can be written
    except DatabaseInUse:
        _release(records, lock)
        raise
    except (RecordsError, SQLAlchemyError, ImportError, OSError) as err:
        _release(records, lock, held)
        raise RecordsError(f"cannot open the records database {shown}: {_one_line(err)}") from None
    return OpenDatabase(records, shown, lock, held, abandoned)


def _advisory_lock(records: Records, shown: str) -> Connection:
    """A connection holding this project's session advisory lock on the PostgreSQL database."""
    held = records.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    if not held.execute(text("SELECT pg_try_advisory_lock(:key)"),
                        {"key": ADVISORY_KEY}).scalar():
        held.close()
        raise DatabaseInUse(f"the records database {shown} is in use by another server (its "
                            f"advisory lock {ADVISORY_KEY} is held): stop it, or choose another "
                            "db=")
    return held


def _row_lock(records: Records, shown: str) -> Connection:
    """A connection whose open transaction holds the row lock of `server_claim` (any backend
    with SELECT ... FOR UPDATE NOWAIT: MySQL 8, MariaDB 10.3, Oracle, SQL Server's dialect
    renders its own)."""
    CLAIM.create(records.engine, checkfirst=True)
    with records.engine.begin() as connection:
        if connection.execute(select(CLAIM.c.id)).first() is None:
            connection.execute(CLAIM.insert().values(id=1))
    held = records.engine.connect()
    held.begin()
    try:
        held.execute(select(CLAIM.c.id).where(CLAIM.c.id == 1).with_for_update(nowait=True))
    except DBAPIError:
        held.close()
        raise DatabaseInUse(f"the records database {shown} is in use by another server (its "
                            "row lock on server_claim is held): stop it, or choose another "
                            "db=") from None
    return held


def _release(records: Records | None, lock: FileLock | None,
             held: Connection | None = None) -> None:
    if held is not None:
        held.close()
    if records is not None:
        records.close()
    if lock is not None:
        lock.release()


def _one_line(err: BaseException) -> str:
    """The cause of a database error in one line: the driver's own message when there is one
    (SQLAlchemy adds the statement and a link on further lines)."""
    if isinstance(err, RecordsError) and err.__context__ is not None:
        err = err.__context__  # Records' own message repeats the URL, password included
    if isinstance(err, DBAPIError) and err.orig is not None:
        err = err.orig
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__
