"""Fan-out between server processes: Redis pub/sub behind a small interface.

Every event a room logs is also published on its channel (by the Lua scripts); each
process subscribes to the channels of the rooms its sockets are in, so events reach every
process the same way, whether one runs or twenty. Quick-match pairings travel the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

import hiredis
from redis.exceptions import RedisError

from server.redis_io.cluster import Address
from server.redis_io.connect import AnyRedis, tcp_nodes
from server.redis_io.resp import RespConnection
from server.redis_io.resp_encode import encode_command
from server.storage.keys import CONTROL

__all__ = [
    "IDLE_CHECK",
    "OUTAGE_WAIT",
    "RECONNECT_BACKOFF",
    "SUBSCRIBE_WAIT",
    "Feed",
    "LeanFeed",
    "RedisFeed",
    "make_feed",
]

log = logging.getLogger(__name__)

Handler = Callable[[bytes], None]

_CONTROL = CONTROL  # always subscribed: redis-py's listener needs one channel
IDLE_CHECK = 5.0  # seconds of silence before an idle subscription is asked to answer
SUBSCRIBE_WAIT = 5.0  # seconds Redis has to confirm a SUBSCRIBE sent on a live connection
# Seconds a subscription asked for while the connection is being made again waits for the
# reconnect: a Redis restart (process start, AOF load, on a loaded machine) takes seconds,
# and the join waiting on it must get in once Redis is back, not fail mid-outage. Below
# the client's 15 s answer deadline (client_cli/seat.py), so it hears `unavailable` first.
OUTAGE_WAIT = 12.0
RECONNECT_BACKOFF = (0.05, 0.5)  # first and longest pause between two reconnect attempts


class Feed(Protocol):
    """One handler per channel. `unsubscribe` names the handler it takes away: a channel
    subscribed again since (a room this process closes and opens again at once, a racer
    back on a new socket) belongs to its new handler, and keeps its subscription."""

    async def subscribe(self, channel: str, handler: Handler) -> None: ...
    async def unsubscribe(self, channel: str, handler: Handler) -> None: ...
    def problem(self) -> str | None: ...
    # Redis answers again: connect again now, not after the backoff's pause, waiting for
    # it `within` seconds at most (a join is refused while the feed is down).
    async def reconnect_now(self, within: float) -> None: ...


def _owned(handlers: dict[str, Handler], channel: str, handler: Handler) -> bool:
    """Take `channel` from `handlers` if `handler` is its handler now; whether it was."""
    if handlers.get(channel) != handler:  # `==`: a bound method is made anew each time
        return False
    del handlers[channel]
    return True


class RedisFeed:
    """One pub/sub connection per process; handlers run in the listener task, in order.

    redis-py connects again and subscribes every channel again by itself; what was
    published in between is lost to pub/sub, so once the listener reads again after a
    failure, `on_reconnect` has the rooms read it from their logs (as LeanFeed does)."""

    def __init__(self, redis: AnyRedis) -> None:
        self._pubsub: Any = redis.pubsub(ignore_subscribe_messages=True)
        self._handlers: dict[str, Handler] = {}
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._failing = False
        self.on_reconnect: Callable[[], None] | None = None

    def problem(self) -> str | None:
        """What keeps events from arriving now (None: subscribed and listening)."""
        return "pub/sub connection lost; reconnecting" if self._failing else None

    async def reconnect_now(self, within: float) -> None:
        """redis-py's listener connects again on its own schedule."""

    async def start(self) -> None:
        await self._pubsub.subscribe(_CONTROL)
        self._task = asyncio.create_task(self._listen(), name="solrace-feed")

    async def stop(self) -> None:
        self._stopping = True  # redis-py may swallow a cancel: the loop also checks this
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=3.0)
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()

    async def subscribe(self, channel: str, handler: Handler) -> None:
        self._handlers[channel] = handler
        await self._pubsub.subscribe(channel)

    async def unsubscribe(self, channel: str, handler: Handler) -> None:
        if _owned(self._handlers, channel, handler):
            await self._pubsub.unsubscribe(channel)

    async def _listen(self) -> None:
        while not self._stopping:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:  # an outage: one line for all of it
                if not self._failing:
                    log.warning("pub/sub connection lost (%s); reconnecting", exc)
                self._failing = True
                await asyncio.sleep(0.5)
                continue
            except Exception:
                log.exception("pub/sub listener failed; retrying")
                await asyncio.sleep(0.5)
                continue
            if self._failing:  # connected and subscribed again
                self._failing = False
                log.info("pub/sub connection made again")
                if self.on_reconnect is not None:
                    self.on_reconnect()
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"]
            handler = self._handlers.get(
                channel.decode() if isinstance(channel, bytes) else channel
            )
            if handler is None:
                continue
            try:
                handler(message["data"])
            except Exception:
                log.exception("feed handler failed")


