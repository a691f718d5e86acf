"""One WebSocket connection: how messages reach it, its rate limit, who it is in which room.

A broadcast never waits on a client (python-websockets docs/topics/broadcast.rst). Sending
never awaits: each message becomes one complete WebSocket frame (compression is off, so a
frame is a header and the payload; aiohttp writes its own control frames the same way,
whole), kept until the end of the event-loop tick and then written to the socket's
transport with the socket's other frames of that tick in one write (a burst of events,
e.g. several moves published together, costs one system call per socket, not one per
frame). No task, no queue of our own: the transport buffers what the client has not read
yet, and a client that lets more than `max_buffer` bytes pile up there is disconnected
(close code 4000); it can come back with its token and catch up. The frame of a message
is built once per format however many sockets it goes to (server/live/frames.py).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

import protocol as p
from server.live.frames import Outgoing

__all__ = [
    "Connection",
    "Flusher",
    "TokenBucket",
    "check_alive",
    "process_of",
]

log = logging.getLogger(__name__)

_PING = b"\x89\x00"  # a final, unmasked ping frame with no payload


def process_of(conn_id: str) -> str:
    """The server process a socket id names: ids are "PROCESS-RANDOM" (server/edge/websocket.py)."""
    return conn_id.split("-", 1)[0]


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

    def give_back(self) -> None:
        """Undo a `take` (the frame is counted again elsewhere)."""
        self.tokens = min(self.burst, self.tokens + 1.0)


class Flusher:
    """Writes the frames sockets got during an event-loop tick, once, at its end (the
    next round of callbacks): a move's `progress` (from pub/sub) and its mover's
    `accepted` (built from the script's reply as it is read, server/handlers/moves.py)
    come in one read from Redis, and then go out in one write instead of two (a tenth of
    the writes of a move at an everyday rate, where moves come one by one). Sockets
    holding an answer to their own message are written first: a mover's `accepted` does
    not wait behind its opponents' `progress` (docs/performance.md)."""

    def __init__(self) -> None:
        self._answers: list[Connection] = []
        self._dirty: list[Connection] = []

    def mark(self, conn: Connection, answer: bool = False) -> None:
        """`answer`: `conn` holds the answer to its own message, written before the tick's
        other sockets (a move's `accepted` before the `progress` of its 7 opponents)."""
        if not self._dirty and not self._answers:
            asyncio.get_running_loop().call_soon(self.flush)
        (self._answers if answer else self._dirty).append(conn)

    def flush(self) -> None:
        answers, dirty, self._answers, self._dirty = self._answers, self._dirty, [], []
        for conn in answers:
            conn.flush()
        for conn in dirty:
            conn.flush()  # nothing left to write for those flushed as answers


@dataclass(eq=False, slots=True)
class Connection:
    ws: web.WebSocketResponse
    id: str
    max_buffer: int  # bytes the client may leave unread before it is dropped
    bucket: TokenBucket
    transport: Any = None  # asyncio or uvloop transport (uvloop's are not asyncio subclasses)
    binary: bool = True  # answer in the format of the client's latest frame
    # Who the socket is: its room, and its seat with the token that holds it (the seat
    # itself, board and seq included, is the room's: server/live/seats.py).
    room: str | None = None
    seat: int | None = None  # None: spectator (or not in a room)
    token_hash: str | None = None
    role: str | None = None  # "player" or "spectator"
    last_version: int = 0  # last room event version sent to this socket
    quick: tuple[str, str] | None = None  # (game, ticket) while waiting for a quick match
    # Set while a quick match's pairing seats this socket beside its own task (the partner
    # asked on another socket): the socket's next messages wait for it, since `matched`
    # has told the client it is seated (server/handlers/quick.py).
    seating: asyncio.Future[None] | None = None
    player: str | None = None  # the player this socket acts as (`identify`), by id
    key_hash: str | None = None  # and the hash of the key it sent (signed out: acts no more)
    # Its latest `identify` could not be checked (the records' database or Redis out of
    # reach): it is nobody yet, so its joins and matches wait for one that can be.
    unidentified: bool = False
    closing: bool = False
    close_code: int | None = None  # the code this server closed the socket with, if it did
    seen: float = 0.0  # time.monotonic() of the last frame received (a pong too)
    frames: int = 0  # frames received
    # The socket's task waits for its next frame (server/edge/websocket.py); a move that
    # comes then may be judged as it is read (server/edge/move_lane.py).
    idle: bool = False
    moving: bool = False  # a move judged as it was read waits for its verdict
    on_moved: Any = None  # callable() once such a move's verdict is dealt with
    pinged: float = 0.0  # when check_alive last pinged this socket; 0: never
    on_drop: Any = None  # callable(Connection) when dropped for being slow
    flusher: Flusher = field(default_factory=Flusher)
    _pending: list[bytes] = field(default_factory=list)
    _delayed: collections.deque[tuple[float, Outgoing]] = field(default_factory=collections.deque)
    _timer: asyncio.TimerHandle | None = None
    _closer: asyncio.Future[None] | None = None
    _moved: asyncio.Future[None] | None = None

    def moved(self) -> None:
        """The move judged as it was read has been dealt with."""
        self.moving = False
        if self.on_moved is not None:
            self.on_moved()  # the next move, if one waits
        if not self.moving and self._moved is not None:
            self._moved.set_result(None)
            self._moved = None

    async def after_move(self) -> None:
        """Until no move judged as it was read waits for its verdict: the socket's next
        message comes after them."""
        while self.moving:
            if self._moved is None:
                self._moved = asyncio.get_running_loop().create_future()
            await asyncio.shield(self._moved)

    def send(self, message: p.Message | Outgoing) -> None:
        """Send a message (written at the end of this tick); never waits."""
        if self.closing:
            return
        out = message if isinstance(message, Outgoing) else Outgoing(message)
        self.send_frame(out.frame(self.binary))

    def answer(self, message: p.Message) -> None:
        """Send the answer to this socket's own message: like `send`, but written before
        the frames other sockets got in this tick, so that the sender's wait is not the
        length of the fan-out."""
        if self.closing:
            return
        self.flusher.mark(self, answer=True)
        self._pending.append(Outgoing(message).frame(self.binary))

    def send_frame(self, data: bytes) -> None:
        """Send a frame already built in this socket's format (`Outgoing.frame`): the
        fan-out's path, one call per socket and event."""
        if self.closing:
            return
        if not self._pending:
            self.flusher.mark(self)
        self._pending.append(data)

    def send_frame_now(self, data: bytes) -> None:
        """Send a frame now, not at the end of the tick (after this socket's frames
        already waiting, if any): a crowd's fan-out writes each spectator as it goes, so
        that the cost of a slice of the crowd is paid within that slice, not in one flush
        that keeps the racers' answers waiting."""
        if self.closing:
            return
        if self._pending:
            self._pending.append(data)
            return
        self._pending.append(data)
        self.flush()

    def ping(self, now: float) -> None:
        """Send a ping (with this tick's other frames); the client must answer with a pong."""
        if self.closing:
            return
        self.pinged = now
        self.send_frame(_PING)

    def flush(self) -> None:
        """Write the pending frames. A client too far behind is dropped instead."""
        frames, self._pending = self._pending, []
        transport = self.transport
        if not frames or transport is None or transport.is_closing() or self.ws.closed:
            return
        if transport.get_write_buffer_size() > self.max_buffer:
            self.close_soon(p.CloseCode.SLOW_CONSUMER, "too slow: reconnect and catch up")
            if self.on_drop is not None:
                self.on_drop(self)
            return
        transport.write(frames[0] if len(frames) == 1 else b"".join(frames))

    @property
    def delayed(self) -> bool:
        """Frames are waiting for their time (send_at): later ones must queue behind."""
        return bool(self._delayed)

    def send_at(self, due: float, message: Outgoing) -> None:
        """Send at server time `due` (spectator delay), in order."""
        if self._delayed or due > time.time():
            if self._delayed and due < self._delayed[-1][0]:
                due = self._delayed[-1][0]
            self._delayed.append((due, message))
            self._arm()
        else:
            self.send(message)

    def drop_delayed(self) -> None:
        """Forget the frames waiting for their time: a snapshot or a catch-up sent now
        replaces them (sent as well, they came twice)."""
        self._delayed.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

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

    def close_soon(self, code: int, message: str) -> None:
        if self.closing:
            return
        self.closing = True
        self.close_code = code
        self._pending.clear()
        self._closer = asyncio.ensure_future(self._close(code, message))

    async def _close(self, code: int, message: str) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close(code=code, message=message.encode())

    def stop(self) -> None:
        """Write what is pending, then no more messages to this socket."""
        if not self.closing:
            self.flush()
        self.closing = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def check_alive(conns: list[Connection], now: float, heartbeat: float) -> int:
    """aiohttp's heartbeat rule for all sockets in one sweep: ping a socket silent for
    `heartbeat` seconds, and abort one that received nothing for `heartbeat / 2` seconds
    after its ping (a dead peer would never finish a close handshake). aiohttp's own
    heartbeat re-arms a timer per socket on every tick it receives data: a few percent of
    the server's CPU under load. Returns how many sockets were aborted."""
    aborted = 0
    for conn in conns:
        if conn.closing:
            continue
        if conn.pinged > conn.seen:  # ping unanswered so far
            if now - conn.pinged >= heartbeat / 2:
                conn.stop()
                if conn.transport is not None:
                    conn.transport.abort()
                aborted += 1
        elif now - conn.seen >= heartbeat:
            conn.ping(now)
    return aborted
