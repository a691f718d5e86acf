"""The typed keys of the aiohttp application (aiohttp's `web.AppKey`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from records.archive import RaceArchive
from server.edge.admission.flood_cooldown import FloodCooldown
from server.edge.admission.limits import ConnectionCount
from server.edge.admission.room_limit import RoomRateLimit
from server.edge.dispatch import Dispatcher
from server.edge.draining import Drain
from server.handlers.service import RaceService
from server.identity.accounts import Accounts
from server.live.connection import Connection, Flusher
from server.live.hub import Hub
from server.live.lobby_live import LobbyLive
from server.metrics import Metrics
from server.redis_io.connect import AnyRedis
from server.redis_io.outage import Outage
from server.settings import Settings
from server.storage.feed import Feed
from server.storage.store import RoomStore

if TYPE_CHECKING:  # they read these keys themselves
    from server.edge.records_lifecycle import Schema
    from server.edge.redis_watch import RedisWatch

__all__ = [
    "ACCOUNTS",
    "ARCHIVE",
    "CLEANUPS",
    "CLIENT_SOCKETS",
    "DISPATCH",
    "DRAIN",
    "FEED",
    "FLOODERS",
    "FLUSHER",
    "HUB",
    "LOBBY_LIVE",
    "METRICS",
    "OUTAGE",
    "PROCESS",
    "RECORDS_DB",
    "RECORDS_SCHEMA",
    "REDIS",
    "REDIS_WATCH",
    "ROOM_LIMIT",
    "SERVICE",
    "SETTINGS",
    "SOCKETS",
    "STORE",
]

SETTINGS = web.AppKey("settings", Settings)
# The Redis client itself: for the stores' wiring (server/edge/app.py), not for handlers.
REDIS: web.AppKey[AnyRedis] = web.AppKey("redis")
STORE: web.AppKey[RoomStore] = web.AppKey("store")  # the only way rooms reach Redis
HUB = web.AppKey("hub", Hub)
FEED: web.AppKey[Feed] = web.AppKey("feed")  # pub/sub between processes (its health only)
# This process's link to Redis: failing since when, cut off (server/edge/redis_watch.py).
OUTAGE = web.AppKey("outage", Outage)
REDIS_WATCH: web.AppKey[RedisWatch] = web.AppKey("redis_watch")
SERVICE = web.AppKey("service", RaceService)
DISPATCH = web.AppKey("dispatch", Dispatcher)  # every client message goes through it
LOBBY_LIVE = web.AppKey("lobby_live", LobbyLive)
METRICS = web.AppKey("metrics", Metrics)
SOCKETS: web.AppKey[set[Connection]] = web.AppKey("sockets")
FLUSHER = web.AppKey("flusher", Flusher)
PROCESS = web.AppKey("process", str)
ROOM_LIMIT = web.AppKey("room_limit", RoomRateLimit)
DRAIN = web.AppKey("drain", Drain)
CLIENT_SOCKETS = web.AppKey("client_sockets", ConnectionCount)  # open WebSockets per client
FLOODERS = web.AppKey("flooders", FloodCooldown)  # addresses closed 1008, kept out a while
CLEANUPS = web.AppKey("cleanups", asyncio.Semaphore)  # closed sockets' clean-ups at once
# The records' database (records/): opened at startup, disposed at cleanup; it refuses
# every connection until its schema is brought up (server/edge/records_lifecycle.py).
RECORDS_DB = web.AppKey("records_db", AsyncEngine)
RECORDS_SCHEMA: web.AppKey[Schema] = web.AppKey("records_schema")
# Players' accounts (server/identity/accounts.py) over the records' PlayerStore.
ACCOUNTS = web.AppKey("accounts", Accounts)
ARCHIVE = web.AppKey("archive", RaceArchive)  # finished races (server/edge/archiving.py)
