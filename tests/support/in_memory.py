"""The race service wired as the server wires it, on the in-memory store, with connections
whose frames are kept by a fake transport (no server, no socket)."""

from __future__ import annotations

import asyncio
import struct
import types
from typing import Any

import msgpack

import protocol as p
from server.handlers.service import RaceService
from server.live.connection import Connection, Flusher, TokenBucket
from server.live.hub import Hub
from server.metrics import Metrics
from server.settings import Settings
from server.storage.memory_store import MemoryFeed, MemoryRoomStore

__all__ = ["Transport", "connection", "settled", "world"]


class Transport:
    """What a connection writes: each write, and the messages in its WebSocket frames."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return 0

    def messages(self) -> list[p.Message]:
        out, data = [], b"".join(self.writes)
        while data:
            size, start = data[1] & 0x7F, 2
            if size == 126:
                size, start = struct.unpack("!H", data[2:4])[0], 4
            elif size == 127:
                size, start = struct.unpack("!Q", data[2:10])[0], 10
            wire: Any = msgpack.unpackb(data[start : start + size])
            message = p.SERVER_TO_CLIENT.build(wire)
            assert isinstance(message, p.Message), message
            out.append(message)
            data = data[start + size :]
        return out


def connection(
    name: str = "c", flusher: Flusher | None = None, bucket: TokenBucket | None = None
) -> tuple[Connection, Transport]:
    """A connection `proc-NAME` on a fake socket; with a flusher, its frames wait for the tick."""
    transport = Transport()
    ws: Any = types.SimpleNamespace(closed=False)
    conn = Connection(
        ws=ws,
        id=f"proc-{name}",
        max_buffer=1 << 20,
        bucket=bucket if bucket is not None else TokenBucket(99, 99),
    )
    conn.transport = transport
    if flusher is not None:
        conn.flusher = flusher
    return conn, transport


def world() -> tuple[MemoryRoomStore, Hub, RaceService]:
    """A store, rooms and a service in memory, as the server wires them."""
    feed = MemoryFeed()
    store = MemoryRoomStore(feed)
    hub = Hub(store, feed)
    return store, hub, RaceService(Settings(), store, hub, Metrics(lambda: 0, lambda: 0))


async def settled() -> None:
    for _ in range(20):
        await asyncio.sleep(0.01)
