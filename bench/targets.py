"""What the load generator talks to: the bare relay, or the real solrace server.

A target connects the racers, gets them to the point where moves count, pre-encodes
every move frame (so sending costs one ``transport.write``), and recognises the
answer to a racer's move among the messages it receives.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, TypeVar

import aiohttp
import msgpack

import protocol as p
from bench.wsclient import WsClient, client_frame, connect

__all__ = ["TARGETS", "Racer", "RelayTarget", "Target", "gather_batched"]

T = TypeVar("T")


def _ignore_answer(racer: Racer, index: int, accepted: bool) -> None:
    pass


@dataclass(eq=False)
class Racer:
    """One simulated player: its connection and its precomputed move frames."""

    client: WsClient
    frames: list[bytes]
    next: int = 0  # index of the next move to send
    answered: int = 0
    sent_at: list[float] = field(default_factory=list)
    answered_at: list[float] = field(default_factory=list)
    # Set by the measurement: (racer, move index, accepted) for each answer.
    answer: Callable[[Racer, int, bool], None] = _ignore_answer


class Target(Protocol):
    errors: list[str]

    def __init__(self, plan: dict[str, Any]) -> None: ...

    async def open_racers(self) -> list[Racer]: ...

    async def close(self) -> None: ...


async def gather_batched(factories: Sequence[Callable[[], Awaitable[T]]], batch: int) -> list[T]:
    """Run the coroutines ``batch`` at a time (a thousand at once overflows the backlog)."""
    results: list[T] = []
    for first in range(0, len(factories), batch):
        chunk = factories[first : first + batch]
        results.extend(await asyncio.gather(*(make() for make in chunk)))
    return results


class RelayTarget:
    """The bare relay: a racer's move comes back to it, as to the 7 others of its room."""

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.errors: list[str] = []
        self.racers: list[Racer] = []

    async def open_racers(self) -> list[Racer]:
        plan = self.plan
        room_size = int(plan["room_size"])
        sequences: list[list[str]] = plan["sequences"]

        async def open_one(i: int) -> Racer:
            room = i // room_size
            client = await connect(plan["host"], plan["port"], f"/relay/{room}")
            moves = sequences[room % len(sequences)]
            frames = [
                client_frame(msgpack.packb({"type": "move", "racer": i, "seq": k, "move": m}))
                for k, m in enumerate(moves)
            ]
            racer = Racer(client, frames)

            def on_message(opcode: int, payload: bytes) -> None:
                message = msgpack.unpackb(payload)
                if message["racer"] == i:
                    racer.answer(racer, message["seq"], True)

            client.on_message = on_message
            return racer

        count = int(plan["racers"])
        self.racers = await gather_batched([partial(open_one, i) for i in range(count)], 100)
        return self.racers

    async def close(self) -> None:
        for racer in self.racers:
            racer.client.close()
        await asyncio.sleep(0.1)


class SolraceTarget:
    """The real server: rooms made over HTTP, seats taken with ``join``, everyone ready.

    A racer's answer is its ``accepted`` (or ``refused``) message; the ``progress``
    events of the 7 others are read and dropped, as a real client would.
    """

    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.errors: list[str] = []
        self.racers: list[Racer] = []

    async def _create_rooms(self, sizes: list[int]) -> list[tuple[str, int]]:
        plan = self.plan
        base = f"http://{plan['host']}:{plan['port']}"
        seeds: list[int] = plan["seeds"]
        async with aiohttp.ClientSession() as session:

            async def create(index: int) -> tuple[str, int]:
                seed = seeds[index % len(seeds)]
                body = {
                    "game": plan["game"],
                    "seed": seed,
                    "seats": sizes[index],
                    "undo": False,
                    "countdown": 0.5,
                }
                async with session.post(f"{base}/rooms", json=body) as answer:
                    answer.raise_for_status()
                    room: str = (await answer.json())["room"]["id"]
                    return room, index % len(seeds)

            return await gather_batched([partial(create, i) for i in range(len(sizes))], 50)

    async def open_racers(self) -> list[Racer]:
        plan = self.plan
        room_size = int(plan["room_size"])
        count = int(plan["racers"])
        # Every seat taken, or the race never counts down: the last room may be smaller.
        sizes = [min(room_size, count - first) for first in range(0, count, room_size)]
        rooms = await self._create_rooms(sizes)
        sequences: list[list[str]] = plan["sequences"]
        started: list[asyncio.Future[None]] = []

        async def open_one(i: int) -> Racer:
            room, sequence = rooms[i // room_size]
            # The room in the path: behind HAProxy (bench.server --haproxy) a room's racers
            # reach one process, as deployed.
            client = await connect(plan["host"], plan["port"], p.socket_path(room))
            frames = [
                client_frame(p.encode_msgpack(p.Move(seq=k + 1, move=m)))
                for k, m in enumerate(sequences[sequence])
            ]
            racer = Racer(client, frames)
            race_on: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            started.append(race_on)

            def on_message(opcode: int, payload: bytes) -> None:
                message = msgpack.unpackb(payload)
                kind = message["type"]
                if kind == "accepted":
                    racer.answer(racer, message["seq"] - 1, True)
                elif kind == "refused":
                    racer.answer(racer, message["seq"] - 1, False)
                    if len(self.errors) < 20:
                        self.errors.append(f"refused: {message.get('reason')}")
                elif kind == "started" and not race_on.done():
                    race_on.set_result(None)
                elif kind == "error" and len(self.errors) < 20:
                    self.errors.append(f"error: {message.get('message')}")

            client.on_message = on_message
            client.send(client_frame(p.encode_msgpack(p.Join(room=room, name=f"bot{i}"))))
            client.send(client_frame(p.encode_msgpack(p.Ready())))
            return racer

        self.racers = await gather_batched([partial(open_one, i) for i in range(count)], 100)
        await asyncio.wait_for(asyncio.gather(*started), 60)
        return self.racers

    async def close(self) -> None:
        for racer in self.racers:
            racer.client.close()
        await asyncio.sleep(0.1)


TARGETS: dict[str, type[Target]] = {"relay": RelayTarget, "solrace": SolraceTarget}
