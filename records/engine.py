"""An async engine from a database URL.

`sqlite+aiosqlite:///PATH` (the default: a file under the data folder, nothing to install)
or `postgresql+asyncpg://USER:PASSWORD@HOST/DB` (a fleet: every process on one database).
SQLite connections run in WAL mode (readers never wait for the writer), wait up to
`SQLITE_BUSY_MS` for a lock instead of failing, enforce foreign keys, and begin every
transaction with `BEGIN IMMEDIATE`: a writer takes the lock when it starts, so two processes
never both read then fail to upgrade to a write (SQLite's "database is locked" deadlock).
The one exception is `snapshot`'s read, which writes nothing: every read-only query goes
through it, so that a reader never waits for a writer (a replay served during an archive).

A database that cannot serve now comes out as `OperationalError`, on either database, so
that every caller tells an outage (try again soon: HTTP 503, the archive's next drain) from a
bug. asyncpg alone would not say so: PostgreSQL stopped gives the socket's own
`ConnectionRefusedError`, and a connection dropped mid-transaction (a restart) or a server
shutting down, starting up or out of connections a plain `DBAPIError`; and SQLAlchemy's
pool, with every connection busy for `POOL_TIMEOUT`, its own TimeoutError.
"""

from __future__ import annotations

import contextlib
import os
import urllib.parse
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, Connection, ExceptionContext, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import AsyncAdaptedQueuePool, ConnectionPoolEntry, PoolProxiedConnection

__all__ = [
    "ANSWER_WAIT",
    "SQLITE_BUSY_MS",
    "DatabaseUrlError",
    "check_url",
    "default_url",
    "is_sqlite",
    "open_engine",
    "redacted_url",
    "snapshot",
]

SQLITE_BUSY_MS = 15_000
SQLITE_FILE = "records.sqlite3"
# SQLSTATE classes that say "not now" rather than "not this": 08 the connection failed, 40 a
# deadlock or serialization failure (run it again), 53 out of connections or resources,
# 57 the server shutting down or starting up.
TRANSIENT_SQLSTATES = ("08", "40", "53", "57")
# PostgreSQL connections a process keeps (POOL_SIZE), opens beyond them under load
# (POOL_OVERFLOW), and how long a request waits for one when all are busy (POOL_TIMEOUT,
# seconds: then the database counts as out of reach).
POOL_SIZE = 5
POOL_OVERFLOW = 10
POOL_TIMEOUT = 30.0
# Seconds PostgreSQL has to answer a statement (ANSWER_WAIT) or a new connection
# (CONNECT_WAIT) before it counts as out of reach: a server that takes connections and
# answers nothing (frozen, cut off by the network) never refuses, and would hold every
# request that needs the records (a socket's `identify`, and its moves behind it) for
# asyncpg's minute, or for ever. Far above what a query takes here (milliseconds:
# docs/performance.md), and far below what a client waits for an answer (15 s).
ANSWER_WAIT = 5.0
CONNECT_WAIT = 5.0
# The execution option that marks `snapshot`'s transactions on SQLite.
_SNAPSHOT = "solrace_snapshot"


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
        raise DatabaseUrlError(f"not a database URL: {redacted_url(url)}") from None
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if backend == "sqlite" and driver in ("pysqlite", "aiosqlite"):
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend == "postgresql" and driver in ("psycopg2", "asyncpg"):
        return parsed.set(drivername="postgresql+asyncpg")
    raise DatabaseUrlError(
        f"unsupported database {parsed.drivername!r}: use sqlite+aiosqlite:///PATH "
        "or postgresql+asyncpg://USER:PASSWORD@HOST/DB"
    )


def redacted_url(url: str) -> str:
    """A URL (a database's, Redis's) fit for a log line: its password replaced by ***,
    whether in the address (`scheme://user:PASSWORD@host`) or a query parameter
    (`?password=PASSWORD`, which asyncpg and redis-py read too)."""
    parts = urllib.parse.urlsplit(url)
    query = "&".join(
        f"{name}=***" if name.lower() == "password" else f"{name}={value}" if sep else name
        for name, sep, value in (item.partition("=") for item in parts.query.split("&"))
    )
    if not parts.password and query == parts.query:
        return url  # as it was written (urlunsplit would drop sqlite:////path's empty host)
    netloc = parts.netloc
    if parts.password:
        netloc = netloc.replace(f":{parts.password}@", ":***@")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query))


def open_engine(
    url: str,
    refused: Callable[[], str | None] | None = None,
    answer_wait: float | None = ANSWER_WAIT,
) -> AsyncEngine:
    """An engine for `url` (see `check_url`); the SQLite file's folder is made when it
    connects. `refused`: why a new connection may not be opened now, if it may not (it
    is then refused as an outage, `OperationalError`). `answer_wait`: the seconds a
    statement may wait for PostgreSQL's answer (None: as long as it takes, for a
    migration, whose statements may be long and wait for another process's)."""
    parsed = check_url(url)
    if parsed.get_backend_name() != "sqlite":
        engine = create_async_engine(
            parsed,
            pool_pre_ping=True,
            pool_size=POOL_SIZE,
            max_overflow=POOL_OVERFLOW,
            pool_timeout=POOL_TIMEOUT,
            poolclass=_Pool,
            connect_args={"timeout": CONNECT_WAIT, "command_timeout": answer_wait},
        )
        _refusing(engine, refused)
        event.listen(engine.sync_engine, "do_connect", _connect)
        event.listen(engine.sync_engine, "handle_error", _outage_as_operational)
        return engine
    engine = create_async_engine(parsed)
    _refusing(engine, refused)
    if parsed.database and parsed.database != ":memory:":
        folder = os.path.dirname(os.path.abspath(parsed.database))
        event.listen(engine.sync_engine, "do_connect", partial(_make_folder, folder))
    _sqlite_pragmas(engine)
    return engine


