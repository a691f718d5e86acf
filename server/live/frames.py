"""WebSocket frames of the server's messages, without I/O: each message framed at most once
per format however many sockets it goes to (`Outgoing`). Every accepted move is framed
here for its mover, the other racers and the spectators, so the compiled build of the move
path compiles this module (core/build.py); its source is the reference and runs where no C
compiler is. Sending is server/live/connection.py's. Clients' frames are parsed by aiohttp;
what it does not check of them, their mask, is checked here (`MaskCheck`)."""

from __future__ import annotations

import json
import struct
from typing import Any

import protocol as p

__all__ = ["MaskCheck", "Outgoing", "close_frame", "frame"]

_OP_TEXT, _OP_BINARY, _OP_CLOSE = 0x1, 0x2, 0x8


def frame(payload: bytes, binary: bool) -> bytes:
    """A final, unmasked server frame (RFC 6455 section 5.2) carrying `payload`."""
    first = 0x80 | (_OP_BINARY if binary else _OP_TEXT)
    size = len(payload)
    if size < 126:
        return struct.pack("!BB", first, size) + payload
    if size < 65536:
        return struct.pack("!BBH", first, 126, size) + payload
    return struct.pack("!BBQ", first, 127, size) + payload


def close_frame(code: int, reason: str) -> bytes:
    """A server close frame (RFC 6455 section 5.5.1): the code, then the reason (a control
    frame's payload is at most 125 bytes)."""
    payload = struct.pack("!H", code) + reason.encode()[:123]
    return struct.pack("!BB", 0x80 | _OP_CLOSE, len(payload)) + payload


class Outgoing:
    """A message, framed at most once per format, however many sockets it goes to.

    `wire`, when given, is the map to send instead of `p.to_wire(message)` (a variant of
    the message, e.g. a progress event without its move)."""

    __slots__ = ("_json", "_msgpack", "message", "wire")

    def __init__(self, message: p.Message, wire: dict[str, Any] | None = None) -> None:
        self.message = message
        self.wire = wire
        self._msgpack: bytes | None = None
        self._json: bytes | None = None

    def frame(self, binary: bool) -> bytes:
        if binary:
            if self._msgpack is None:
                wire = self.wire if self.wire is not None else p.to_wire(self.message)
                self._msgpack = frame(p.pack_map(wire), True)
            return self._msgpack
        if self._json is None:
            wire = self.wire if self.wire is not None else p.to_wire(self.message)
            text = json.dumps(wire, separators=(",", ":"), ensure_ascii=False)
            self._json = frame(text.encode(), False)
        return self._json


class MaskCheck:
    """Whether a client's frames are masked (RFC 6455 section 5.1: a server fails the
    connection at a client frame that is not; aiohttp's reader takes it). Follows the
    frames' boundaries over the reads of one connection, looking at their headers only:
    a payload is skipped, not read."""

    __slots__ = ("_head", "_skip")

    def __init__(self) -> None:
        self._head = b""  # a header begun at the end of the last read
        self._skip = 0  # payload bytes of the current frame still to come

    def feed(self, data: bytes) -> int:
        """Where in `data` the first frame that is not masked begins (0 when its header
        began in an earlier read); -1: none."""
        carried = len(self._head)
        if carried:
            data = self._head + data
            self._head = b""
        size = len(data)
        pos = 0
        skip = self._skip
        while True:
            if size - pos <= skip:
                self._skip = skip - (size - pos)
                return -1
            pos += skip
            skip = 0
            if size - pos < 2:
                self._head, self._skip = data[pos:], 0
                return -1
            second = data[pos + 1]
            if not second & 0x80:
                return max(0, pos - carried)
            length = second & 0x7F
            if length < 126:
                header = 6
            elif length == 126:
                header = 8
                if size - pos >= 4:
                    length = (data[pos + 2] << 8) | data[pos + 3]
            else:
                header = 14
                if size - pos >= 10:
                    length = int.from_bytes(data[pos + 2 : pos + 10], "big")
            if size - pos < header:
                self._head, self._skip = data[pos:], 0
                return -1
            pos += header
            skip = length
