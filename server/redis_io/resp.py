"""A minimal pipelined Redis connection for the move path: RESP out, hiredis in.

redis-py's asyncio pipeline costs 80-180 µs of client CPU per round trip, most of it in
Python bookkeeping (shared/BASELINES.md); at a few thousand moves a second in small
batches that is the largest single cost of a move. This connection does only what the
script batcher needs: write a batch of commands as one RESP buffer, read the replies
with hiredis' C parser, in order (the commands are encoded by
server/redis_io/resp_encode.py). Error replies come back in place as redis-py's
``ResponseError`` (the batcher tells an unknown function and LOADING from the others), and
a lost connection fails the batches in flight with redis-py's ``ConnectionError`` and
reconnects on the next call.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import hiredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.redis_io.resp_encode import Arg, encode_command

__all__ = [
    "REPLY_DEADLINE",
    "RespConnection",
    "tcp_address",
]

# Seconds a reply may take. Redis answers in microseconds: one that takes this long is
# stuck (a frozen process, a dead link), and every move behind it would wait with it.
REPLY_DEADLINE = 5.0


def tcp_address(kwargs: Mapping[str, Any]) -> tuple[str, int] | None:
    """(host, port) from redis-py's connection kwargs, with redis-py's defaults; None when
    they ask for more than plain TCP (a Unix socket, TLS), which the lean clients lack."""
    if kwargs.get("path") or kwargs.get("ssl") or kwargs.get("ssl_context"):
        return None
    return kwargs.get("host") or "127.0.0.1", int(kwargs.get("port") or 6379)


Landed = Callable[[list[Any] | Exception], None]


@dataclass(slots=True)
class _Batch:
    """Commands sent together: their replies go to `future`, or to `landed` (called
    with the replies, or with the error that lost them)."""

    future: asyncio.Future[list[Any]] | None
    expected: int
    replies: list[Any] = field(default_factory=list)
    landed: Landed | None = None
    due: float = 0.0  # loop time by which its replies must have come


class _Protocol(asyncio.Protocol):
    """One connection's replies, matched to the batches in order. A reply that does not
    come within the owner's `reply_deadline` fails its batch and every batch behind it
    (they would all wait on it: replies come in order), and the connection is dropped;
    the next call connects again. Checked by one timer per connection while batches are
    out, not one per batch (the move path sends thousands a second)."""

    def __init__(self, owner: RespConnection) -> None:
        self.owner = owner
        self.reader = hiredis.Reader(replyError=ResponseError)
        self.pending: collections.deque[_Batch] = collections.deque()
        self.transport: asyncio.Transport | None = None
        self.lost = False
        self.overdue = False
        self.heard = asyncio.get_running_loop().time()  # when data last came
        self._watch: asyncio.TimerHandle | None = None

    def sent(self, batch: _Batch) -> None:
        """`batch` was written: its reply is due within the deadline."""
        loop = asyncio.get_running_loop()
        deadline = self.owner.reply_deadline
        batch.due = loop.time() + deadline
        self.pending.append(batch)
        if self._watch is None:
            self._watch = loop.call_later(deadline / 4, self._check)

    def _check(self) -> None:
        self._watch = None
        if not self.pending or self.lost:
            return
        loop = asyncio.get_running_loop()
        if loop.time() > self.pending[0].due:
            self.overdue = True
            if self.transport is not None:
                self.transport.abort()  # connection_lost fails every pending batch
            return
        self._watch = loop.call_later(self.owner.reply_deadline / 4, self._check)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        self.heard = asyncio.get_running_loop().time()
        self.reader.feed(data)
        pending = self.pending
        while True:
            reply = self.reader.gets()
            if reply is False:
                return
            if type(reply) is hiredis.PushNotification:  # RESP3: pub/sub, not a reply
                on_push = self.owner.on_push
                if on_push is not None:
                    on_push(reply)
                continue
            if not pending:  # nothing asked for this: the stream is out of step
                assert self.transport is not None
                self.transport.close()
                return
            batch = pending[0]
            batch.replies.append(reply)
            if len(batch.replies) == batch.expected:
                pending.popleft()
                if batch.landed is not None:
                    batch.landed(batch.replies)
                elif batch.future is not None and not batch.future.done():
                    batch.future.set_result(batch.replies)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        error: Exception = RedisConnectionError(f"connection to Redis lost: {exc or 'closed'}")
        if self.overdue:
            error = RedisTimeoutError(
                f"Redis did not answer within {self.owner.reply_deadline:g} s"
            )
        while self.pending:
            batch = self.pending.popleft()
            if batch.landed is not None:
                batch.landed(error)
            elif batch.future is not None and not batch.future.done():
                batch.future.set_exception(error)
        if self.owner.on_lost is not None:
            self.owner.on_lost()


class RespConnection:
    """One TCP connection to Redis; ``execute`` sends a batch and returns its replies.

    With `resp3` the connection speaks RESP3 (``HELLO 3``): it may then also carry
    pub/sub (server/storage/feed.py's LeanFeed.sharing), whose messages come as pushes, handed to
    `on_push`, in between the replies. A move's script reply and the `progress` it
    publishes then reach this process in one read, written by Redis in one write (a
    second connection cost Redis and the server a write, a read and a wake-up per move).
    A script's false comes back as False (RESP2: None)."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 6379,
        db: int = 0,
        username: str | None = None,
        password: str | None = None,
        connect_timeout: float = 5.0,
        resp3: bool = False,
        reply_deadline: float = REPLY_DEADLINE,
    ) -> None:
        self.host, self.port, self.db = host, port, db
        self.username, self.password = username, password
        self.connect_timeout = connect_timeout
        self.resp3 = resp3
        self.reply_deadline = reply_deadline
        self.on_push: Callable[[list[Any]], None] | None = None  # RESP3 pushes
        self.on_lost: Callable[[], None] | None = None  # after the calls in flight failed
        self._protocol: _Protocol | None = None
        self._connecting: asyncio.Future[_Protocol] | None = None  # the attempt under way
        self.connects = 0  # connections made (more than one: reconnections, for /metrics)

    @property
    def heard(self) -> float:
        """Loop time data last came on the connection (0.0: not connected)."""
        return self._protocol.heard if self._protocol is not None else 0.0

    @property
    def reconnects(self) -> int:
        """Connections made again after the first was lost (for /metrics)."""
        return max(0, self.connects - 1)

    async def execute(self, commands: Sequence[Sequence[Arg]]) -> list[Any]:
        """Send the commands in one write; their replies, in order (errors in place)."""
        return await self.execute_encoded([encode_command(c) for c in commands])

    async def execute_encoded(self, commands: Sequence[bytes]) -> list[Any]:
        """As execute, for commands already encoded (encode_command, encode_fcall)."""
        protocol = self._protocol
        if protocol is None or protocol.lost:
            protocol = await self._connect()
        assert protocol.transport is not None
        future: asyncio.Future[list[Any]] = asyncio.get_running_loop().create_future()
        protocol.sent(_Batch(future, len(commands)))
        protocol.transport.write(b"".join(commands))
        return await future

    def send_encoded(self, commands: Sequence[bytes], landed: Landed) -> bool:
        """Send commands already encoded and return at once: `landed` gets their replies
        (or the error that lost them) from the connection's reader, with no task and no
        future in between (a move at an everyday rate is a batch of its own: a task per
        batch was a tenth of its CPU). False, and nothing sent, when not connected yet:
        `execute_encoded` connects."""
        protocol = self._protocol
        if (
            protocol is None
            or protocol.lost
            or protocol.transport is None
            or protocol.transport.is_closing()  # lost, but not told yet: a write would raise
        ):
            return False
        protocol.sent(_Batch(None, len(commands), landed=landed))
        protocol.transport.write(b"".join(commands))
        return True

    def send_unanswered(self, command: bytes) -> bool:
        """Send a command whose answer is a push, not a reply (SUBSCRIBE in RESP3);
        False when not connected."""
        protocol = self._protocol
        if protocol is None or protocol.lost or protocol.transport is None:
            return False
        protocol.transport.write(command)
        return True

    async def connect(self) -> None:
        """Connect now (execute does when needed)."""
        await self._connect()

    async def execute_routed(self, calls: Sequence[tuple[str, bytes]]) -> list[Any]:
        """As execute_encoded for (routing key, command) pairs: one node, so the keys do
        not matter (the interface of server/redis_io/cluster.py's ClusterResp)."""
        return await self.execute_encoded([command for _, command in calls])

    async def _connect(self) -> _Protocol:
        """The connection, made now if there is none. Every caller meanwhile waits on the
        one attempt under way and shares its outcome: failed, they all fail at once (each
        trying again in turn made the last wait one connect timeout per caller ahead)."""
        if self._protocol is not None and not self._protocol.lost:
            return self._protocol
        if self._connecting is None or self._connecting.done():
            self._connecting = attempt = asyncio.ensure_future(self._attempt())
            # Retrieved here too: every caller may have been cancelled meanwhile.
            attempt.add_done_callback(lambda done: done.cancelled() or done.exception())
        return await asyncio.shield(self._connecting)

    async def _attempt(self) -> _Protocol:
        try:
            # The whole of it, setup included: an endpoint that accepts and then says
            # nothing (a half-open link, a proxy with no server) must not hold every call.
            protocol = await asyncio.wait_for(self._open(), self.connect_timeout)
        except (OSError, TimeoutError) as exc:
            raise RedisConnectionError(
                f"cannot connect to Redis at {self.host}:{self.port}: {exc}"
            ) from exc
        self._protocol = protocol
        self.connects += 1
        return protocol

    async def _open(self) -> _Protocol:
        """A new connection, set up (protocol, credentials, database). Its setup is sent on
        it alone: a connection lost meanwhile fails here, never connects again from inside
        a connect (which once waited on itself for good)."""
        loop = asyncio.get_running_loop()
        _, protocol = await loop.create_connection(lambda: _Protocol(self), self.host, self.port)
        setup: list[Sequence[Arg]] = []
        if self.resp3:
            auth = ("AUTH", self.username or "default", self.password) if self.password else ()
            setup.append(("HELLO", 3, *auth))
        elif self.password:
            setup.append(
                ("AUTH", self.username, self.password) if self.username else ("AUTH", self.password)
            )
        if self.db:
            setup.append(("SELECT", self.db))
        if not setup:
            return protocol
        try:
            if protocol.lost or protocol.transport is None:
                raise RedisConnectionError("connection to Redis lost: closed")
            future: asyncio.Future[list[Any]] = loop.create_future()
            protocol.sent(_Batch(future, len(setup)))
            protocol.transport.write(b"".join(encode_command(c) for c in setup))
            replies = await future
        except BaseException:
            if protocol.transport is not None:
                protocol.transport.abort()
            raise
        for reply in replies:
            if isinstance(reply, ResponseError):
                protocol.transport.close()
                raise reply
        return protocol

    async def close(self) -> None:
        attempt, self._connecting = self._connecting, None
        if attempt is not None:
            attempt.cancel()  # no connection made after the close
        protocol, self._protocol = self._protocol, None
        if protocol is not None and protocol.transport is not None:
            protocol.transport.close()
