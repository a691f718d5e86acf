"""The aiohttp application: `create_app(settings)`.

Resources live in `cleanup_ctx` (the Redis client, the pub/sub feed, the deadline sweeper);
open WebSockets are tracked and closed with GOING_AWAY on shutdown. WebSockets are at
`/ws` (a `?room=` query is a balancer's routing hint, never read here: the join decides the
room); compression is off (it nearly halves throughput for small messages) and frames are
capped at `settings.max_frame`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import math
import time
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Container
from functools import partial

from aiohttp import WSMsgType, web

import protocol as p
from protocol import CloseCode, ErrorCode
from records.players import PlayerStore
from server.edge.admission.client_address import client_address
from server.edge.admission.flood_cooldown import FloodCooldown
from server.edge.admission.limits import ConnectionCount
from server.edge.admission.room_limit import RoomRateLimit
from server.edge.app_keys import (
    ACCOUNTS,
    CLEANUPS,
    CLIENT_SOCKETS,
    DRAIN,
    FLOODERS,
    FLUSHER,
    HUB,
    LOBBY_LIVE,
    METRICS,
    PROCESS,
    RECORDS_DB,
    REDIS,
    ROOM_LIMIT,
    SERVICE,
    SETTINGS,
    SOCKETS,
    STORE,
)
from server.edge.draining import Drain
from server.edge.identity_routes import identity_routes
from server.edge.metrics_port import metrics_listener_ctx
from server.edge.periodic import Periodic
from server.edge.records_lifecycle import records_ctx
from server.edge.replay_routes import replay_routes
from server.edge.routes import MAX_BODY, count_errors, json_errors, routes
from server.edge.tournament_keys import TOUR_LIVE, TOUR_STORE
from server.edge.tournament_lifecycle import tournaments_ctx
from server.edge.tournament_routes import tour_routes
from server.edge.web_client import add_web_client
from server.handlers.service import RaceService
from server.identity.accounts import Accounts
from server.live.connection import (
    Connection,
    Flusher,
    TokenBucket,
    check_alive,
    close_frame,
    process_of,
)
from server.live.connection_log import log_closed, log_opened
from server.live.hub import Hub
from server.live.lobby_live import LobbyLive
from server.metrics import Metrics, redis_error
from server.redis_io.batcher import ScriptBatcher
from server.redis_io.connect import connect
from server.room.race import RaceError
from server.settings import Settings, SettingsError, parse_trusted_proxies
from server.storage.feed import make_feed
from server.tournament.store import TourStore

__all__ = ["create_app", "reap_dead_seats", "sweep_once"]

log = logging.getLogger(__name__)

FLOOD_WINDOW = 10.0  # seconds over which rate-limited frames are counted
CLOSE_TIMEOUT = 1.0  # seconds a flooder has to answer the server's 1008 close frame
REFUSAL_DELAY = 1.0  # seconds before a flooder in its cooldown is answered 429


def create_app(settings: Settings) -> web.Application:
    if not settings.redis_url:
        raise SettingsError("create_app needs redis_url (python -m server starts a Redis)")
    app = web.Application(client_max_size=MAX_BODY, middlewares=[count_errors, json_errors])
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
    app.cleanup_ctx.append(_sweeper_ctx)
    app.cleanup_ctx.append(tournaments_ctx)
    app.cleanup_ctx.append(_liveness_ctx)
    app.cleanup_ctx.append(metrics_listener_ctx)  # after _redis_ctx: it reads app[METRICS]
    app.on_shutdown.append(_close_sockets)
    app.router.add_routes(routes)
    app.router.add_routes(tour_routes)
    app.router.add_routes(replay_routes)
    app.router.add_routes(identity_routes)
    app.router.add_get(p.WS_PATH, websocket)
    add_web_client(app)
    return app


async def _tune_gc(app: web.Application) -> None:
    """Fewer, cheaper garbage collections: what is alive at startup (modules, the engine's
    tables) is frozen out of them, and collections run after more allocations. With
    Python's defaults a full collection over a thousand racers' state paused the event loop
    for 250-550 ms every few seconds under load (measured with gc.callbacks), which was
    most of the fixed-load p99. The price: cyclic garbage waits long for a collection, so
    what a connection leaves must not form cycles (see `forget_traceback`;
    bench/closed_connections.py measures it)."""
    gc.freeze()
    gc.set_threshold(50_000, 50, 100)


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
    )
    await store.load_scripts()
    feed = make_feed(redis, batcher.lean)  # on the batcher's connection when it can
    await feed.start()
    hub = Hub(store, feed)
    lobby = LobbyLive(store, feed)
    feed_reconnects = [0]

    def resubscribed() -> None:
        feed_reconnects[0] += 1
        hub.catch_up_all()
        lobby.reconnected()

    feed.on_reconnect = resubscribed
    sockets = app[SOCKETS]
    metrics = Metrics(
        lambda: len(hub.rooms),
        lambda: len(sockets),
        lambda: {"moves": batcher.reconnects, "pubsub": feed_reconnects[0]},
    )
    app[REDIS], app[STORE], app[HUB], app[METRICS] = redis, store, hub, metrics
    app[TOUR_STORE] = TourStore(redis, batcher)  # the tournaments' own small store
    accounts = Accounts(PlayerStore(app[RECORDS_DB]))
    app[ACCOUNTS] = accounts
    app[SERVICE] = RaceService(settings, store, hub, metrics, accounts)
    app[LOBBY_LIVE] = lobby
    yield
    await lobby.close()
    await hub.close()
    await feed.stop()
    await batcher.close()
    await redis.aclose()


async def sweep_once(hub: Hub, now: float) -> int:
    """Handle every room whose deadline is due; returns how many. Idempotent."""
    store = hub.store
    due = await store.due(now)
    for room, score in due:
        try:
            applied = await store.transact(room, lambda race: race.tick(now), now)
        except RaceError:
            await store.unschedule(room, score)  # the room is gone
            continue
        next_at = applied.race.next_deadline()
        if next_at is None or next_at > score:
            if next_at is not None:
                await store.reschedule(room, next_at)
            else:
                await store.unschedule(room, score)
    return len(due)


CLEANUPS_AT_ONCE = 32  # closed sockets cleaned up at once (server/live/departures.py batches them)
PROCESS_TTL = 10.0  # seconds a process is thought alive after its last heartbeat
# Seconds a process must be seen without a heartbeat before it is reaped: after a Redis
# outage live processes beat again within HEARTBEAT_EVERY.
HEARTBEAT_EVERY = 2.0
MISSING_FOR = 2 * HEARTBEAT_EVERY
REAP_EVERY = 5.0


async def reap_dead_seats(
    hub: Hub,
    now: float,
    here: str | None = None,
    open_here: Container[str] = (),
    missing: dict[str, float] | None = None,
) -> int:
    """Sockets that lived in a process that died (no heartbeat) no longer hold their
    seats: each is let go as if it had closed (server/room/race.py decides what follows: a seat
    with another socket stays connected, one with none starts its grace clock). Lobby
    seats too: a dead client must not hold a seat forever. The rooms looked at are the
    ones the dead process registered (`RoomStore.hold`, at each join), however many
    others there are. With `missing` (this reaper's memory: process -> when it was first
    seen without a heartbeat), a process is reaped only once seen missing for
    MISSING_FOR: right after a Redis outage a live process may not have beaten again
    yet. So are sockets of this process (`here`) that are no longer open (`open_here`) in
    the rooms of `hub.unreleased`: their departure could not be written (Redis was down
    then), and the seat would otherwise wait for them forever. Returns how many sockets."""
    store = hub.store
    reaped = 0
    for process in await store.processes():
        if process == here:
            continue
        if await store.process_alive(process):
            if missing is not None:
                missing.pop(process, None)
            continue
        if missing is not None and now - missing.setdefault(process, now) < MISSING_FOR:
            continue
        await store.declare_dead(process)  # first: if it only stalled, it will know
        rooms = await store.rooms_held(process)
        reaped += await _let_go(hub, rooms, now, partial(_of_process, process))
        await store.drop_process(process)  # only once all its rooms are done
        if missing is not None:
            missing.pop(process, None)
    unreleased = hub.unreleased
    if here is not None and unreleased:
        rooms = sorted(unreleased)
        unreleased.clear()  # a room failing again meanwhile is added back, not lost
        try:
            reaped += await _let_go(
                hub, rooms, now, lambda conn: process_of(conn) == here and conn not in open_here
            )
        except BaseException:
            unreleased.update(rooms)
            raise
    return reaped


def _of_process(process: str, conn: str) -> bool:
    return process_of(conn) == process


async def _let_go(hub: Hub, rooms: list[str], now: float, gone: Callable[[str], bool]) -> int:
    """Let go of the sockets `gone` says are gone, in `rooms` still open; how many."""
    statuses = await hub.store.statuses(rooms)
    count = 0
    for room in rooms:
        if statuses.get(room) not in ("lobby", "countdown", "running"):
            continue
        loaded = await hub.store.load(room)
        if loaded is None:
            continue
        seats = loaded.race.seats.items()
        leaving = [(index, conn) for index, seat in seats for conn in seat.conns if gone(conn)]
        # Together: one transition for the room (server/live/departures.py). A room gone in
        # between has nobody left to let go; any other refusal (too busy) is raised, and
        # the whole sweep is tried again.
        try:
            await asyncio.gather(*(hub.departures.left(room, i, c, now) for i, c in leaving))
        except RaceError as err:
            if err.code is not ErrorCode.UNKNOWN_ROOM:
                raise
        count += len(leaving)
    return count


def _close_taken_for_dead(sockets: Collection[Connection]) -> None:
    """The others took this process for dead (it stalled past PROCESS_TTL: a paused host,
    a swap storm) and let go of its sockets: their seats are away, grace clocks running,
    while the sockets are still open here. Close them (1001, as when stopping): each client
    comes back with its token, and its seat is held again (docs/protocol.md, section 6)."""
    log.warning(
        "this process was taken for dead (no heartbeat for over %g s) and its sockets let "
        "go: closing its %d sockets (1001) so that their clients come back",
        PROCESS_TTL,
        len(sockets),
    )
    for conn in list(sockets):
        conn.close_soon(CloseCode.GOING_AWAY, "this server stalled: reconnect")


class OpenSockets:
    """The ids of this process's open sockets, read again when one is not found: a
    socket opened since the last reading must not be taken for a closed one."""

    def __init__(self, sockets: Collection[Connection]) -> None:
        self.sockets = sockets
        self.ids = {conn.id for conn in sockets}

    def __contains__(self, conn_id: object) -> bool:
        if conn_id not in self.ids:
            self.ids = {conn.id for conn in self.sockets}
        return conn_id in self.ids


async def _sweeper_ctx(app: web.Application) -> AsyncIterator[None]:
    hub = app[HUB]
    process = app[PROCESS]
    sockets = app[SOCKETS]
    beat = reap = 0.0
    missing: dict[str, float] = {}  # processes seen without a heartbeat, since when

    async def step() -> None:
        nonlocal beat, reap
        now = time.time()
        try:
            if now >= beat:
                beat = now + HEARTBEAT_EVERY
                if not await hub.store.heartbeat(process, PROCESS_TTL):
                    _close_taken_for_dead(sockets)
            await sweep_once(hub, now)
            if now >= reap:
                reap = now + REAP_EVERY
                await reap_dead_seats(hub, now, process, OpenSockets(sockets), missing)
        except Exception:
            missing.clear()  # Redis trouble: every process gets MISSING_FOR afresh after it
            raise

    sweeper = Periodic(
        "solrace-sweeper",
        step,
        app[SETTINGS].sweep_interval,
        what="deadline sweep",
        log=log,
        metrics=app[METRICS],
    )
    sweeper.start()
    yield
    await sweeper.stop()
    with contextlib.suppress(Exception):
        await hub.store.forget_process(process)


async def _liveness_ctx(app: web.Application) -> AsyncIterator[None]:
    """Ping idle sockets and drop dead ones (`check_alive`), every quarter heartbeat."""
    heartbeat = app[SETTINGS].heartbeat
    if not heartbeat:
        yield
        return
    sockets = app[SOCKETS]

    async def watch() -> None:
        while True:
            await asyncio.sleep(heartbeat / 4)
            dropped = check_alive(list(sockets), time.monotonic(), heartbeat)
            if dropped:
                log.info("dropped %d sockets that did not answer a ping", dropped)

    task = asyncio.create_task(watch(), name="solrace-liveness")
    yield
    task.cancel()
    await asyncio.wait({task})


async def _close_sockets(app: web.Application) -> None:
    sockets = app[SOCKETS]
    conns = list(sockets)
    for conn in conns:
        conn.stop()
    await asyncio.gather(
        *(
            conn.ws.close(code=CloseCode.GOING_AWAY, message=b"server shutting down")
            for conn in conns
        ),
        return_exceptions=True,
    )


async def websocket(request: web.Request) -> web.WebSocketResponse:
    """A WebSocket, counted against its client's cap (`max_connections_per_address`: the
    client named by a trusted proxy, see server/edge/admission/client_address.py;
    server/edge/http_server.py
    counts direct peers before any HTTP)."""
    if request.app[DRAIN].draining:
        # A balancer retries this on another process (deploy/haproxy.cfg: retry-on 503), so
        # no new player lands here in the seconds before its health check notices.
        raise web.HTTPServiceUnavailable(
            text="this process is shutting down: connect again", headers={"Retry-After": "0"}
        )
    settings = request.app[SETTINGS]
    proxies = parse_trusted_proxies(settings.trusted_proxies)
    address = client_address(
        request.remote,
        request.headers.get("X-Forwarded-For"),
        proxies,
        limit_loopback=settings.limit_loopback,
    )
    counts = request.app[CLIENT_SOCKETS]
    if address is not None and not counts.acquire(address):
        raise web.HTTPTooManyRequests(
            text=f"too many connections from {address} (at most {counts.cap})"
        )
    try:
        if address is not None and request.app[FLOODERS].refused_for(address, time.monotonic()):
            await _refuse_flooder(request, address)
        return await _websocket(request, address)
    finally:
        if address is not None:
            counts.release(address)


async def _refuse_flooder(request: web.Request, address: str) -> None:
    """429 for a client in its flood cooldown, before any WebSocket is made, answered
    REFUSAL_DELAY late: a flooder that tries again at once then makes one refused request
    per second and socket (each socket counted against its cap while it waits), not
    thousands, which cost more than its floods did."""
    await asyncio.sleep(REFUSAL_DELAY)
    wait = request.app[FLOODERS].refused_for(address, time.monotonic())
    raise web.HTTPTooManyRequests(
        text=f"{address} flooded a socket: its new connections are refused for {wait:.0f} s",
        headers={"Retry-After": str(math.ceil(wait))},
    )


async def _websocket(request: web.Request, address: str | None) -> web.WebSocketResponse:
    app = request.app
    settings = app[SETTINGS]
    service = app[SERVICE]
    ws = web.WebSocketResponse(
        compress=False,
        # aiohttp refuses a message of max_msg_size bytes or more; ours may be max_frame.
        max_msg_size=settings.max_frame + 1,
        heartbeat=None,  # one sweep for all sockets instead: _liveness_ctx
        autoping=False,  # pongs must reach the loop below (they prove the peer alive)
        # A client's close is answered after the cleanup below: once its close completes,
        # its quick-match ticket and presence are gone (a new request cannot meet them).
        autoclose=False,
    )
    await ws.prepare(request)
    conn = Connection(
        ws=ws,
        id=f"{app[PROCESS]}-{uuid.uuid4().hex[:12]}",  # which process holds the socket
        max_buffer=settings.send_buffer,
        bucket=TokenBucket(settings.rate_per_second, settings.rate_burst),
    )
    conn.transport = request.transport
    conn.flusher = app[FLUSHER]
    conn.on_drop = lambda _conn: app[METRICS].dropped.inc()
    app[SOCKETS].add(conn)
    conn.seen = window_start = opened = time.monotonic()
    log_opened(conn.id, address)
    limited = frames = 0
    flooded = False
    try:
        async for frame in ws:
            frames += 1
            now = conn.seen = time.monotonic()
            kind = frame.type
            if kind is WSMsgType.BINARY:
                conn.binary = True
                message = p.decode_msgpack(frame.data)
            elif kind is WSMsgType.TEXT:
                conn.binary = False
                message = p.decode_json(frame.data)
            elif kind is WSMsgType.PING or kind is WSMsgType.PONG:
                # Control frames spend the same budget: each ping costs a pong to write,
                # and a flood of them delayed every other socket's answers.
                message = None
            else:
                break
            if not conn.bucket.take(now):
                if now - window_start > FLOOD_WINDOW:
                    window_start, limited = now, 0
                limited += 1
                if message is None:
                    pass  # a control frame dropped: left unanswered, counted towards 1008
                elif isinstance(message, p.Move | p.Undo):
                    # A move waits for its answer: say which seq was dropped, to resend.
                    service.refuse(
                        conn, message.seq, ErrorCode.RATE_LIMITED, "slow down: resend this move"
                    )
                elif limited == 1 or limited % 10 == 0:
                    service.error(
                        conn, ErrorCode.RATE_LIMITED, "slow down: message dropped", message
                    )
                if limited >= settings.flood_close_after:
                    # The rate_limited errors are already written (sending is synchronous).
                    # Failed, not negotiated (RFC 6455 7.1.7): the close frame goes out and
                    # nothing more is read, not even the frames aiohttp has parsed already
                    # (its close() would read each of them, tens of milliseconds for a
                    # flood of pings); the client has CLOSE_TIMEOUT to read the frame before
                    # the connection is closed.
                    conn.stop()
                    if address is not None and settings.flood_cooldown:
                        # From now on, not after the close: a flooder that reconnects as
                        # soon as it reads the close frame is refused already.
                        app[FLOODERS].flooded(address, now)
                        log.info(
                            "%s flooded socket %s: its new WebSockets are refused for %g s",
                            address,
                            conn.id,
                            settings.flood_cooldown,
                        )
                    transport = conn.transport
                    if transport is not None and not transport.is_closing():
                        transport.pause_reading()
                        transport.write(close_frame(CloseCode.POLICY, "flood"))
                        await asyncio.sleep(CLOSE_TIMEOUT)
                        transport.close()
                    flooded = True
                    break
                continue
            if message is None:
                if kind is WSMsgType.PING:
                    await ws.pong(frame.data)
                continue
            if isinstance(message, p.Unexpected):
                service.error(conn, message.code, message.message, message)
                continue
            if isinstance(message, p.TourWatch | p.TourUnwatch):
                await app[TOUR_LIVE].handle(conn, message)
                continue
            if isinstance(message, p.LobbyWatch | p.LobbyUnwatch):
                await app[LOBBY_LIVE].handle(conn, message)
                continue
            await service.handle(conn, message)
        if ws.exception() is not None:
            log.debug("socket %s: %s", conn.id, ws.exception())
    finally:
        app[SOCKETS].discard(conn)
        conn.stop()
        # A thousand sockets can close at one moment (a proxy, a network or a client
        # process gone). Their clean-ups take turns, CLEANUPS_AT_ONCE at a time: the
        # other rooms' moves are answered in between, not after all of them (with every
        # clean-up at once they waited up to 135 ms: `python -m bench.load --scenarios
        # exodus`).
        async with app[CLEANUPS]:
            try:
                await app[LOBBY_LIVE].closed(conn)  # first: it needs no Redis
                await service.closed(conn)
                await app[TOUR_LIVE].closed(conn)
            except Exception as exc:
                app[METRICS].failed(exc)
                if conn.room is not None and conn.seat is not None:
                    app[HUB].unreleased.add(conn.room)  # the reaper lets the seat go later
                if not redis_error(exc):
                    log.exception("cleanup of socket %s failed", conn.id)
                else:  # an outage, not a bug: one line, no traceback
                    log.warning("cleanup of socket %s: Redis unavailable: %s", conn.id, exc)
        if not ws.closed:
            await ws.close(drain=False)
        forget_traceback(ws)
        # A flood's connection is failed under aiohttp (which then says 1006): say 1008.
        code = CloseCode.POLICY if flooded else ws.close_code

        log_closed(conn.id, code, time.monotonic() - opened, frames)
    return ws


def forget_traceback(ws: web.WebSocketResponse) -> None:
    """aiohttp keeps the error that ended a socket (e.g. writing its close frame to a peer
    already gone), and the tracebacks of that error and of those it was raised while
    handling (a peer gone without a close frame: the end of stream the reader raised)
    hold the frames of the socket's own methods: a reference cycle through everything the
    connection held (request, transport, buffers). With the raised collection thresholds
    (`_tune_gc`) such cycles waited for a full collection, tens of thousands of
    connections later: RSS grew by some 10-18 MiB per 2,000 connections opened and closed.
    Without the tracebacks they go at once, by refcount."""
    chain = [ws.exception()]
    seen: set[int] = set()
    while chain:
        error = chain.pop()
        if error is not None and id(error) not in seen:
            seen.add(id(error))
            error.__traceback__ = None
            chain += (error.__cause__, error.__context__)
