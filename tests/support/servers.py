"""In-process race servers (`make_server` in tests/conftest.py is built on these)."""

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web

__all__ = ["MakeServer", "served_app"]

MakeServer = Callable[..., Awaitable[str]]


@contextlib.asynccontextmanager
async def served_app(redis_url: str) -> AsyncIterator[tuple[web.Application, str]]:
    """One app on a free port over `redis_url` and a scratch database, for a test that
    reaches into it (its hub, its store): the app and its http base URL."""
    from server.edge.app import create_app
    from server.settings import Settings
    from support.databases import scratch_database_url
    from support.ports import free_port

    port = free_port()
    app = create_app(Settings(database_url=scratch_database_url(), port=port, redis_url=redis_url))
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield app, f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
