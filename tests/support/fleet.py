"""A deployment in miniature for the fault tests: server processes behind the shipped
HAProxy config, and bot racers that play through it with the terminal client's own
reconnecting `Seat`, remembering every move the server acknowledged to them.

- `fleet(redis_url, tmp, n)`: n `ServerProcess`es (tests/support/server_processes.py) behind
  HAProxy; yields a `Fleet` (`front` is the balancer's URL; `await server_of(room)` is the
  process a room's sockets are sent to).
- `Racer(front, room, name)`: `await run(pace)` joins, says ready and plays the solver's
  line until the race ends; `acked` holds the moves acknowledged to it, in order (and
  `acked_at` when), `refused` the others with the reason.
- `check_boards(front, room, seed, racers)`: what the server holds for each racer (its
  moves and board, read by rejoining with the seat's token) against what was acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import core
import protocol as p
from client_cli.bot import Planner
from client_cli.seat import Seat
from support.balancers import haproxy, haproxy_config, server_states
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.wsclient import WsClient

__all__ = ["Fleet", "Racer", "check_boards", "fleet"]


@dataclass
class Fleet:
    servers: list[ServerProcess]
    front: str
    stats: Path

    async def wait_all_up(self, limit: float = 20.0) -> None:
        """Until HAProxy sees every server UP."""
        deadline = time.monotonic() + limit
        while not all(s.startswith("UP") for s in server_states(self.stats).values()):
            assert time.monotonic() < deadline, server_states(self.stats)
            await asyncio.sleep(0.1)

    async def server_of(self, room: str) -> ServerProcess:
        """The process the balancer sends `room`'s sockets to now (found by opening one)."""
        before = [await server.connections() for server in self.servers]
        async with WsClient.connect(self.front, path=f"/ws?room={room}"):
            after = [await server.connections() for server in self.servers]
        (index,) = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if a > b]
        return self.servers[index]

    def logs(self) -> str:
        return "\n".join(f"=== server {s.port}\n{s.text()}" for s in self.servers)


@contextlib.asynccontextmanager
async def fleet(
    redis_url: str, tmp: Path, n: int = 3, redis_urls: list[str] | None = None, **env: str
) -> AsyncIterator[Fleet]:
    """`redis_urls`: the Redis each server reaches, when not all `redis_url` (one through a
    relay the test can cut, say)."""
    assert n == 3, "the shipped HAProxy config names three servers"
    ports, front = [free_port() for _ in range(n)], free_port()
    urls = redis_urls or [redis_url] * n
    servers = [
        ServerProcess(port, environment(REDIS_URL=url, **env), log=tmp / f"server-{port}.log")
        for port, url in zip(ports, urls, strict=True)
    ]
    stats = tmp / "haproxy.sock"
    try:
        await asyncio.gather(*(server.start() for server in servers))
        config = haproxy_config(tmp, front, ports)
        with haproxy(config, stats, front, tmp / "haproxy.log"):
            running = Fleet(servers, f"http://127.0.0.1:{front}", stats)
            await running.wait_all_up()
            yield running
    finally:
        for server in servers:
            server.kill()
        await asyncio.gather(*(server.stop() for server in servers))


@dataclass
class Racer:
    front: str
    room: str
    name: str
    acked: list[str] = field(default_factory=list)
    acked_at: list[float] = field(default_factory=list)  # time.monotonic() of each
    refused: list[tuple[str, str]] = field(default_factory=list)
    seat: Seat = field(init=False)

    def __post_init__(self) -> None:
        self.seat = Seat(self.front, self.room, self.name)

    async def run(self, pace: float) -> None:
        seat, planner = self.seat, Planner()
        await seat.start()
        await seat.ready(True)
        view = seat.view
        while view.phase in ("lobby", "countdown"):
            await asyncio.sleep(0.05)
        while view.phase == "running":
            me, engine = view.me, view.engine
            if me is None or engine is None or me.won or me.out:
                await asyncio.sleep(0.05)
                continue
            move = await planner.next_move(engine, hidden=False)
            if move is None:
                break
            outcome = await seat.move(move)
            if outcome.ok:
                self.acked.append(move)
                self.acked_at.append(time.monotonic())
            else:
                planner.forget()
                self.refused.append((move, f"{outcome.code}: {outcome.reason}"))
                if outcome.code in ("not_running", "player_out"):
                    break
            await asyncio.sleep(pace)
        while view.phase != "finished":
            await asyncio.sleep(0.05)

    @property
    def drops(self) -> int:
        return self.seat.link.drops


async def check_boards(front: str, room: str, seed: int, racers: list[Racer]) -> list[str]:
    """Each racer's moves and board as the server holds them, against what was
    acknowledged to them; returns what differs (empty: all equal)."""
    problems = []
    for racer in racers:
        token = racer.seat.view.token
        async with WsClient.connect(front) as client:
            welcome = await client.join(room, token=token)
            snapshot = await client.expect(p.Snapshot)
        assert welcome.seat == racer.seat.view.seat
        held = snapshot.moves or []
        if held != racer.acked:
            pairs = enumerate(zip(held, racer.acked, strict=False))
            first = next((i for i, (a, b) in pairs if a != b), None)
            problems.append(
                f"{room} {racer.name}: the server holds {len(held)} moves, "
                f"{len(racer.acked)} were acknowledged; first difference at {first}"
            )
            continue
        game = core.new_game("shaula", seed)
        for move in racer.acked:
            game.apply(move)
        if snapshot.board != game.state("player"):
            problems.append(f"{room} {racer.name}: the board is not the replay of its moves")
    return problems
