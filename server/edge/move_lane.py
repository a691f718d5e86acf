"""Moves judged as their frames are read, without waking the socket's task.

aiohttp parses a socket's frames as they are read (its protocol's `data_received`) and
queues each for the socket's task (server/edge/websocket.py), which wakes for it, and wakes
again when the move's reply comes from Redis: two rounds of the event loop and a dozen
coroutines resumed and suspended per move. A move that comes while the task waits for its
next frame, and whose judging needs nothing to be waited for (`Moves.now`), is judged at
once instead, in `data_received`, and its verdict handled as Redis's reply is read: no task
wakes for it. Every other frame, and any frame after one that was queued, is queued as
before, so a socket's messages are still handled in the order they were sent; the task
waits for a move judged this way before it handles the next message (`Connection.moving`).
A move that comes while the socket's move before it waits for Redis (a client that does not
wait for each answer) waits in the lane's backlog, and is judged when that one's verdict is
in; a move the lane cannot judge then goes to the task, and the backlog after it.

`GameSocket` is aiohttp's WebSocketResponse with its frame queue replaced by `LaneQueue`,
which offers each parsed frame to the lane first, and its parser behind `MaskedOnly`, which
fails the connection at a client frame that is not masked (RFC 6455 section 5.1; aiohttp's
reader takes one). aiohttp builds both in a private method (`_post_start`), copied here from
aiohttp 3.14 (pyproject.toml pins 3.14.x); tests/server/edge/test_move_lane.py checks that
moves do take the lane, tests/server/edge/test_control_frames.py the mask.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable
from typing import Any, cast

from aiohttp import WSCloseCode, WSMessage, WSMsgType, web
from aiohttp._websocket.reader import WebSocketDataQueue, WebSocketReader
from aiohttp.helpers import DEFAULT_CHUNK_SIZE, set_exception
from aiohttp.http_websocket import WebSocketError, WebSocketWriter, WSMessageTextBytes
from aiohttp.web_request import BaseRequest

import protocol as p
from server.live.connection import Connection
from server.live.frames import MaskCheck

__all__ = ["GameSocket", "Lane", "LaneQueue", "MaskedOnly"]

Judge = Callable[[Connection, p.Move | p.Undo], bool]
Frame = WSMessage | WSMessageTextBytes


class LaneQueue(WebSocketDataQueue):
    """aiohttp's queue of a socket's parsed frames, which offers each to its lane first: a
    frame the lane takes is not queued (and wakes nothing)."""

    __slots__ = ("lane",)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lane: Lane | None = None

    def feed_data(self, data: Frame, size: int) -> None:
        lane = self.lane
        if lane is None or not lane.offer(data):
            super().feed_data(data, size)

    def to_task(self, data: Frame) -> None:
        """Queue a frame for the socket's task, past the lane."""
        super().feed_data(data, len(data.data))


class GameSocket(web.WebSocketResponse):
    """The game's WebSocket: aiohttp's, with its frames offered to a `Lane` first."""

    def lane(self, conn: Connection, judge: Judge) -> None:
        """Judge `conn`'s moves with `judge` as they are read, when they can be."""
        reader = self._reader
        if isinstance(reader, LaneQueue):
            reader.lane = Lane(conn, judge, reader)

    def drop_lane(self) -> None:
        """The socket is done with: its lane goes (the lane and the socket's connection
        refer to each other, a cycle that would wait for a full collection)."""
        reader = self._reader
        if isinstance(reader, LaneQueue) and reader.lane is not None:
            reader.lane.conn.on_moved = None
            reader.lane = None

    def _post_start(
        self, request: BaseRequest, protocol: str | None, writer: WebSocketWriter
    ) -> None:
        # aiohttp 3.14's, with LaneQueue for its queue.
        self._ws_protocol = protocol
        self._writer = writer
        self._reset_heartbeat()
        loop = self._loop
        assert loop is not None
        self._reader = LaneQueue(request._protocol, DEFAULT_CHUNK_SIZE, loop=loop)
        self._parser = WebSocketReader(
            self._reader,
            self._max_msg_size,
            compress=bool(self._compress),
            decode_text=self._decode_text,
        )
        callback = None if self._heartbeat is None else self._on_data_received
        # aiohttp calls its payload parser's feed_data and feed_eof, which MaskedOnly has.
        parser = cast(WebSocketReader, MaskedOnly(self._parser, self._reader))
        request.protocol.set_parser(parser, data_received_cb=callback)
        request.protocol.keep_alive(False)


