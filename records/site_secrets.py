"""The site's lasting secrets by name (the daily deal's: "daily"): made on the first ask and
kept, so that every process, and the same one after any restart, uses the same one.

Several processes may ask at once on a fresh database: each inserts a fresh secret unless
the name has one (`INSERT ... ON CONFLICT DO NOTHING`), then reads back the one kept, so
the first insert wins and all of them read it.
"""

from __future__ import annotations

import secrets
import time

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncEngine

from records.schema import site_secrets
from records.sql import insert_ignore

__all__ = ["SECRET_BYTES", "site_secret"]

SECRET_BYTES = 32


async def site_secret(engine: AsyncEngine, name: str) -> bytes:
    """The secret kept under `name`, made now if there is none yet."""
    async with engine.begin() as conn:
        await conn.execute(
            insert_ignore(conn, site_secrets),
            {"name": name, "value": secrets.token_hex(SECRET_BYTES), "created_at": time.time()},
        )
    kept = sa.select(site_secrets.c.value).where(site_secrets.c.name == name)
    async with engine.connect() as conn:
        value = await conn.scalar(kept)
    assert value is not None  # inserted above or before
    return bytes.fromhex(value)
