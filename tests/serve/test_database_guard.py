"""The records database as a server claims it (scrofazero/serve/common/database.py).

Invariants: while one server holds a database, a second one's start is refused with
DatabaseInUse and changes nothing (the first one's live games stay live), however the database
is spelled (a symlink in another folder, a hard link, a relative path, a `file:` URI: the lock
is the file's own, and which file that is SQLite itself says: `?mode=memory` without
`uri=true` opens the file, so it meets the lock too) and names the holder's pid; an in-memory
database is refused at start (every thread would get its own empty one); a database of another
backend is claimed by a row lock; once the first stops,
the next start takes the database over and abandons what it left; an unusable database (a
corrupt file, a path that cannot be a file, an unknown scheme, a PostgreSQL URL without its
driver) is refused by serve() in one line naming the URL (password hidden) before the URL it
would serve is printed; SQLite commits are synced in full (PRAGMA synchronous=FULL).
"""

from __future__ import annotations

import asyncio
import json
import os
import urllib.request
from dataclasses import replace
from pathlib import Path

import pytest
from serve_thread import CHECKPOINT, http, running_server

from scrofazero.serve.app import create_app, serve
from scrofazero.serve.common.config import PlayConfig
from scrofazero.serve.common.database import DatabaseInUse, open_database
from scrofazero.serve.common.records import RecordsError
from scrofazero.serve.gongzhu.records import Records


def settings(db: str) -> PlayConfig:
    return replace(PlayConfig(), db=db, checkpoint=CHECKPOINT, port=0, seed=0)


def waiting_games(server) -> list[int]:
    with urllib.request.urlopen(server.url + "/api/games?status=waiting", timeout=30) as resp:
        return [g["id"] for g in json.loads(resp.read())]


def test_a_second_server_on_the_database_is_refused_and_changes_nothing(tmp_path):
    with running_server(tmp_path) as first:
        req = urllib.request.Request(first.url + "/api/tables", method="POST",
                                     data=json.dumps({"type": "create",
                                                      "seats": ["open"] * 4}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            game_id = json.loads(resp.read())["game_id"]
        second = create_app(settings(first.db))

        async def start_second():
            async with second.router.lifespan_context(second):
                pass

        with pytest.raises(DatabaseInUse, match=f"in use by process {os.getpid()}"):
            asyncio.run(start_second())
        assert waiting_games(first) == [game_id]  # still live, not marked abandoned
        db = first.db
    taken = open_database(db, Records)  # the first server stopped: its lock is gone
    try:
        assert taken.abandoned == 1
    finally:
        taken.close()


def test_a_database_is_free_again_after_close(tmp_path):
    db = str(tmp_path / "g.sqlite")
    first = open_database(db, Records)
    with pytest.raises(DatabaseInUse, match=f"in use by process {os.getpid()} .*g\\.sqlite"):
        open_database(db, Records)
    first.close()
    open_database(db, Records).close()


def other_spellings(tmp_path, db: Path) -> list[str]:
    """Names of the file `db` that are not its path: a symlink in another folder, a hard link
    in another folder, a relative path, and SQLAlchemy `file:` URIs (SQLite's URI filenames)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "link.sqlite").symlink_to(db)
    os.link(db, elsewhere / "hard.sqlite")
    return [str(elsewhere / "link.sqlite"), str(elsewhere / "hard.sqlite"),
            os.path.relpath(db), f"sqlite:///file:{db}?uri=true",
            f"sqlite:///file://localhost{db}?uri=true&mode=rwc",
            f"sqlite:///file:{elsewhere / 'link.sqlite'}?uri=true",
            # the driver ignores SQLite's URI options without uri=true: these open the file
            f"sqlite:///{db}?mode=memory", f"sqlite:///{db}?uri=false&mode=memory"]


def test_every_spelling_of_a_held_database_is_refused_and_changes_nothing(tmp_path):
    db = tmp_path / "g.sqlite"
    first = open_database(str(db), Records)
    try:
        game = first.records.new_game("t1", "deal", None, 0, [("open", "a")] * 4, {})
        for spelling in other_spellings(tmp_path, db):
            with pytest.raises(DatabaseInUse, match=f"in use by process {os.getpid()} "):
                open_database(spelling, Records)
        assert first.records.game(game)["status"] == "waiting"  # not marked abandoned
    finally:
        first.close()


def test_a_file_uri_claims_the_file_for_every_other_spelling(tmp_path):
    db = tmp_path / "g.sqlite"
    first = open_database(f"sqlite:///file:{db}?uri=true", Records)
    try:
        with pytest.raises(DatabaseInUse, match=f"in use by process {os.getpid()} "):
            open_database(str(db), Records)
    finally:
        first.close()
    open_database(str(db), Records).close()


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # 'mode' is ignored
def test_a_server_on_a_held_file_spelled_in_memory_is_refused(tmp_path):
    """`?mode=memory` without `uri=true` opens the file itself: a second server on that URL is
    refused, and the first one's live game stays in play (its record closed)."""
    with running_server(tmp_path) as first:
        status, made = http(first, "/api/tables", {"type": "create", "seats": ["open"] * 4})
        assert status == 200
        for spelling in (f"sqlite:///{first.db}?mode=memory",
                         f"sqlite:///{first.db}?uri=false&mode=memory"):
            second = create_app(settings(spelling))

            async def start_second(app=second):
                async with app.router.lifespan_context(app):
                    pass

            with pytest.raises(DatabaseInUse, match=f"in use by process {os.getpid()}"):
                asyncio.run(start_second())
        assert waiting_games(first) == [made["game_id"]]  # not marked abandoned
        assert http(first, f"/api/games/{made['game_id']}")[0] == 409  # its deal still hidden


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:",
                                 "sqlite:///file:games?mode=memory&uri=true"])
