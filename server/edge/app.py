"""The aiohttp application: `create_app(settings)` wires the parts together.

Resources live in `cleanup_ctx`, in order: the Redis client with the stores, the pub/sub
feed, the rooms and the race service (`_redis_ctx`); the watch on the link to Redis
(server/edge/redis_watch.py); the deadline sweeper and reaper
(server/edge/sweeper.py); the tournaments (server/edge/tournament_lifecycle.py); the
dispatcher every client message goes through (server/edge/dispatch.py); the sockets'
liveness sweep; the metrics listener. The WebSocket itself is server/edge/websocket.py; its
open sockets are tracked and closed with GOING_AWAY on shutdown.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import uuid
from collections.abc import AsyncIterator

from aiohttp import web

import protocol as p
from records.players import PlayerStore
from server.edge.admission.flood_cooldown import FloodCooldown
from server.edge.admission.limits import ConnectionCount
from server.edge.admission.room_limit import RoomRateLimit
from server.edge.app_keys import (
    ACCOUNTS,
    CLEANUPS,
    CLIENT_SOCKETS,
    DISPATCH,
    DRAIN,
    FEED,
    FLOODERS,
    FLUSHER,
    HUB,
    LOBBY_LIVE,
    METRICS,
    PROCESS,
    RECORDS_DB,
    REDIS,
    REDIS_WATCH,
    ROOM_LIMIT,
    SERVICE,
    SETTINGS,
    SOCKETS,
    STORE,
)
from server.edge.archiving import archiving_ctx
from server.edge.daily_routes import daily_ctx, daily_routes
from server.edge.dispatch import Dispatcher
from server.edge.draining import Drain
from server.edge.identity_routes import identity_routes
from server.edge.loop_health import loop_health_ctx
from server.edge.metrics_port import metrics_listener_ctx
from server.edge.records_lifecycle import records_ctx
from server.edge.records_routes import records_routes
from server.edge.redis_first import redis_first
from server.edge.redis_watch import redis_watch_ctx
from server.edge.replay_routes import replay_routes
from server.edge.routes import MAX_BODY, count_errors, json_errors, routes
from server.edge.sweeper import sweeper_ctx
from server.edge.tournament_keys import TOUR_LIVE, TOUR_STORE
from server.edge.tournament_lifecycle import tournaments_ctx
from server.edge.tournament_routes import tour_routes
from server.edge.web_client import add_web_client
from server.edge.websocket import CLEANUPS_AT_ONCE, close_sockets, liveness_ctx, websocket
from server.handlers.service import RaceService
from server.identity.accounts import Accounts
from server.identity.signin_limit import SignInLimit
from server.live.connection import Flusher
from server.live.hub import Hub
from server.live.lobby_live import LobbyLive
from server.metrics import Metrics
from server.redis_io.batcher import ScriptBatcher
from server.redis_io.connect import connect
from server.settings import Settings, SettingsError
from server.storage.feed import make_feed
from server.tournament.store import TourStore

__all__ = ["GC_THRESHOLD", "create_app"]

log = logging.getLogger(__name__)


def create_app(settings: Settings) -> web.Application:
    if not settings.redis_url:
        raise SettingsError("create_app needs redis_url (python -m server starts a Redis)")
    app = web.Application(
        client_max_size=MAX_BODY, middlewares=[count_errors, json_errors, redis_first]
    )
    app[SETTINGS] = settings
    app[ROOM_LIMIT] = RoomRateLimit(settings.room_rate)
    app[SOCKETS] = set()
    app[CLIENT_SOCKETS] = ConnectionCount(settings.max_connections_per_address)
    app[FLOODERS] = FloodCooldown(settings.flood_cooldown)
    app[CLEANUPS] = asyncio.Semaphore(CLEANUPS_AT_ONCE)
    app[PROCESS] = uuid.uuid4().hex[:10]  # this server process, for its heartbeat key
    app[FLUSHER] = Flusher()
    app[DRAIN] = Drain()  # begun by python -m server on SIGTERM
    app.on_startup.append(_tune_gc)
    app.cleanup_ctx.append(records_ctx)  # before Redis: a race's end is archived into it
    app.cleanup_ctx.append(_redis_ctx)
    app.cleanup_ctx.append(redis_watch_ctx)
    app.cleanup_ctx.append(sweeper_ctx)
    app.cleanup_ctx.append(tournaments_ctx)
    app.cleanup_ctx.append(archiving_ctx)  # after tournaments: a heat's one replay is theirs
    app.cleanup_ctx.append(daily_ctx)
    app.cleanup_ctx.append(_dispatch_ctx)  # after both: it routes to their parts
    app.cleanup_ctx.append(liveness_ctx)
    app.cleanup_ctx.append(loop_health_ctx)  # after _redis_ctx: it writes app[METRICS]
    app.cleanup_ctx.append(metrics_listener_ctx)  # after _redis_ctx: it reads app[METRICS]
    app.on_shutdown.append(close_sockets)
    app.router.add_routes(routes)
    app.router.add_routes(tour_routes)
    app.router.add_routes(replay_routes)
    app.router.add_routes(identity_routes)
    app.router.add_routes(records_routes)
    app.router.add_routes(daily_routes)
    app.router.add_get(p.WS_PATH, websocket)
    add_web_client(app)
    return app


GC_THRESHOLD = (50_000, 50, 100)


async def _tune_gc(app: web.Application) -> None:
    """Fewer, cheaper garbage collections: what is alive at startup (modules, the engine's
    tables) is frozen out of them, and collections run after more allocations. With
    Python's defaults a full collection over a thousand racers' state paused the event loop
    for 250-550 ms every few seconds under load (measured with gc.callbacks), which was
    most of the fixed-load p99. The price: cyclic garbage waits long for a collection, so
    what a connection leaves must not form cycles (see `forget_traceback`, server/edge/websocket.py;
    bench/closed_connections.py measures it)."""
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)


async def _redis_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[SETTINGS]
    assert settings.redis_url
    redis = await connect(settings.redis_url)  # one node, or any node of a cluster
    batcher = ScriptBatcher(redis, settings.batch_max)
    from server.storage.store import RedisRoomStore

    store = RedisRoomStore(
        redis,
        batcher,
        event_log=settings.event_log,
        room_ttl=settings.room_ttl,
        lobby_ttl=settings.lobby_ttl,
        empty_ttl=settings.empty_ttl,
    )
    await store.load_scripts()
    feed = make_feed(redis, batcher.lean)  # on the batcher's connection when it can
    await feed.start()
    hub = Hub(store, feed)

    async def away() -> str | None:
        return await app[REDIS_WATCH].away() if REDIS_WATCH in app else None

    lobby = LobbyLive(store, feed, away=away)
    feed_reconnects = [0]

    def resubscribed() -> None:
        feed_reconnects[0] += 1
        hub.catch_up_all()
        lobby.reconnected()
        if SERVICE in app:
            app[SERVICE].quick.reconnected()

    feed.on_reconnect = resubscribed
    sockets = app[SOCKETS]
    metrics = Metrics(
        lambda: len(hub.rooms),
        lambda: len(sockets),
        lambda: {"moves": batcher.reconnects, "pubsub": feed_reconnects[0]},
    )
    app[REDIS], app[STORE], app[HUB], app[METRICS] = redis, store, hub, metrics
    app[FEED] = feed
    app[TOUR_STORE] = TourStore(redis, batcher)  # the tournaments' own small store
    accounts = Accounts(PlayerStore(app[RECORDS_DB]), SignInLimit(store))
    app[ACCOUNTS] = accounts
    app[SERVICE] = RaceService(settings, store, hub, metrics, accounts, away)
    app[LOBBY_LIVE] = lobby
    yield
    await lobby.close()
    await hub.close()
    await feed.stop()
    await batcher.close()
    await redis.aclose()


async def _dispatch_ctx(app: web.Application) -> AsyncIterator[None]:
    app[DISPATCH] = Dispatcher(app[SERVICE], app[LOBBY_LIVE], app[TOUR_LIVE])
    yield
