"""A minimal WebSocket client protocol, cheap enough to load a server from one core.

The ``websockets`` client saturates its own core long before an aiohttp server does
(shared/BASELINES.md), so the load generator speaks the few parts of RFC 6455 it needs
itself: the upgrade request, unfragmented frames, ping/pong and close. Client frames
use an all-zero masking key, which the RFC allows servers to accept, so a frame is
its payload behind a fixed header and no bytes are XORed.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable
from typing import cast

__all__ = ["OP_BINARY", "OP_TEXT", "WsClient", "client_frame", "connect"]

OP_TEXT = 0x1
OP_BINARY = 0x2
OP_CLOSE = 0x8
OP_PING = 0x9
OP_PONG = 0xA
_ZERO_MASK = b"\x00\x00\x00\x00"


def client_frame(payload: bytes, opcode: int = OP_BINARY) -> bytes:
    """One final, masked (with a zero key) client frame carrying ``payload``."""
    size = len(payload)
    if size < 126:
        header = bytes((0x80 | opcode, 0x80 | size))
    elif size < 1 << 16:
        header = bytes((0x80 | opcode, 0x80 | 126)) + size.to_bytes(2, "big")
    else:
        header = bytes((0x80 | opcode, 0x80 | 127)) + size.to_bytes(8, "big")
    return header + _ZERO_MASK + payload


class WsClient(asyncio.Protocol):
    """One connection; calls ``on_message(opcode, payload)`` for each data frame."""

    def __init__(self, host: str, port: int, path: str) -> None:
        self.request = (
            f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n\r\n"
        ).encode()
        self.on_message: Callable[[int, bytes], None] = lambda opcode, payload: None
        self.transport: asyncio.Transport | None = None
        self.opened: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._upgraded = False
        self._buf = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not asyncio.Transport subclasses, only alike.
        self.transport = cast(asyncio.Transport, transport)
        self.transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError(f"closed before the upgrade: {exc}"))
        if not self.closed.done():
            self.closed.set_result(None)

    def send(self, frame: bytes) -> None:
        """Write a frame made by :func:`client_frame`."""
        assert self.transport is not None
        self.transport.write(frame)

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(client_frame(b"\x03\xe8", OP_CLOSE))
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        buf = self._buf
        buf += data
        if not self._upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                return
            status = bytes(buf[: buf.find(b"\r\n")])
            if b" 101 " not in status:
                self.opened.set_exception(ConnectionError(status.decode(errors="replace")))
                assert self.transport is not None
                self.transport.close()
                return
            del buf[: end + 4]
            self._upgraded = True
            self.opened.set_result(None)
        pos = 0
        end = len(buf)
        on_message = self.on_message
        while end - pos >= 2:
            opcode = buf[pos] & 0x0F
            size = buf[pos + 1] & 0x7F
            start = pos + 2
            if size == 126:
                if end - pos < 4:
                    break
                size = int.from_bytes(buf[pos + 2 : pos + 4], "big")
                start = pos + 4
            elif size == 127:
                if end - pos < 10:
                    break
                size = int.from_bytes(buf[pos + 2 : pos + 10], "big")
                start = pos + 10
            if end - start < size:
                break
            payload = bytes(buf[start : start + size])
            pos = start + size
            if opcode in (OP_BINARY, OP_TEXT):
                on_message(opcode, payload)
            elif opcode == OP_PING:
                self.send(client_frame(payload, OP_PONG))
            elif opcode == OP_CLOSE and self.transport is not None:
                self.transport.close()
        del buf[:pos]


async def connect(host: str, port: int, path: str) -> WsClient:
    """Open a connection and wait for the server's 101 answer."""
    loop = asyncio.get_running_loop()
    _, client = await loop.create_connection(lambda: WsClient(host, port, path), host, port)
    await client.opened
    return client
