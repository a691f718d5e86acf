"""A TCP relay between a client and a server on loopback, for tests that cut a client's
connections as a network fault would (the server and the client both stay up), or stand
in front of a server as a faulty proxy or a cloud endpoint does.

async with tcp_relay(server_port) as relay:
    ...connect to relay.url...
    relay.cut()  # every connection through it is reset; new ones pass again
    relay.mode = "close"  # from now on new connections are accepted, then closed at once

What happens to a new connection (`mode`):
- "pass": relayed both ways (the default);
- "close": accepted, then closed at once (a proxy whose server is restarting);
- "reset": accepted, then reset;
- "hold": accepted and read, never answered nor closed (a dead link, a frozen server);
- "slow": relayed, each chunk `slow` seconds late (a link's latency).
`refuse()` stops listening (new connections are refused) until `listen()`; `freeze()`
makes the connections open now stop relaying without closing (half-open links), until
`cut()` resets them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from support.ports import free_port

__all__ = ["Relay", "tcp_relay"]

MODES = ("pass", "close", "reset", "hold", "slow")


class Relay:
    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_port()
        self.mode = "pass"
        self.slow = 0.3  # seconds each chunk is late in "slow" mode, each way
        self.accepted = 0  # connections accepted, in any mode
        self._pairs: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._held: set[asyncio.StreamWriter] = set()
        self._frozen: set[asyncio.StreamWriter] = set()  # writers that relay nothing now
        self._server: asyncio.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    async def start(self) -> None:
        await self.listen()

    async def listen(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)

    async def refuse(self) -> None:
        """Stop listening: a new connection is refused (open ones go on)."""
        if self._server is not None:
            server, self._server = self._server, None
            server.close()
            await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        mode = self.mode
        assert mode in MODES, mode
        if mode == "close":
            writer.close()
            return
        if mode == "reset":
            writer.transport.abort()
            return
        if mode == "hold":
            self._held.add(writer)
            try:
                with contextlib.suppress(OSError):
                    while await reader.read(65536):
                        pass
            finally:
                self._held.discard(writer)
                writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        pair = (writer, up_writer)
        self._pairs.add(pair)
        delay = self.slow if mode == "slow" else 0.0
        try:
            await asyncio.gather(
                self._pipe(reader, up_writer, delay), self._pipe(up_reader, writer, delay)
            )
        finally:
            self._pairs.discard(pair)
            for each in pair:
                self._frozen.discard(each)
                each.close()

    async def _pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float
    ) -> None:
        if delay:
            await self._late_pipe(reader, writer, delay)
            return
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            while data := await reader.read(65536):
                if writer in self._frozen:
                    continue  # a half-open link: the bytes go nowhere, nobody is told
                writer.write(data)
                await writer.drain()
        if writer in self._frozen:
            return  # nor is its end told: the other side stays open until `cut()`
        with contextlib.suppress(OSError):
            writer.close()

    async def _late_pipe(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float
    ) -> None:
        """Each chunk is written `delay` seconds after it was read (a link's latency: the
        chunks behind it are not held up longer)."""
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue()

        async def deliver() -> None:
            while True:
                due, data = await chunks.get()
                await asyncio.sleep(max(0.0, due - loop.time()))
                if not data:
                    return
                if writer not in self._frozen:
                    writer.write(data)
                    await writer.drain()

        delivering = asyncio.ensure_future(deliver())
        try:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while data := await reader.read(65536):
                    chunks.put_nowait((loop.time() + delay, data))
            chunks.put_nowait((loop.time() + delay, b""))
            with contextlib.suppress(OSError):
                await delivering
        finally:
            delivering.cancel()
            with contextlib.suppress(OSError):
                writer.close()

    def freeze(self) -> int:
        """The connections open now relay nothing more, and are not closed; how many."""
        for pair in self._pairs:
            self._frozen.update(pair)
        return len(self._pairs)

    def cut(self) -> int:
        """Reset every connection through the relay (and those held); how many there were."""
        cut = len(self._pairs) + len(self._held)
        for pair in list(self._pairs):
            for writer in pair:
                writer.transport.abort()
        for writer in list(self._held):
            writer.transport.abort()
        return cut

    async def close(self) -> None:
        self.cut()
        await self.refuse()


@contextlib.asynccontextmanager
async def tcp_relay(target: int) -> AsyncIterator[Relay]:
    relay = Relay(target)
    await relay.start()
    try:
        yield relay
    finally:
        await relay.close()
