"""Bring the database to the newest schema (Alembic `upgrade head`), at server start.

Safe when several processes start at once: the upgrade runs inside one transaction that
first takes a lock (PostgreSQL: a transaction-level advisory lock; SQLite: the write lock,
`BEGIN IMMEDIATE`), so the first process migrates and the others, once they get the lock,
find the database at head and do nothing. DDL is transactional on both, so a process killed
mid-migration leaves the database as it was.
"""

from __future__ import annotations

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["MIGRATION_LOCK", "alembic_config", "current_revision", "head", "upgrade_to_head"]

# The advisory lock's key on PostgreSQL (any constant the site does not use otherwise).
MIGRATION_LOCK = 0x736F6C72  # "solr"


def alembic_config() -> Config:
    config = Config()
    config.set_main_option("script_location", "records:migrations")
    return config


def head() -> str:
    """The newest revision shipped with this code."""
    found = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert found is not None
    return found


def _current(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def current_revision(engine: AsyncEngine) -> str | None:
    async with engine.connect() as conn:
        return await conn.run_sync(_current)


async def upgrade_to_head(engine: AsyncEngine) -> None:
    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
        await conn.run_sync(_upgrade)


def _upgrade(connection: Connection) -> None:
    if _current(connection) == head():
        return
    config = alembic_config()
    config.attributes["connection"] = connection
    command.upgrade(config, "head")
