"""A small WebSocket test client for the race server (real `websockets` connections).

async with WsClient.connect(server_url) as c:
    await c.send(p.Join(room=room, name="ann"))
    welcome = await c.expect(p.Welcome)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import websockets
from websockets.asyncio.client import ClientConnection

import protocol as p

__all__ = [
    "WsClient",
    "finished_pair",
    "race_alone",
    "seat_two_and_watch",
]

M = TypeVar("M", bound=p.Message)
N = TypeVar("N", bound=p.Message)

TIMEOUT = 5.0


async def seat_two_and_watch(
    room: str, ann: WsClient, bo: WsClient, spy: WsClient, ready: bool = True
) -> tuple[str, str]:
    """Seat ann and bo, let spy watch (its snapshot read); both ready unless told not to.
    Returns the two seat tokens."""
    token_a = (await ann.join(room, "ann")).token
    token_b = (await bo.join(room, "bo")).token
    assert token_a and token_b
    await spy.send(p.Watch(room=room))
    await spy.expect(p.Snapshot)
    if ready:
        await ann.send(p.Ready())
        await bo.send(p.Ready())
    return token_a, token_b


async def finished_pair(room: str, ann: WsClient, bo: WsClient) -> tuple[str, str]:
    """ann and bo race in `room` and resign: the race is over. Their seat tokens."""
    tokens = [(await ann.join(room, "ann")).token, (await bo.join(room, "bo")).token]
    await ann.send(p.Ready())
    await bo.send(p.Ready())
    await ann.expect(p.RaceStarted)
    await ann.send(p.Resign())
    await bo.send(p.Resign())
    await ann.expect(p.RaceFinished)
    ann_token, bo_token = tokens
    assert ann_token is not None and bo_token is not None
    return ann_token, bo_token


async def race_alone(client: WsClient, room: str, name: str = "ann") -> p.Welcome:
    """Take a seat in `room` and start the race at once (the host may start alone)."""
    welcome = await client.join(room, name)
    await client.send(p.Start())
    await client.expect(p.RaceStarted)
    return welcome


class WsClient:
    def __init__(self, ws: ClientConnection, binary: bool = True) -> None:
        self.ws = ws
        self.binary = binary
        self.seen: list[p.Message] = []  # everything received, in order
        self.version = 0  # last event version received

    @classmethod
    @asynccontextmanager
    async def connect(
        cls, server_url: str, binary: bool = True, path: str = "/ws"
    ) -> AsyncIterator[WsClient]:
        """`path`: the socket path, e.g. the `ws` a room's creation answered (`/ws?room=ID`)."""
        url = server_url.replace("http://", "ws://") + path
        async with websockets.connect(url, compression=None, max_size=2**22) as ws:
            yield cls(ws, binary)

    async def send(self, message: p.Message) -> None:
        if self.binary:
            await self.ws.send(p.encode_msgpack(message))
        else:
            await self.ws.send(p.encode_json(message))

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def recv(self, timeout: float = TIMEOUT) -> p.Message:
        data = await asyncio.wait_for(self.ws.recv(), timeout)
        if isinstance(data, bytes):
            message = p.decode_msgpack(data, p.SERVER_TO_CLIENT)
        else:
            json.loads(data)  # a text frame must be JSON
            message = p.decode_json(data, p.SERVER_TO_CLIENT)
        assert isinstance(message, p.Message), message
        if isinstance(message, p.Event):
            assert message.version == self.version + 1, (message, self.version)
            self.version = message.version
        elif isinstance(message, p.Snapshot):
            self.version = message.version
        self.seen.append(message)
        return message

    async def expect(self, kind: type[M], timeout: float = TIMEOUT) -> M:
        """Read until a message of `kind` (others are kept in `seen`)."""
        message = await self.expect_any((kind,), timeout)
        assert isinstance(message, kind)
        return message

    async def expect_any(
        self, kinds: tuple[type[p.Message], ...], timeout: float = TIMEOUT
    ) -> p.Message:
        """Read until a message of one of `kinds` (others are kept in `seen`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            message = await self.recv(max(0.01, deadline - loop.time()))
            if isinstance(message, kinds):
                return message

    async def move_until_accepted(
        self, move: p.Move, within: float, pause: float = 0.5
    ) -> p.Accepted:
        """Send `move` again under its seq until it is accepted, as a client does while the
        server answers `unavailable` (docs/protocol.md section 6); any other answer, or
        none within `within` seconds, fails the test."""
        async with asyncio.timeout(within):
            while True:
                await self.send(move)
                answer = await self.expect_any((p.Accepted, p.Refused), timeout=15)
                if isinstance(answer, p.Accepted):
                    return answer
                assert isinstance(answer, p.Refused) and answer.code == "unavailable", answer
                await asyncio.sleep(pause)

    async def play(self, moves: list[str], first_seq: int = 1) -> None:
        """Play `moves` in order from `first_seq`, each answered `accepted`: a move refused
        `rate_limited` is sent again under its seq after a pause, as a client does (any
        other answer fails the test)."""
        for seq, move in enumerate(moves, start=first_seq):
            while True:
                await self.send(p.Move(seq=seq, move=move))
                answer = await self.expect_any((p.Accepted, p.Refused))
                if isinstance(answer, p.Accepted):
                    break
                assert answer.code == "rate_limited", (seq, move, answer)
                await asyncio.sleep(0.2)

    async def expect_both(
        self, first: type[M], second: type[N], timeout: float = TIMEOUT
    ) -> tuple[M, N]:
        """Read until one of each kind arrived, in whichever order."""
        got: dict[type[p.Message], p.Message] = {}
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while first not in got or second not in got:
            message = await self.recv(max(0.01, deadline - loop.time()))
            if type(message) in (first, second):
                got.setdefault(type(message), message)
        a, b = got[first], got[second]
        assert isinstance(a, first) and isinstance(b, second)
        return a, b

    async def identify(self, key: str) -> p.Identified:
        """Act as the player whose key this is (`identify`), answered `identified`."""
        await self.send(p.Identify(key=key))
        return await self.expect(p.Identified)

    async def join(self, room: str, name: str = "", **fields: Any) -> p.Welcome:
        await self.send(p.Join(room=room, name=name, **fields))
        return await self.expect(p.Welcome)

    async def everything(self, timeout: float = 0.3) -> list[p.Message]:
        """All messages received so far, after waiting `timeout` for stragglers."""
        await self.quiet(timeout)
        return list(self.seen)

    async def quiet(self, timeout: float = 0.3) -> list[p.Message]:
        """Everything that arrives within `timeout`."""
        got: list[p.Message] = []
        try:
            while True:
                got.append(await self.recv(timeout))
        except TimeoutError:
            return got
