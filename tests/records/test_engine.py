"""The records' engine: SQLite set up for several processes, PostgreSQL through asyncpg,
and the server opening and migrating its database at start."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.ext.asyncio import AsyncEngine
from support.own_postgres import OwnPostgres, lock_waited_on, table_locked
from support.records import migrated
from support.servers import MakeServer
from support.tcp_relay import Relay, tcp_relay

import records.engine as engine_module
from records.engine import SQLITE_BUSY_MS, open_engine, redacted_url
from records.migrate import current_revision, head, upgrade_to_head
from records.schema import player_keys


async def test_sqlite_runs_in_wal_with_a_busy_timeout_and_foreign_keys(sqlite_url: str) -> None:
    engine = open_engine(sqlite_url)
    try:
        async with engine.connect() as conn:
            pragma = await conn.exec_driver_sql("PRAGMA journal_mode")
            assert pragma.scalar() == "wal"
            pragma = await conn.exec_driver_sql("PRAGMA busy_timeout")
            assert pragma.scalar() == SQLITE_BUSY_MS
    finally:
        await engine.dispose()


async def test_foreign_keys_are_enforced(database_url: str) -> None:
    engine = open_engine(database_url)
    try:
        await upgrade_to_head(engine)
        row = {"key_hash": "k", "player_id": "nobody", "created_at": 1.0, "last_used_at": 1.0}
        with pytest.raises(IntegrityError):
            async with engine.begin() as conn:
                await conn.execute(sa.insert(player_keys), row)
    finally:
        await engine.dispose()


async def test_the_server_migrates_its_database_at_start(
    make_server: MakeServer, database_url: str
) -> None:
    await make_server(database_url=database_url)
    engine = open_engine(database_url)
    try:
        assert await current_revision(engine) == head()
    finally:
        await engine.dispose()


async def _through(relay: Relay, url: str) -> str:
    """`url` of the test's PostgreSQL, reached through `relay` instead."""
    return str(make_url(url).set(port=relay.port).render_as_string(hide_password=False))


async def test_a_postgresql_that_cannot_be_reached_is_an_operational_error(
    postgres: OwnPostgres,
) -> None:
    """Stopped, or its machine gone: the driver's own socket error comes out as the
    database's OperationalError, which every caller takes for an outage (not a client
    leaving, not Redis)."""
    url = await postgres.new_database()
    async with tcp_relay(postgres.port) as relay:
        engine = open_engine(await _through(relay, url))
        try:
            async with engine.connect() as conn:
                assert await conn.scalar(sa.text("SELECT 1")) == 1
            relay.cut()
            await relay.refuse()
            with pytest.raises(OperationalError):
                async with engine.connect() as conn:
                    await conn.scalar(sa.text("SELECT 1"))
        finally:
            await engine.dispose()


async def test_a_connection_lost_in_the_middle_of_a_transaction_is_an_operational_error(
    postgres: OwnPostgres,
) -> None:
    """PostgreSQL restarted (or the link cut) while a write waits: an OperationalError too."""
    url = await postgres.new_database()
    async with migrated(url):
        pass
    async with tcp_relay(postgres.port) as relay:
        engine = open_engine(await _through(relay, url))
        try:
            async with table_locked(postgres, url, "player_keys"):
                waiting = asyncio.ensure_future(_insert_key(engine))
                await lock_waited_on(postgres)
                relay.cut()
                with pytest.raises(OperationalError):
                    await waiting
        finally:
            await engine.dispose()


async def _insert_key(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        await conn.execute(
            sa.insert(player_keys),
            {"key_hash": "k", "player_id": "p", "created_at": 0.0, "last_used_at": 0.0},
        )


async def test_every_connection_busy_too_long_is_an_operational_error(
    postgres: OwnPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A database too slow for the requests (each connection of the pool held, the next
    one waiting longer than POOL_TIMEOUT): an outage too, not SQLAlchemy's own TimeoutError."""
    monkeypatch.setattr(engine_module, "POOL_SIZE", 1)
    monkeypatch.setattr(engine_module, "POOL_OVERFLOW", 0)
    monkeypatch.setattr(engine_module, "POOL_TIMEOUT", 0.2)
    engine = open_engine(await postgres.new_database())
    try:
        async with engine.connect():
            with pytest.raises(OperationalError):
                async with engine.connect():
                    pass
    finally:
        await engine.dispose()


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "postgresql+asyncpg://solrace:pw@db:5433/solrace",
            "postgresql+asyncpg://solrace:***@db:5433/solrace",
        ),
        (
            "postgresql+asyncpg://solrace@db/solrace?password=pw&ssl=require",
            "postgresql+asyncpg://solrace@db/solrace?password=***&ssl=require",
        ),
        ("redis://:pw@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        (
            "redis://127.0.0.1:6379/0?Password=pw&socket_timeout=1",
            "redis://127.0.0.1:6379/0?Password=***&socket_timeout=1",
        ),
        (
            "sqlite+aiosqlite:////srv/.data/records.sqlite3",
            "sqlite+aiosqlite:////srv/.data/records.sqlite3",
        ),
    ],
)
def test_a_url_in_a_log_line_shows_no_password(url: str, shown: str) -> None:
    assert redacted_url(url) == shown
    assert "pw" not in redacted_url(url)
