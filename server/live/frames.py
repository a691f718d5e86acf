"""WebSocket frames of the server's messages, without I/O: each message framed at most once
per format however many sockets it goes to (`Outgoing`). Every accepted move is framed
here for its mover, the other racers and the spectators, so the compiled build of the move
path compiles this module (core/build.py); its source is the reference and runs where no C
compiler is. Sending is server/live/connection.py's."""

from __future__ import annotations

import json
import struct
from typing import Any

import protocol as p

__all__ = ["Outgoing", "close_frame", "frame"]

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
