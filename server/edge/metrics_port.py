"""`/metrics` on a listener of its own (`Settings.metrics_port`), off the public port.

The public port is what the balancer exposes to the internet; the metrics say how many
rooms and players there are and how the server fails, which is for operators only. With
`metrics_port` set, the public port answers 404 for `/metrics` and this listener (on
`metrics_host`, loopback by default) serves it, for Prometheus to scrape.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web

from server.edge.app_keys import METRICS, SETTINGS
from server.edge.routes import metrics_text

__all__ = ["metrics_listener_ctx"]


async def metrics_listener_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    if not settings.metrics_port:
        yield
        return

    async def metrics(request: web.Request) -> web.Response:
        return metrics_text(app[METRICS])

    side = web.Application()
    side.router.add_get("/metrics", metrics)
    runner = web.AppRunner(side, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, settings.metrics_host, settings.metrics_port).start()
    yield
    await runner.cleanup()
