"""The server's Redis client under a burst of concurrent calls (e.g. 1,000 sockets dropping)."""

from __future__ import annotations

import asyncio

from aiohttp import web
from support.databases import scratch_database_url

from server.edge.app import create_app
from server.edge.app_keys import REDIS
from server.settings import Settings


async def test_a_burst_of_concurrent_calls_waits_for_a_connection(redis_url: str) -> None:
    app = create_app(Settings(database_url=scratch_database_url(), redis_url=redis_url))
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        redis = app[REDIS]
        # Far more calls in flight than the pool has connections: none may fail.
        answers = await asyncio.gather(*(redis.incr("burst") for _ in range(400)))
        assert sorted(answers) == list(range(1, 401))
    finally:
        await redis.delete("burst")
        await runner.cleanup()
