"""An async engine from a database URL.

`sqlite+aiosqlite:///PATH` (the default: a file under the data folder, nothing to install)
or `postgresql+asyncpg://USER:PASSWORD@HOST/DB` (a fleet: every process on one database).
SQLite connections run in WAL mode (readers never wait for the writer), wait up to
`SQLITE_BUSY_MS` for a lock instead of failing, enforce foreign keys, and begin every
transaction with `BEGIN IMMEDIATE`: a writer takes the lock when it starts, so two processes
never both read then fail to upgrade to a write (SQLite's "database is locked" deadlock).
"""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

__all__ = [
    "SQLITE_BUSY_MS",
    "DatabaseUrlError",
    "check_url",
    "default_url",
    "is_sqlite",
    "open_engine",
]

SQLITE_BUSY_MS = 15_000
SQLITE_FILE = "records.sqlite3"


class DatabaseUrlError(ValueError):
    """The database URL names no driver this server runs on."""


def default_url(data_dir: str) -> str:
    """The SQLite file of the records under `data_dir`."""
    return f"sqlite+aiosqlite:///{os.path.abspath(os.path.join(data_dir, SQLITE_FILE))}"


def is_sqlite(url: str | URL) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def check_url(url: str) -> URL:
    """The parsed URL; DatabaseUrlError unless it is SQLite (aiosqlite) or PostgreSQL
    (asyncpg). A plain `sqlite:///` or `postgresql://` gets the async driver."""
    try:
        parsed = make_url(url)
    except Exception:
        raise DatabaseUrlError(f"not a database URL: {_redacted(url)}") from None
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if backend == "sqlite" and driver in ("pysqlite", "aiosqlite"):
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend == "postgresql" and driver in ("psycopg2", "asyncpg"):
        return parsed.set(drivername="postgresql+asyncpg")
    raise DatabaseUrlError(
        f"unsupported database {parsed.drivername!r}: use sqlite+aiosqlite:///PATH "
        "or postgresql+asyncpg://USER:PASSWORD@HOST/DB"
    )


def _redacted(url: str) -> str:
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:
        return "(unreadable)"


def open_engine(url: str) -> AsyncEngine:
    """An engine for `url` (see `check_url`); the SQLite file's folder is created."""
    parsed = check_url(url)
    if parsed.get_backend_name() != "sqlite":
        return create_async_engine(parsed, pool_pre_ping=True)
    if parsed.database and parsed.database != ":memory:":
        os.makedirs(os.path.dirname(os.path.abspath(parsed.database)), exist_ok=True)
    engine = create_async_engine(parsed)
    _sqlite_pragmas(engine)
    return engine


def _sqlite_pragmas(engine: AsyncEngine) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # The driver's own implicit BEGIN is off: `on_begin` emits BEGIN IMMEDIATE instead.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def on_begin(connection: Connection) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")
