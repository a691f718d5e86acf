"""The WebSocket at `/ws`: admission (not while draining or cut off from Redis, the
client's socket cap, its flood cooldown), then
the loop that reads its frames, spends its message budget, hands each message to the
dispatcher (server/edge/dispatch.py) and cleans up when it closes; the sweep that pings idle
sockets and drops dead ones; closing every socket on shutdown. Compression is off (it
nearly halves throughput for small messages) and frames are capped at
`settings.max_frame`; a `?room=` query is a balancer's routing hint, never read here: the
join decides the room.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import uuid
from collections.abc import AsyncIterator

from aiohttp import WebSocketError, WSMsgType, web

import protocol as p
from protocol import CloseCode, ErrorCode
from server.edge.admission.client_address import client_address
from server.edge.admission.upgrade import upgrade_refusal
from server.edge.app_keys import (
    CLEANUPS,
    CLIENT_SOCKETS,
    DISPATCH,
    DRAIN,
    FLOODERS,
    FLUSHER,
    HUB,
    METRICS,
    OUTAGE,
    PROCESS,
    REDIS_WATCH,
    SERVICE,
    SETTINGS,
    SOCKETS,
)
from server.edge.move_lane import GameSocket
from server.live.connection import Connection, TokenBucket, check_alive
from server.live.connection_log import log_closed, log_opened
from server.live.frames import close_frame
from server.metrics import redis_error
from server.settings import parse_trusted_proxies

__all__ = [
    "CLEANUPS_AT_ONCE",
    "close_sockets",
    "forget_traceback",
    "liveness_ctx",
    "websocket",
]

log = logging.getLogger(__name__)

FLOOD_WINDOW = 10.0  # seconds over which rate-limited frames are counted
CLOSE_TIMEOUT = 1.0  # seconds a flooder has to answer the server's 1008 close frame
REFUSAL_DELAY = 1.0  # seconds before a flooder in its cooldown is answered 429
CLEANUPS_AT_ONCE = 32  # closed sockets cleaned up at once (server/live/departures.py batches them)


async def websocket(request: web.Request) -> web.WebSocketResponse:
    """A WebSocket, counted against its client's cap (`max_connections_per_address`: the
    client named by a trusted proxy, see server/edge/admission/client_address.py;
    server/edge/http_server.py
    counts direct peers before any HTTP)."""
    refusal = upgrade_refusal(request.headers)
    if refusal is not None:
        raise refusal
    if request.app[DRAIN].draining:
        # A balancer retries this on another process (deploy/haproxy.cfg: retry-on 503), so
        # no new player lands here in the seconds before its health check notices.
        raise web.HTTPServiceUnavailable(
            text="this process is shutting down: connect again", headers={"Retry-After": "0"}
        )
    if request.app[OUTAGE].cut_off:
        await request.app[REDIS_WATCH].check()  # perhaps back since the last check
    if request.app[OUTAGE].cut_off:
        # Its players have been handed on: the balancer retries this on a process that
        # can serve them (server/edge/redis_watch.py). A shorter outage is borne on the
        # socket (a join answered `unavailable` is asked again).
        raise web.HTTPServiceUnavailable(
            text="this process cannot reach its storage now: connect again",
            headers={"Retry-After": "1"},
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
        # When one of its sockets closes is unknowable: a second is a polite first wait.
        raise web.HTTPTooManyRequests(
            text=f"too many connections from {address} (at most {counts.cap}): close one",
            headers={"Retry-After": "1"},
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
    thousands, which cost more than its floods did. A cooldown over by then refuses
    nothing: the upgrade goes on."""
    await asyncio.sleep(REFUSAL_DELAY)
    wait = request.app[FLOODERS].refused_for(address, time.monotonic())
    if wait <= 0:
        return
    raise web.HTTPTooManyRequests(
        text=f"{address} flooded a socket: its new connections are refused for {wait:.0f} s",
        headers={"Retry-After": str(math.ceil(wait))},
    )