def test_an_in_memory_database_is_refused_at_start(url):
    app = create_app(settings(url))

    async def start():
        async with app.router.lifespan_context(app):
            pass

    with pytest.raises(RecordsError, match="in-memory SQLite database .* give a file") as refused:
        asyncio.run(start())
    assert str(refused.value).startswith("cannot open the records database sqlite:")


def test_another_backend_is_claimed_by_a_row_lock(tmp_path, monkeypatch):
    """SQLite ignores FOR UPDATE, so the backend is stood in for: the claim takes the row of
    server_claim with NOWAIT, and a database refusing that lock is DatabaseInUse."""
    from sqlalchemy.exc import OperationalError

    from scrofazero.serve.common import database as database_module

    records = Records(str(tmp_path / "g.sqlite"))
    claims = []  # the FOR UPDATE NOWAIT selects: the first takes the row, later ones fail
    real_execute = type(records.engine.connect()).execute

    def execute(connection, statement, *args, **kw):
        wanted = getattr(statement, "_for_update_arg", None)
        if wanted is not None:
            claims.append(wanted.nowait)
            if len(claims) > 1:
                raise OperationalError("SELECT ... FOR UPDATE NOWAIT", {},
                                       Exception("could not obtain lock"))
        return real_execute(connection, statement, *args, **kw)

    monkeypatch.setattr(type(records.engine.connect()), "execute", execute)
    try:
        held = database_module._row_lock(records, "mysql://db/games")
        assert held.in_transaction()  # the claim lasts as long as the connection's transaction
        with pytest.raises(DatabaseInUse, match="mysql://db/games is in use by another server "
                                                r"\(its row lock on server_claim is held\)"):
            database_module._row_lock(records, "mysql://db/games")
        held.close()
    finally:
        records.close()
    assert claims == [True, True]


def corrupt(tmp_path) -> str:
    path = tmp_path / "corrupt.sqlite"
    path.write_bytes(b"not a database, " * 512)
    return str(path)


def under_a_file(tmp_path) -> str:
    (tmp_path / "plain").write_text("a file, not a folder\n")
    return str(tmp_path / "plain" / "g.sqlite")


@pytest.mark.parametrize("make, named, cause", [
    (corrupt, "corrupt.sqlite", "file is not a database"),
    (under_a_file, "plain/g.sqlite", "File exists"),
    (lambda _: "bogus://somewhere/db", "bogus://somewhere/db", "bogus"),
    (lambda _: "postgresql+psycopg://eve:secret@127.0.0.1:1/games",
     "postgresql+psycopg://eve:***@127.0.0.1:1/games", "psycopg"),
])
def test_an_unusable_database_is_named_before_serving(tmp_path, capsys, make, named, cause):
    with pytest.raises(RecordsError) as refused:
        serve(settings(make(tmp_path)))
    message = str(refused.value)
    assert message.startswith("cannot open the records database ") and "\n" not in message
    assert named in message and cause in message and "secret" not in message
    assert "ScrofaZero tables" not in capsys.readouterr().out


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_read_only_folder_is_named_before_serving(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        with pytest.raises(RecordsError, match="ro/g.sqlite"):
            serve(settings(str(folder / "g.sqlite")))
    finally:
        folder.chmod(0o755)
    assert "ScrofaZero tables" not in capsys.readouterr().out


def test_sqlite_commits_are_synced_in_full(tmp_path):
    records = Records(str(tmp_path / "g.sqlite"))
    try:
        with records.engine.connect() as connection:
            mode = connection.exec_driver_sql("PRAGMA synchronous").scalar()
            journal = connection.exec_driver_sql("PRAGMA journal_mode").scalar()
    finally:
        records.close()
    assert (mode, journal) == (2, "wal")  # 2: FULL
