"""The tournaments' part of the application's life: their runner and live pushes are
built over their store (made beside the room store, server/edge/app.py), and a sweep loop
advances every tournament that is due (each process runs one; server/tournament/runner.py
says why that is safe)."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator

from aiohttp import web

from server.edge.app_keys import HUB, METRICS, PROCESS, REDIS_WATCH, SERVICE, SETTINGS, STORE
from server.edge.periodic import Periodic
from server.edge.tournament_keys import TOUR_LIVE, TOUR_RUNNER, TOUR_STORE
from server.tournament.live import TourLive
from server.tournament.rooms import StoreRooms
from server.tournament.runner import TourRunner

__all__ = ["tournaments_ctx"]

log = logging.getLogger(__name__)


async def tournaments_ctx(app: web.Application) -> AsyncIterator[None]:
    store, hub, metrics, tours = app[STORE], app[HUB], app[METRICS], app[TOUR_STORE]
    runner = TourRunner(tours, StoreRooms(store), app[PROCESS])
    live = TourLive(tours, hub.feed, app[REDIS_WATCH].away)  # started before the tournaments
    app[TOUR_RUNNER], app[TOUR_LIVE] = runner, live
    app[SERVICE].ctx.heat_open = runner.line_open  # the watch of a finished heat
    sweeper = Periodic(
        "solrace-tournaments",
        lambda: runner.sweep(time.time()),
        app[SETTINGS].sweep_interval,
        what="tournament sweep",
        log=log,
        metrics=metrics,
    )
    sweeper.start()
    yield
    await sweeper.stop(timeout=5.0)
    await live.close()