@asynccontextmanager
async def snapshot(engine: AsyncEngine) -> AsyncIterator[AsyncConnection]:
    """A read-only transaction whose queries all see the database as it was at its first:
    a page built of several queries is never half from before a write and half from after.
    PostgreSQL: `REPEATABLE READ, READ ONLY`. SQLite: a deferred `BEGIN`, whose first read
    fixes what the transaction sees (WAL), and which, holding no lock, keeps no writer
    waiting (`BEGIN IMMEDIATE` would, for as long as the read lasts)."""
    async with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execution_options(
                isolation_level="REPEATABLE READ", postgresql_readonly=True
            )
        else:
            await conn.execution_options(**{_SNAPSHOT: True})
        async with conn.begin():
            yield conn


class _Pool(AsyncAdaptedQueuePool):
    """Every connection busy for longer than POOL_TIMEOUT (the database too slow for the
    requests, or stuck on a lock) is an outage, as OperationalError, not SQLAlchemy's own
    TimeoutError that no caller takes for one; so is a kept connection whose check before
    use (`pool_pre_ping`) got no answer within ANSWER_WAIT, which asyncpg says as the
    socket's own TimeoutError and SQLAlchemy passes on as it is (the connection is
    dropped)."""

    # Its log lines (disposed, recreated, a connection invalidated) are the pool's
    # bookkeeping: under SQLAlchemy's logger, held at WARNING, as its own pool's are.
    _sqla_logger_namespace = "sqlalchemy.pool.impl.AsyncAdaptedQueuePool"

    def _do_get(self) -> ConnectionPoolEntry:
        try:
            return super()._do_get()
        except PoolTimeout as exc:
            raise OperationalError(None, None, exc) from exc

    def connect(self) -> PoolProxiedConnection:
        try:
            return super().connect()
        except OSError as exc:
            raise _outage(exc, ANSWER_WAIT) from exc


def _connect(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
    """A new connection; a server that cannot be reached (refused, timed out, no such
    host: the socket's own OSError, which the driver passes on as it is) as an outage."""
    try:
        return dialect.connect(*cargs, **cparams)
    except OSError as exc:
        raise _outage(exc, CONNECT_WAIT) from exc


def _outage(error: OSError, waited: float, invalidated: bool = False) -> OperationalError:
    """`error` as an outage of the database; a timeout, which says nothing of itself (the
    log would read "failed: "), saying how long it waited."""
    if isinstance(error, TimeoutError) and not str(error):
        error = TimeoutError(f"no answer within {waited:g} s")
    return OperationalError(None, None, error, connection_invalidated=invalidated)


def _refusing(engine: AsyncEngine, refused: Callable[[], str | None] | None) -> None:
    """`refused` asked before any other step of a new connection (the listeners of
    `do_connect` run in the order they were added, the first to answer a connection ends
    them)."""
    if refused is None:
        return

    def refuse(*_: Any) -> None:
        if (why := refused()) is not None:
            raise OperationalError(None, None, ConnectionRefusedError(why))

    event.listen(engine.sync_engine, "do_connect", refuse)


def _make_folder(folder: str, *_: Any) -> None:
    """The SQLite file's folder, made before each new connection rather than once: a
    folder that cannot be made yet (a file in its way, a disk not mounted) leaves the file
    unopenable, which SQLite says as an outage (`OperationalError`, waited out), and is made
    once it can be."""
    with contextlib.suppress(OSError):
        os.makedirs(folder, exist_ok=True)


def _outage_as_operational(context: ExceptionContext) -> BaseException | None:
    """PostgreSQL out of reach, as `OperationalError` (see the module's docstring); any
    other error as it is. Without the statement and its parameters: a logged outage says
    only what failed (an archived race's parameters hold its whole replay)."""
    error = context.original_exception
    if isinstance(error, OperationalError):
        return None
    state = str(getattr(error, "sqlstate", None) or "")
    if not (
        context.is_disconnect or isinstance(error, OSError) or state[:2] in TRANSIENT_SQLSTATES
    ):
        return None
    if isinstance(error, OSError):
        return _outage(error, ANSWER_WAIT, context.is_disconnect)
    return OperationalError(None, None, error, connection_invalidated=context.is_disconnect)


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
        if connection.get_execution_options().get(_SNAPSHOT):
            connection.exec_driver_sql("BEGIN")
        else:
            connection.exec_driver_sql("BEGIN IMMEDIATE")
