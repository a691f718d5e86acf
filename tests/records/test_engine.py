"""The records' engine: SQLite set up for several processes, PostgreSQL through asyncpg,
and the server opening and migrating its database at start."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.exc import IntegrityError
from support.servers import MakeServer

from records.engine import SQLITE_BUSY_MS, open_engine
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
