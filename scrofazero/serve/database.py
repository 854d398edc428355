"""The records database as the server claims it: one server per database, and an unusable one
refused by name before anything is served.

`open_database(db)` locks the database for this process, opens the records, and marks the games
a stopped server left waiting or playing as abandoned (safe only under the lock: they are no
other server's live games). A SQLite file is locked by an exclusive lock file next to it
(`games.sqlite.lock`, run_lock.RunLock: the kernel's flock, dropped whenever the process ends,
even on kill -9); a PostgreSQL database by a session advisory lock on a connection held while
the server runs. Other databases are not locked (docs/play.md). Every failure is a RecordsError
(a ValueError: one line and exit status 2 from play.py) naming the URL, password hidden.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import text
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from scrofazero.run_lock import RunLock, RunLocked
from scrofazero.serve.records import Records, RecordsError, database_url

# pg_try_advisory_lock's key: any fixed 64-bit number, the same for every server of this project
ADVISORY_KEY = 0x5C0F_A2E0_7AB1_E500


class DatabaseInUse(RecordsError):
    """Another live server holds the database."""


class OpenDatabase:
    """The records of one claimed database. `close` releases the claim (idempotent)."""

    def __init__(self, records: Records, shown: str, lock: RunLock | None,
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


def open_database(db: str) -> OpenDatabase:
    """Claim and open the records database `db` (a SQLite path or a SQLAlchemy URL); raises
    RecordsError (DatabaseInUse when another server holds it), changing nothing then."""
    shown = db
    try:
        url = make_url(database_url(db))
        if "://" in db:  # a file path is shown as given
            shown = url.render_as_string(hide_password=True)
        lock = _lock_file(url.database, shown) if url.get_backend_name() == "sqlite" else None
    except (SQLAlchemyError, OSError) as err:
        raise RecordsError(f"cannot open the records database {shown}: {_one_line(err)}") from None
    records = held = None
    try:
        records = Records(db)
        if records.engine.dialect.name == "postgresql":
            held = _advisory_lock(records, shown)
        abandoned = records.abandon_unfinished()  # also proves the database can be written
    except DatabaseInUse:
        _release(records, lock)
        raise
    except (RecordsError, SQLAlchemyError, ImportError, OSError) as err:
        _release(records, lock, held)
        raise RecordsError(f"cannot open the records database {shown}: {_one_line(err)}") from None
    return OpenDatabase(records, shown, lock, held, abandoned)


def _lock_file(database: str | None, shown: str) -> RunLock | None:
    """The exclusive lock next to a SQLite file (none for an in-memory database)."""
    if not database or database == ":memory:" or database.startswith("file:"):
        return None
    path = Path(database)
    lock = RunLock(path.parent, name=path.name + ".lock")
    try:
        return lock.acquire()
    except RunLocked as err:
        who = f"process {err.owner}" if err.owner is not None else "another process"
        raise DatabaseInUse(f"the records database {shown} is in use by {who} (another "
                            f"python play.py? lock {lock.path}): stop it, or choose another "
                            "db=") from None


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


def _release(records: Records | None, lock: RunLock | None,
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
