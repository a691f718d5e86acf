"""The watch on this process's link to Redis (`redis_watch_ctx`, in the app's
`cleanup_ctx`): every WATCH_EVERY seconds it asks Redis (the store's health check: PING, or
every Cluster primary) and the pub/sub feed whether this process can serve, and feeds the
answer to `Outage` (server/redis_io/outage.py), which decides.

While a check finds a problem, `/healthz` answers 503. Once Redis has failed for
`redis_cutoff` seconds in a row the process is cut off and hands its players on: new
WebSocket upgrades answer 503 (an upgrade then asks for a check at once, shared by all that
ask meanwhile: the first client back after Redis is not refused for the rest of the
interval), and every open socket is closed with 1013 (try again later); its client comes
back through the balancer to a process that can serve it (its seat is held by its token,
wherever it reconnects). The departures of those sockets cannot be written meanwhile; the
reaper writes them once Redis answers again (server/edge/sweeper.py), so a player's grace
runs from then, not from the cut.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Collection

from aiohttp import web

from protocol import CloseCode
from server.edge.app_keys import FEED, OUTAGE, REDIS_WATCH, SETTINGS, SOCKETS, STORE
from server.live.connection import Connection
from server.redis_io.health import CHECK_TIMEOUT
from server.redis_io.outage import Change, Outage

__all__ = ["WATCH_EVERY", "RedisWatch", "check_once", "redis_watch_ctx"]

log = logging.getLogger(__name__)

WATCH_EVERY = 1.0  # seconds between two checks (each takes up to CHECK_TIMEOUT more)
CUT_OFF_REASON = "this server cannot reach its storage: reconnect"
# Seconds a check waits for the feed to subscribe again once Redis answers (it takes a
# round trip per few hundred channels): past it, the feed's state is the finding.
FEED_CATCH_UP = 1.0


class RedisWatch:
    """The checks of one app: every WATCH_EVERY seconds, and at once when asked (`check`):
    at most one at a time, whoever asks meanwhile waiting for its finding."""

    def __init__(self, app: web.Application) -> None:
        self.app = app
        self._checking: asyncio.Future[Change | None] | None = None

    async def check(self) -> Change | None:
        if self._checking is None or self._checking.done():
            self._checking = asyncio.ensure_future(check_once(self.app, time.monotonic()))
        return await asyncio.shield(self._checking)

    async def away(self) -> str | None:
        """What keeps this process from using Redis (None: nothing): the last check's
        finding, checked again when it was a problem (shared with a check under way), so
        that a request answered `unavailable` at once for it is not refused once Redis
        answers again."""
        outage = self.app[OUTAGE]
        if outage.problem is None:
            return None
        await self.check()
        return outage.problem

    async def run(self) -> None:
        while True:
            await self.check()
            await asyncio.sleep(WATCH_EVERY)


async def check_once(app: web.Application, now: float) -> Change | None:
    """One check of Redis and the feed, fed to the app's `Outage`; what changed."""
    problem = await app[STORE].problem()
    if problem is None and app[FEED].problem() is not None:
        # Redis answers, and the feed waits out its reconnect's pause: no request is
        # refused for that pause (up to half a second).
        await app[FEED].reconnect_now(FEED_CATCH_UP)
    problem = problem or app[FEED].problem()
    outage = app[OUTAGE]
    change = outage.observe(problem, now)
    if change is Change.CUT_OFF:
        log.warning(
            "Redis has failed for %g s (%s): handing this process's %d sockets on (1013) "
            "until it answers again",
            app[SETTINGS].redis_cutoff,
            problem,
            len(app[SOCKETS]),
        )
    elif change is Change.BACK:
        log.info("Redis answers again: taking players again")
    if outage.cut_off:
        # Every check while cut off: a socket that got in meanwhile goes too.
        sockets: set[Connection] = app[SOCKETS]
        hand_on(sockets)
    return change


def hand_on(sockets: Collection[Connection]) -> None:
    for conn in list(sockets):
        conn.close_soon(CloseCode.TRY_AGAIN_LATER, CUT_OFF_REASON)


async def redis_watch_ctx(app: web.Application) -> AsyncIterator[None]:
    app[OUTAGE] = Outage(app[SETTINGS].redis_cutoff)
    app[REDIS_WATCH] = watch = RedisWatch(app)
    task = asyncio.create_task(watch.run(), name="solrace-redis-watch")
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(task, CHECK_TIMEOUT + 1.0)
