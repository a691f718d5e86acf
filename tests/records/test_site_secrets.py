"""The site's lasting secrets: made once, on the first ask, and the same for every process
that asks, even when several ask at once on a fresh database."""

from __future__ import annotations

import asyncio

from support.records import migrated

from records.engine import open_engine
from records.site_secrets import site_secret


async def test_a_secret_is_made_once_and_kept(database_url: str) -> None:
    async with migrated(database_url) as engine:
        first = await site_secret(engine, "daily")
        assert len(first) == 32
        assert await site_secret(engine, "daily") == first
        assert await site_secret(engine, "other") != first  # each name its own


async def test_processes_asking_at_once_all_get_the_same_secret(database_url: str) -> None:
    async with migrated(database_url):
        engines = [open_engine(database_url) for _ in range(4)]
        try:
            found = await asyncio.gather(*(site_secret(engine, "daily") for engine in engines))
        finally:
            for engine in engines:
                await engine.dispose()
    assert len(set(found)) == 1
