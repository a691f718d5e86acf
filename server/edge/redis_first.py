"""HTTP routes that cannot answer without Redis (`needs_redis`) are answered 503
`unavailable` at once while this process's watch finds Redis unreachable, as the WebSocket's
requests are (`WAIT_FOR_REDIS`, server/handlers/service.py). Otherwise each such request
waited out its reply deadline before its 503 (5 s; 15 s through a balancer that tries each
process in turn). The finding is checked again first (`RedisWatch.away`, shared with a check
under way), so nobody is refused for an outage that has just ended. Routes not marked (the
games and their rules, players and the records, which live in the SQL database) are served
as ever. On a Redis Cluster a node's outage is that of its slots' rooms only: the others
are served, so there each request finds out for itself.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiohttp import web
from redis.asyncio.cluster import RedisCluster

from server.edge.app_keys import OUTAGE, REDIS, REDIS_WATCH
from server.metrics import REDIS_DOWN

__all__ = ["needs_redis", "redis_first"]

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
H = TypeVar("H", bound=Handler)

_NEEDS_REDIS: set[Handler] = set()


def needs_redis(handler: H) -> H:
    """Mark a route's handler as one that cannot answer without Redis."""
    _NEEDS_REDIS.add(handler)
    return handler


@web.middleware
async def redis_first(request: web.Request, handler: Handler) -> web.StreamResponse:
    app = request.app
    if (
        OUTAGE in app
        and app[OUTAGE].problem is not None
        and request.match_info.handler in _NEEDS_REDIS
        and not isinstance(app[REDIS], RedisCluster)
        and (problem := await app[REDIS_WATCH].away()) is not None
    ):
        log.warning("HTTP %s %s: Redis unavailable: %s", request.method, request.path, problem)
        raise web.HTTPServiceUnavailable(text=REDIS_DOWN, headers={"Retry-After": "1"})
    return await handler(request)