class _SubscriberProtocol(asyncio.Protocol):
    def __init__(self, feed: LeanFeed) -> None:
        self.feed = feed
        self.reader = hiredis.Reader()
        self.transport: Any = None
        self.heard = asyncio.get_running_loop().time()  # when data last came

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.heard = asyncio.get_running_loop().time()
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not False:
            self.feed._dispatch(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.feed._lost(self)


class LeanFeed:
    """The same feed on its own lean connection: hiredis parses, and each message is
    handled right in `data_received`, with no task switch and no per-message timeout
    (redis-py's `get_message` loop cost tens of µs per event, one event per move).

    A dropped connection is made again and every channel subscribed again; events that
    fell in between show up as a version gap, which rooms fill from their log. Any node of
    a cluster will do (a `PUBLISH` reaches the subscribers of every node), so a dropped
    connection is made again to the next of `addresses` that answers.
    """

    def __init__(
        self, addresses: list[Address], password: str | None, username: str | None
    ) -> None:
        self.addresses = addresses
        self.password, self.username = password, username
        self._handlers: dict[str, Handler] = {}
        self._confirmed: dict[str, asyncio.Future[None]] = {}
        self._protocol: _SubscriberProtocol | None = None
        self._stopping = False
        self._reconnecting: asyncio.Task[None] | None = None
        self._try_now = asyncio.Event()  # cuts a reconnect's pause short (reconnect_now)
        self._shared: RespConnection | None = None  # see sharing()
        self._watch: asyncio.TimerHandle | None = None
        # Called once the channels are subscribed again after a drop: whatever was
        # published meanwhile is lost to pub/sub and must be read from the rooms' logs.
        self.on_reconnect: Callable[[], None] | None = None

    @classmethod
    def sharing(cls, resp: RespConnection) -> LeanFeed:
        """The feed on the move path's own RESP3 connection (its messages come as pushes
        between the scripts' replies): a move's reply and its `progress` arrive together.
        That connection is the batcher's: a drop of it is a drop of the feed, which then
        connects it again and subscribes every channel again."""
        assert resp.resp3, "pub/sub beside commands needs RESP3"
        feed = cls([(resp.host, resp.port)], resp.password, resp.username)
        feed._shared = resp
        return feed

    @classmethod
    def from_redis(cls, redis: AnyRedis) -> LeanFeed | None:
        """From redis-py's connection settings, or None when they need more than TCP."""
        nodes = tcp_nodes(redis)
        if nodes is None:
            return None
        return cls(nodes.addresses, nodes.password, nodes.username)

    def problem(self) -> str | None:
        """What keeps events from arriving now (None: connected, every channel subscribed)."""
        if self._stopping:
            return None
        if self._reconnecting is not None and not self._reconnecting.done():
            return "pub/sub connection lost; reconnecting"
        if self._shared is None and self._protocol is None:
            return "pub/sub not connected"
        return None

    async def start(self) -> None:
        await self._connect()
        await self.subscribe(_CONTROL, lambda data: None)
        self._watch = asyncio.get_running_loop().call_later(IDLE_CHECK / 2, self._check_idle)

    def _check_idle(self) -> None:
        """An idle subscription must prove it is alive: a connection that went silent
        (a frozen Redis, a dead link with no reset) would otherwise lose every event
        unnoticed. Silent for IDLE_CHECK seconds: PING. On its own connection, still
        silent IDLE_CHECK seconds later: dropped and made again (the rooms then read what
        they missed from their logs); on the move path's shared connection the PING is a
        call like any other, which fails the connection after the reply deadline."""
        self._watch = None
        if self._stopping:
            return
        loop = asyncio.get_running_loop()
        ping = encode_command(("PING",))
        if self._shared is not None:
            heard = self._shared.heard
            if heard and loop.time() - heard >= IDLE_CHECK:
                self._shared.send_encoded([ping], lambda replies: None)
        elif self._protocol is not None and self._protocol.transport is not None:
            silent = loop.time() - self._protocol.heard
            if silent >= 2 * IDLE_CHECK:
                log.warning("pub/sub silent for %.0f s; reconnecting", silent)
                self._protocol.transport.abort()
            elif silent >= IDLE_CHECK:
                self._protocol.transport.write(ping)
        self._watch = loop.call_later(IDLE_CHECK / 2, self._check_idle)

    def _write(self, command: bytes) -> None:
        if self._shared is not None:
            self._shared.send_unanswered(command)
        elif self._protocol is not None and self._protocol.transport is not None:
            self._protocol.transport.write(command)

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        if self._shared is not None:
            self._shared.on_push, self._shared.on_lost = self._dispatch, self._shared_lost
            try:
                await self._shared.connect()
            except RedisError as exc:  # refused, or a frozen Redis's HELLO timed out
                raise OSError(str(exc)) from exc
            await self._subscribe_again(loop)
            return
        protocol: _SubscriberProtocol | None = None
        failure: Exception = OSError("no Redis address")
        for host, port in self.addresses:
            try:
                _, protocol = await asyncio.wait_for(
                    loop.create_connection(lambda: _SubscriberProtocol(self), host, port), 5.0
                )
                break
            except (OSError, TimeoutError) as exc:
                failure = exc
        if protocol is None:
            raise failure
        if self.password:
            auth = (
                ("AUTH", self.username, self.password) if self.username else ("AUTH", self.password)
            )
            protocol.transport.write(encode_command(auth))
        self._protocol = protocol
        try:
            await self._subscribe_again(loop)
        except OSError:
            self._protocol = None  # not `_lost`'s to reconnect: the caller goes on trying
            protocol.transport.abort()
            raise

    async def _subscribe_again(self, loop: asyncio.AbstractEventLoop) -> None:
        """Subscribe every channel on the new connection and wait for Redis to confirm;
        OSError when it did not confirm them all (the connection lost again meanwhile, or
        too slow): the reconnect goes on."""
        again = [channel for channel in self._handlers]
        waits = []
        for channel in again:
            # A subscribe() that came while the connection was down waits on its future:
            # keep it, so this confirmation reaches it (a new one would leave it to time out).
            confirmed = self._confirmed.get(channel)
            if confirmed is None or confirmed.done():
                confirmed = self._confirmed[channel] = loop.create_future()
            waits.append(confirmed)
            self._write(encode_command(("SUBSCRIBE", channel)))
        if waits:
            _, unconfirmed = await asyncio.wait(waits, timeout=SUBSCRIBE_WAIT)
            for channel in again:
                self._confirmed.pop(channel, None)
            if unconfirmed:
                raise OSError(f"{len(unconfirmed)} channels not subscribed again")

    async def stop(self) -> None:
        self._stopping = True
        if self._watch is not None:
            self._watch.cancel()
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        if self._shared is not None:  # the batcher's connection: it closes it
            self._shared.on_push = self._shared.on_lost = None
            return
        if self._protocol is not None and self._protocol.transport is not None:
            self._protocol.transport.close()

    async def subscribe(self, channel: str, handler: Handler) -> None:
        """Subscribe and wait until Redis confirms, so nothing published after is missed.

        While the connection is being made again, the SUBSCRIBE cannot be sent: the
        resubscription after the reconnect confirms it, so it waits for the outage (up to
        OUTAGE_WAIT), not only for Redis's answer (SUBSCRIBE_WAIT)."""
        self._handlers[channel] = handler
        confirmed = asyncio.get_running_loop().create_future()
        self._confirmed[channel] = confirmed
        down = self._reconnecting is not None and not self._reconnecting.done()
        self._write(encode_command(("SUBSCRIBE", channel)))
        try:
            await asyncio.wait_for(
                asyncio.shield(confirmed), OUTAGE_WAIT if down else SUBSCRIBE_WAIT
            )
        finally:
            self._confirmed.pop(channel, None)

    async def unsubscribe(self, channel: str, handler: Handler) -> None:
        if _owned(self._handlers, channel, handler):
            self._write(encode_command(("UNSUBSCRIBE", channel)))

    def _dispatch(self, reply: Any) -> None:
        if not isinstance(reply, list) or len(reply) < 3:
            if isinstance(reply, Exception):
                log.error("pub/sub: %s", reply)
            return
        kind, channel = reply[0], reply[1].decode()
        if kind == b"message":
            handler = self._handlers.get(channel)
            if handler is not None:
                try:
                    handler(reply[2])
                except Exception:
                    log.exception("feed handler failed")
        elif kind == b"subscribe":
            confirmed = self._confirmed.get(channel)
            if confirmed is not None and not confirmed.done():
                confirmed.set_result(None)

    def _lost(self, protocol: _SubscriberProtocol) -> None:
        if protocol is not self._protocol or self._stopping:
            return
        self._protocol = None
        log.warning("pub/sub connection lost; reconnecting")
        self._reconnecting = asyncio.ensure_future(self._reconnect())

    def _shared_lost(self) -> None:
        if self._stopping or (self._reconnecting is not None and not self._reconnecting.done()):
            return
        log.warning("Redis connection (moves and pub/sub) lost; reconnecting")
        self._reconnecting = asyncio.ensure_future(self._reconnect())

    async def _reconnect(self) -> None:
        # Short pauses: an attempt on a local Redis that is still down is a refused
        # connect, and every moment after Redis is back but before the channels are
        # subscribed again is a moment of events rooms must read back from their logs.
        delay, longest = RECONNECT_BACKOFF
        while not self._stopping:
            self._try_now.clear()  # a wake-up during the attempt cuts the next pause
            try:
                await self._connect()
                if self.on_reconnect is not None:
                    self.on_reconnect()
                return
            except (OSError, TimeoutError):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._try_now.wait(), delay)
                delay = min(delay * 2, longest)

    async def reconnect_now(self, within: float) -> None:
        """Redis answers again (the process's check found it): the next attempt now, and
        wait for the channels to be subscribed again, `within` seconds at most."""
        reconnecting = self._reconnecting
        if reconnecting is None or reconnecting.done():
            return
        self._try_now.set()
        await asyncio.wait({reconnecting}, timeout=within)


def make_feed(redis: AnyRedis, lean: object = None) -> LeanFeed | RedisFeed:
    """The lean feed when Redis is plain TCP (on `lean`, the move path's connection, when
    it speaks RESP3), else redis-py's."""
    if isinstance(lean, RespConnection) and lean.resp3:
        return LeanFeed.sharing(lean)
    return LeanFeed.from_redis(redis) or RedisFeed(redis)
