"""The records' schema: migrations bring any database to head, once, even when several
processes start at once; the migrated tables are exactly `records.schema`'s."""

from __future__ import annotations

import asyncio

import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from records.engine import open_engine
from records.migrate import current_revision, head, upgrade_to_head
from records.schema import metadata


async def test_upgrade_brings_an_empty_database_to_head(database_url: str) -> None:
    engine = open_engine(database_url)
    try:
        assert await current_revision(engine) is None
        await upgrade_to_head(engine)
        assert await current_revision(engine) == head()
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
        assert set(metadata.tables) <= names
    finally:
        await engine.dispose()


def _differences(connection: Connection) -> list[object]:
    return list(compare_metadata(MigrationContext.configure(connection), metadata))


async def test_the_migrations_build_exactly_the_schema(database_url: str) -> None:
    engine = open_engine(database_url)
    try:
        await upgrade_to_head(engine)
        async with engine.connect() as conn:
            assert await conn.run_sync(_differences) == []
    finally:
        await engine.dispose()


async def test_several_processes_migrating_at_once_all_end_at_head(database_url: str) -> None:
    engines = [open_engine(database_url) for _ in range(4)]
    try:
        await asyncio.gather(*(upgrade_to_head(engine) for engine in engines))
        for engine in engines:
            assert await current_revision(engine) == head()
        await upgrade_to_head(engines[0])  # again: nothing to do
        assert await current_revision(engines[0]) == head()
    finally:
        for engine in engines:
            await engine.dispose()
