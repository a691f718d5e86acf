"""The tournaments' part of the application's life: their runner and live pushes are
built over their store (made beside the room store, server/app.py), and a sweep loop
advances every tournament that is due (each process runs one; server/tournament/runner.py
says why that is safe)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator

from aiohttp import web

from server.app_keys import HUB, METRICS, PROCESS, SETTINGS, STORE
from server.metrics import redis_error
from server.tournament.app_keys import TOUR_LIVE, TOUR_RUNNER, TOUR_STORE
from server.tournament.live import TourLive
from server.tournament.rooms import StoreRooms
from server.tournament.runner import TourRunner

__all__ = ["tournaments_ctx"]

log = logging.getLogger(__name__)


async def tournaments_ctx(app: web.Application) -> AsyncIterator[None]:
    store, hub, metrics, tours = app[STORE], app[HUB], app[METRICS], app[TOUR_STORE]
    runner = TourRunner(tours, StoreRooms(store), app[PROCESS])
    live = TourLive(tours, hub.feed)
    app[TOUR_RUNNER], app[TOUR_LIVE] = runner, live
    interval = app[SETTINGS].sweep_interval
    stop = asyncio.Event()

    async def sweep() -> None:
        redis_down = False
        while not stop.is_set():
            try:
                await runner.sweep(time.time())
            except Exception as exc:
                metrics.failed(exc)
                if not redis_error(exc):
                    log.exception("tournament sweep failed")
                elif not redis_down:  # one line per outage, not four a second
                    log.warning("tournament sweep: Redis unavailable (%s); retrying", exc)
                redis_down = redis_error(exc)
            else:
                if redis_down:
                    log.info("tournament sweep: Redis answers again")
                redis_down = False
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)

    task = asyncio.create_task(sweep(), name="solrace-tournaments")
    yield
    stop.set()
    done, _ = await asyncio.wait({task}, timeout=5.0)
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=2.0)
    await live.close()