async def _websocket(request: web.Request, address: str | None) -> web.WebSocketResponse:
    app = request.app
    settings = app[SETTINGS]
    ws = GameSocket(
        compress=False,
        # aiohttp refuses a message of max_msg_size bytes or more; ours may be max_frame.
        max_msg_size=settings.max_frame + 1,
        heartbeat=None,  # one sweep for all sockets instead: liveness_ctx
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
    ws.lane(conn, app[DISPATCH].now)
    # The socket's frames are read and answered in a task of their own. Under the request's
    # task they would run beneath aiohttp's handler and every middleware: each frame read
    # and each move's wait for Redis resumes and suspends that whole chain of coroutines,
    # twice per move. Cancelling the request's task cancels this one, which cleans up as
    # before.
    return await asyncio.create_task(_serve(app, ws, conn, address), name=f"socket {conn.id}")


async def _serve(
    app: web.Application, ws: GameSocket, conn: Connection, address: str | None
) -> web.WebSocketResponse:
    settings = app[SETTINGS]
    service = app[SERVICE]
    dispatch = app[DISPATCH]
    app[SOCKETS].add(conn)
    conn.seen = window_start = opened = time.monotonic()
    log_opened(conn.id, address)
    limited = 0  # frames dropped in the flood window (a flood closes the socket)
    dropped = 0  # of them, messages answered by an `error` (the first, every 10th)
    flooded = False
    try:
        while True:
            conn.idle = True  # a move may be judged as it is read (server/edge/move_lane.py)
            frame = await ws.receive()
            conn.idle = False
            # The moves judged as they were read come first, answered in their own format.
            await conn.after_move()
            kind = frame.type
            if kind is WSMsgType.CLOSE or kind is WSMsgType.CLOSING or kind is WSMsgType.CLOSED:
                break
            conn.frames += 1
            now = conn.seen = time.monotonic()
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
                if kind is WSMsgType.ERROR and isinstance(frame.data, WebSocketError):
                    # aiohttp failed the connection with this code (1009: a frame over
                    # max_frame; 1007: text that is not UTF-8); its own close_code then
                    # says what came back, or 1006.
                    conn.close_code = frame.data.code
                break
            if not conn.bucket.take(now):
                if now - window_start > FLOOD_WINDOW:
                    window_start, limited, dropped = now, 0, 0
                limited += 1
                if message is None:
                    pass  # a control frame dropped: left unanswered, counted towards 1008
                elif isinstance(message, p.Move | p.Undo):
                    # A move waits for its answer: say which seq was dropped, to resend.
                    service.refuse(
                        conn, message.seq, ErrorCode.RATE_LIMITED, "slow down: resend this move"
                    )
                else:
                    dropped += 1
                    if dropped == 1 or dropped % 10 == 0:
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
            await dispatch.handle(conn, message)
        if ws.exception() is not None:
            log.debug("socket %s: %s", conn.id, ws.exception())
    finally:
        conn.idle = False
        await conn.after_move()  # the verdicts on its moves in flight first
        ws.drop_lane()
        app[SOCKETS].discard(conn)
        conn.stop()
        # A thousand sockets can close at one moment (a proxy, a network or a client
        # process gone). Their clean-ups take turns, CLEANUPS_AT_ONCE at a time: the
        # other rooms' moves are answered in between, not after all of them (with every
        # clean-up at once they waited up to 135 ms: `python -m bench.load --scenarios
        # exodus`).
        async with app[CLEANUPS]:
            try:
                await dispatch.closed(conn)
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
        # The code this server closed with, if it did (a flood's connection is failed
        # under aiohttp, which then says 1006: 1008); else the client's.
        code = CloseCode.POLICY if flooded else conn.close_code or ws.close_code

        log_closed(conn.id, code, time.monotonic() - opened, conn.frames)
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


async def liveness_ctx(app: web.Application) -> AsyncIterator[None]:
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


async def close_sockets(app: web.Application) -> None:
    """On shutdown: every open socket is closed GOING_AWAY (its client comes back elsewhere)."""
    sockets = app[SOCKETS]
    conns = list(sockets)
    for conn in conns:
        conn.stop()
        conn.close_code = CloseCode.GOING_AWAY
    await asyncio.gather(
        *(
            conn.ws.close(code=CloseCode.GOING_AWAY, message=b"server shutting down")
            for conn in conns
        ),
        return_exceptions=True,
    )
