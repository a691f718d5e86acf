"""One WebSocket connection: its outgoing queue, its rate limit, who it is in which room.

A broadcast never waits on a client (python-websockets docs/topics/broadcast.rst): every
message is put on the connection's bounded queue without waiting, and a writer task sends
them. A client that lets its queue fill up is disconnected (close code 4000); it can come
back with its token and catch up.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from server import protocol as p

if TYPE_CHECKING:
    from core import Game

__all__ = ["Connection", "Outgoing", "TokenBucket"]

log = logging.getLogger(__name__)


class Outgoing:
    """A message encoded at most once per format, however many sockets it goes to."""

    __slots__ = ("_json", "_msgpack", "message")

    def __init__(self, message: p.Message) -> None:
        self.message = message
        self._msgpack: bytes | None = None
        self._json: str | None = None

    def encoded(self, binary: bool) -> bytes | str:
        if binary:
            if self._msgpack is None:
                self._msgpack = p.encode_msgpack(self.message)
            return self._msgpack
        if self._json is None:
            self._json = p.encode_json(self.message)
        return self._json


@dataclass(slots=True)
class TokenBucket:
    rate: float
    burst: float
    tokens: float = -1.0
    stamp: float = 0.0

    def take(self, now: float) -> bool:
        if self.tokens < 0:
            self.tokens, self.stamp = self.burst, now
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass(eq=False, slots=True)
class Connection:
    ws: web.WebSocketResponse
    id: str
    queue_size: int
    bucket: TokenBucket
    binary: bool = True  # answer in the format of the client's latest frame
    room: str | None = None
    seat: int | None = None  # None: spectator (or not in a room)
    role: str | None = None  # "player" or "spectator"
    last_version: int = 0  # last room event version queued to this socket
    game: Game | None = None  # the player's own board, replayed from seed + moves
    moves: list[str] = field(default_factory=list)  # the player's accepted moves, undo too
    last_seq: int = 0
    limited: int = 0  # rate-limited frames in a row
    quick: tuple[str, str] | None = None  # (game, ticket) while waiting for a quick match
    closing: bool = False
    _queue: collections.deque[bytes | str] = field(default_factory=collections.deque)
    _wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    _delayed: collections.deque[tuple[float, Outgoing]] = field(default_factory=collections.deque)
    _timer: asyncio.TimerHandle | None = None
    _writer: asyncio.Task[None] | None = None
    _closer: asyncio.Future[None] | None = None
    on_drop: Any = None  # callable(Connection) when dropped for being slow

    def start(self) -> None:
        self._writer = asyncio.create_task(self._write_loop(), name=f"ws-writer-{self.id}")

    def send(self, message: p.Message | Outgoing) -> None:
        """Queue a message; never waits. A full queue drops the client."""
        if self.closing:
            return
        out = message if isinstance(message, Outgoing) else Outgoing(message)
        if len(self._queue) >= self.queue_size:
            self.close_soon(p.CloseCode.SLOW_CONSUMER, "too slow: reconnect and catch up")
            if self.on_drop is not None:
                self.on_drop(self)
            return
        self._queue.append(out.encoded(self.binary))
        self._wakeup.set()

    def send_at(self, due: float, message: Outgoing) -> None:
        """Send at server time `due` (spectator delay), in order."""
        if self._delayed or due > time.time():
            if self._delayed and due < self._delayed[-1][0]:
                due = self._delayed[-1][0]
            self._delayed.append((due, message))
            self._arm()
        else:
            self.send(message)

    def _arm(self) -> None:
        if self._timer is not None or not self._delayed:
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, self._delayed[0][0] - time.time())
        self._timer = loop.call_later(delay, self._release)

    def _release(self) -> None:
        self._timer = None
        now = time.time()
        while self._delayed and self._delayed[0][0] <= now:
            self.send(self._delayed.popleft()[1])
        self._arm()

    async def _write_loop(self) -> None:
        ws = self.ws
        try:
            while True:
                while not self._queue:
                    self._wakeup.clear()
                    await self._wakeup.wait()
                data = self._queue.popleft()
                if isinstance(data, bytes):
                    await ws.send_bytes(data)
                else:
                    await ws.send_str(data)
        except (ConnectionError, RuntimeError, asyncio.CancelledError):
            pass
        except Exception:
            log.exception("writer failed")

    def close_soon(self, code: int, message: str) -> None:
        if self.closing:
            return
        self.closing = True
        self._queue.clear()
        self._closer = asyncio.ensure_future(self._close(code, message))

    async def _close(self, code: int, message: str) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close(code=code, message=message.encode())

    async def flush_and_stop(self, timeout: float = 1.0) -> None:
        """Let queued messages go out (used before a deliberate close), then stop writing."""
        deadline = time.monotonic() + timeout
        while self._queue and time.monotonic() < deadline and not self.ws.closed:
            await asyncio.sleep(0.005)
        self.stop()

    def stop(self) -> None:
        self.closing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._writer is not None:
            self._writer.cancel()
