"""A TCP relay between a client and a server on loopback, for tests that cut a client's
connections as a network fault would (the server and the client both stay up).

async with tcp_relay(server_port) as relay:
    ...connect to relay.url...
    relay.cut()  # every connection through it is reset; new ones pass again
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from support.ports import free_port

__all__ = ["Relay", "tcp_relay"]


class Relay:
    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        pair = (writer, up_writer)
        self._pairs.add(pair)
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            self._pairs.discard(pair)
            for each in pair:
                each.close()

    def cut(self) -> int:
        """Reset every connection through the relay; how many there were."""
        cut = len(self._pairs)
        for pair in list(self._pairs):
            for writer in pair:
                writer.transport.abort()
        return cut

    async def close(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(OSError):
        writer.close()


@contextlib.asynccontextmanager
async def tcp_relay(target: int) -> AsyncIterator[Relay]:
    relay = Relay(target)
    await relay.start()
    try:
        yield relay
    finally:
        await relay.close()
