"""The tournament parts of the aiohttp application (typed `web.AppKey`s)."""

from __future__ import annotations

from aiohttp import web

from server.tournament.live import TourLive
from server.tournament.runner import TourRunner
from server.tournament.store import TourStore

__all__ = ["TOUR_LIVE", "TOUR_RUNNER", "TOUR_STORE"]

TOUR_STORE = web.AppKey("tour_store", TourStore)
TOUR_RUNNER = web.AppKey("tour_runner", TourRunner)
TOUR_LIVE = web.AppKey("tour_live", TourLive)
