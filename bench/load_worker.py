"""One client process of bench/load.py: racers and spectators over real WebSockets.

``python -m bench.load_worker`` reads its plan (one JSON line) on stdin, opens every
connection it names (racers join their room and say ready; spectators watch theirs),
prints ``{"ready": ...}`` once they are all in, then sends moves from ``go`` until
``stop`` (lines on stdin) and prints what it measured as one JSON line.

It speaks the wire protocol from its maps (docs/protocol.md), as an outside client would,
with the benchmark's minimal client (bench/wsclient.py), and never runs the engine: every
racer replays a precomputed legal sequence (bench/racers.py). Times are
``time.monotonic()`` (CLOCK_MONOTONIC, the same clock in every process of the machine),
so the coordinator can cut every process's samples to the same measured windows. A
spectator's latency is the time from the server's stamp of the move (`at`, wall clock)
to its arrival; for the relay, from the racer's own stamp.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import msgpack

from bench.instrument import collections_off, collections_on
from bench.targets import gather_batched
from bench.wsclient import WsClient, client_frame, connect
from protocol import socket_path

__all__ = ["Group", "Worker", "main"]

PROTOCOL_VERSION = 1  # docs/protocol.md: every map carries "type" and "v"
OPEN_BATCH = 200  # connections opened at once (more overflows the listen backlog)


def wire(kind: str, **fields: Any) -> bytes:
    """A client frame carrying the message map `kind` with `fields`."""
    body = {"type": kind, "v": PROTOCOL_VERSION, **fields}
    return client_frame(msgpack.packb(body, use_bin_type=True))


@dataclass
class Group:
    """The connections of one room in this process."""

    room: str
    racers: int = 0
    spectators: int = 0
    sequence: int = 0  # index of the racers' precomputed moves in the plan


@dataclass(eq=False)
class Racer:
    client: WsClient
    moves: list[str]
    key: int  # the relay's sender id
    next: int = 0
    sent_at: list[float] = field(default_factory=list)
    answered_at: list[float] = field(default_factory=list)


class Worker:
    def __init__(self, plan: dict[str, Any]) -> None:
        self.plan = plan
        self.relay = plan["target"] == "relay"
        self.groups = [Group(**g) for g in plan["groups"]]
        self.sequences: list[list[str]] = plan.get("sequences", [])
        self.racers: list[Racer] = []
        self.spectators: list[WsClient] = []
        # (arrival, latency) of every progress event a spectator or a racer received.
        self.watched: list[tuple[float, float]] = []
        self.opponents: list[tuple[float, float]] = []
        self.errors: list[str] = []
        self.error_count = 0
        self.refused = 0
        self.closed = 0  # connections the server closed before the end
        self._ending = False
        self._started: list[asyncio.Future[None]] = []

    def _error(self, text: str) -> None:
        self.error_count += 1
        if len(self.errors) < 10:
            self.errors.append(text)

    async def _open(self, path: str) -> WsClient:
        client = await connect(self.plan["host"], self.plan["port"], path)
        client.closed.add_done_callback(self._lost)
        return client

    def _lost(self, _: asyncio.Future[None]) -> None:
        if not self._ending:
            self.closed += 1

    # ------------------------------------------------------------ opening

    async def open(self) -> int:
        """Open every connection; returns how many, once racers are in running races and
        spectators have their snapshots."""
        jobs: list[Callable[[], Any]] = []
        key = 0
        for group in self.groups:
            for _ in range(group.racers):
                jobs.append(partial(self._open_racer, group, key))
                key += 1
            jobs += [partial(self._open_spectator, group)] * group.spectators
        await gather_batched(jobs, OPEN_BATCH)
        if self._started:
            await asyncio.wait_for(asyncio.gather(*self._started), 60)
        return len(self.racers) + len(self.spectators)

    async def _open_racer(self, group: Group, key: int) -> None:
        moves = self.sequences[group.sequence]
        # The room in the path: behind a balancer a room's sockets reach one process.
        path = f"/relay/{group.room}" if self.relay else socket_path(group.room)
        client = await self._open(path)
        racer = Racer(client, moves, key, sent_at=[0.0] * len(moves))
        racer.answered_at = [0.0] * len(moves)
        self.racers.append(racer)
        if self.relay:
            client.on_message = partial(self._relay_racer_message, racer)
            return
        started: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._started.append(started)
        client.on_message = partial(self._racer_message, racer, started)
        client.send(wire("join", room=group.room, name=f"r{key}"))
        client.send(wire("ready", ready=True))

    def _racer_message(
        self, racer: Racer, started: asyncio.Future[None], opcode: int, payload: bytes
    ) -> None:
        message = msgpack.unpackb(payload)
        kind = message["type"]
        if kind == "progress":
            self.opponents.append((time.monotonic(), time.time() - message["at"]))
        elif kind == "accepted":
            racer.answered_at[message["seq"] - 1] = time.monotonic()
        elif kind == "refused":
            racer.answered_at[message["seq"] - 1] = time.monotonic()
            self.refused += 1
            self._error(f"refused: {message.get('reason')}")
        elif kind == "started" and not started.done():
            started.set_result(None)
        elif kind == "error":
            self._error(f"error: {message.get('message')}")

    def _relay_racer_message(self, racer: Racer, opcode: int, payload: bytes) -> None:
        message = msgpack.unpackb(payload)
        if message["r"] == racer.key:
            racer.answered_at[message["s"]] = time.monotonic()
        else:
            self.opponents.append((time.monotonic(), time.time() - message["t"]))

    async def _open_spectator(self, group: Group) -> None:
        if self.relay:
            client = await self._open(f"/relay/{group.room}")
            client.on_message = self._relay_spectator_message
        else:
            client = await self._open(socket_path(group.room))
            # Ready once its snapshot came: the room has attached it (measuring starts
            # after the crowd is in, not while it is still arriving).
            snapshot: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._started.append(snapshot)
            client.on_message = partial(self._spectator_message, snapshot)
            client.send(wire("watch", room=group.room))
        self.spectators.append(client)

    def _spectator_message(
        self, snapshot: asyncio.Future[None], opcode: int, payload: bytes
    ) -> None:
        message = msgpack.unpackb(payload)
        kind = message["type"]
        if kind == "snapshot" and not snapshot.done():
            snapshot.set_result(None)
        elif kind == "progress":
            self.watched.append((time.monotonic(), time.time() - message["at"]))
        elif kind == "error":
            self._error(f"error: {message.get('message')}")

    def _relay_spectator_message(self, opcode: int, payload: bytes) -> None:
        message = msgpack.unpackb(payload)
        self.watched.append((time.monotonic(), time.time() - message["t"]))

    # ------------------------------------------------------------ sending

    def _send(self, racer: Racer) -> None:
        index = racer.next
        if index >= len(racer.moves):
            return
        racer.next = index + 1
        racer.sent_at[index] = time.monotonic()
        if self.relay:
            body = {"r": racer.key, "s": index, "t": time.time()}
            racer.client.send(client_frame(msgpack.packb(body)))
        else:
            racer.client.send(wire("move", seq=index + 1, move=racer.moves[index]))

    async def play(self, stop: asyncio.Event) -> None:
        """Every racer at `rate` moves/s, open loop, phases spread evenly, until `stop`."""
        racers = self.racers
        if not racers:
            await stop.wait()
            return
        total_rate = float(self.plan["rate"]) * len(racers)
        start = time.monotonic()
        due_sent = 0
        while not stop.is_set():
            due = int((time.monotonic() - start) * total_rate)
            while due_sent < due:
                self._send(racers[due_sent % len(racers)])
                due_sent += 1
            # libuv timers tick in milliseconds: a shorter sleep would spin the core.
            await asyncio.sleep(0.001)

    def result(self) -> dict[str, Any]:
        acks: list[tuple[float, float]] = []  # (sent, latency; -1: no answer)
        for racer in self.racers:
            for sent, answered in zip(racer.sent_at, racer.answered_at, strict=True):
                if sent:
                    acks.append((sent, answered - sent if answered else -1.0))
        return {
            "connections": len(self.racers) + len(self.spectators),
            "acks": acks,
            "opponents": self.opponents,
            "watched": self.watched,
            "errors": self.errors,
            "error_count": self.error_count,
            "refused": self.refused,
            "closed": self.closed,
        }

    def close(self) -> None:
        self._ending = True
        for racer in self.racers:
            racer.client.close()
        for client in self.spectators:
            client.close()


def raise_descriptor_limit() -> int:
    """The soft limit on open files raised to the hard one (a worker may hold 10,000)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


async def _lines() -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=1 << 24)
    loop = asyncio.get_running_loop()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    return reader


def _say(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def run() -> None:
    reader = await _lines()
    plan = json.loads(await reader.readline())
    raise_descriptor_limit()
    worker = Worker(plan)
    opened = time.monotonic()
    count = await worker.open()
    _say({"ready": count, "open_s": time.monotonic() - opened})
    collections_off()  # the instrument adds no pauses of its own
    stop = asyncio.Event()
    player: asyncio.Task[None] | None = None
    while line := (await reader.readline()).strip():
        if line == b"go":
            player = asyncio.create_task(worker.play(stop))
        elif line == b"stop":
            break
    stop.set()
    if player is not None:
        await player
    # Answers to the last moves come in before anything is counted missing.
    await asyncio.sleep(float(plan.get("drain", 1.5)))
    collections_on()
    worker.close()
    await asyncio.sleep(0.1)
    _say(worker.result())


def main() -> None:
    try:
        import uvloop
    except ImportError:
        asyncio.run(run())
    else:
        uvloop.run(run())


if __name__ == "__main__":
    main()