class MaskedOnly:
    """aiohttp's frame parser for one socket, which first checks that the client's frames
    are masked: at one that is not, the frames before it are parsed and the connection
    fails as at any other frame the WebSocket protocol does not allow (1002)."""

    __slots__ = ("_check", "_parser", "_queue")

    def __init__(self, parser: WebSocketReader, queue: WebSocketDataQueue) -> None:
        self._parser, self._queue, self._check = parser, queue, MaskCheck()

    def feed_data(self, data: bytes) -> tuple[bool, bytes]:
        bad = self._check.feed(data)
        if bad < 0:
            return self._parser.feed_data(data)
        if bad and self._parser.feed_data(data[:bad])[0]:
            return True, b""  # an error the parser found first
        error = WebSocketError(WSCloseCode.PROTOCOL_ERROR, "a client frame must be masked")
        set_exception(self._queue, error)
        return True, b""  # as aiohttp's parser answers its own errors: no more data

    def feed_eof(self) -> None:
        self._parser.feed_eof()


class Lane:
    """One socket's moves judged as they are read (`offer`), and those waiting for the
    verdict on the move before them (`backlog`, judged by `next`)."""

    __slots__ = ("_draining", "backlog", "conn", "judge", "queue")

    def __init__(self, conn: Connection, judge: Judge, queue: LaneQueue) -> None:
        self.conn, self.judge, self.queue = conn, judge, queue
        self.backlog: collections.deque[tuple[Frame, p.Move | p.Undo]] = collections.deque()
        self._draining = False
        conn.on_moved = self.next

    def offer(self, frame: Frame) -> bool:
        """True: the frame is a move, judged now or waiting in the backlog; False: it is
        queued for the socket's task, after the backlog, and so is every frame after it
        until the task has read them."""
        conn = self.conn
        if conn.idle and not conn.closing:
            kind = frame.type
            binary = kind is WSMsgType.BINARY
            if binary or kind is WSMsgType.TEXT:
                now = time.monotonic()
                if conn.bucket.take(now):  # else the task refuses it, and counts the flood
                    conn.frames += 1
                    message = p.decode_msgpack(frame.data) if binary else p.decode_json(frame.data)
                    if type(message) is p.Move or type(message) is p.Undo:
                        conn.seen = now
                        if conn.moving or self.backlog:
                            self.backlog.append((frame, message))
                            return True
                        conn.binary = binary
                        if self.judge(conn, message):
                            return True
                    self._uncount()
        self._to_task()
        return False

    def next(self) -> None:
        """The verdict on the socket's move in flight is in: judge the backlog's moves, in
        order, until one is in flight; one that cannot be judged here goes to the task,
        and the rest of the backlog after it."""
        if self._draining:
            return  # called back by a move of the loop below, refused at once
        conn = self.conn
        self._draining = True
        try:
            while self.backlog and not conn.moving and not conn.closing:
                frame, message = self.backlog[0]
                conn.binary = frame.type is WSMsgType.BINARY
                if not self.judge(conn, message):
                    break
                self.backlog.popleft()
            if self.backlog and not conn.moving:
                self._to_task()
        finally:
            self._draining = False

    def _to_task(self) -> None:
        """From now on the socket's task reads its frames: the backlog's first."""
        self.conn.idle = False
        backlog = self.backlog
        while backlog:
            frame, _ = backlog.popleft()
            self._uncount()
            self.queue.to_task(frame)

    def _uncount(self) -> None:
        """A frame counted here goes to the task, which counts it."""
        conn = self.conn
        conn.frames -= 1
        conn.bucket.give_back()
