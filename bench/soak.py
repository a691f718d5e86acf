"""Soak: hours at an everyday load, to see that nothing grows or goes wrong with time.

``python -m bench.soak --duration 3600 --interval 600`` starts a redis-server (AOF on) and
two ``python -m server`` processes behind the shipped HAProxy config (deploy/haproxy.cfg,
its ports moved to free ones, its servers these two), and plays through HAProxy
with the terminal client's own reconnecting ``Seat`` (client_cli/seat.py) and its bot's
planner, for ``--duration`` seconds:

- ``--rooms`` rooms racing at once, two racers each on a winnable Shaula deal, a move
  every ``--pace`` seconds; a room whose race ends is followed by a new one;
- every ``--drop-every`` seconds a racer's connection is cut (it comes back by itself,
  takes its seat back and catches up);
- a spectator joins a running room every ``--watch-every`` seconds and leaves after 5-15 s;
- a quick match (two players asking at once, then racing) every ``--quick-every`` seconds.

Every ``--interval`` seconds it prints a row: moves accepted in the interval, errors (a
move refused or unanswered, a join refused, a bot failing: must be 0), the moves' latency
(from the move sent to its acknowledgement, p50 and p99), each server process's resident
memory and open descriptors, and Redis's memory. Bounded: everything stops at the end of
``--duration``. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from redis.asyncio import Redis

from bench.loadgen import percentile
from bench.server import child, haproxy_binary, haproxy_config
from client_cli.bot import Planner
from client_cli.seat import Seat
from server.redis_io.supervisor import RedisSupervisor, free_loopback_port

__all__ = ["Row", "Soak", "main", "run"]

SEEDS = (2, 3, 6, 7, 8, 9)  # Shaula deals the solver wins
HEADER = (
    f"{'minute':>7} {'moves':>7} {'errors':>6} {'p50 ms':>7} {'p99 ms':>7} "
    f"{'RSS MiB (each)':>15} {'fds (each)':>11} {'Redis MiB':>9}"
)


@dataclass
class Row:
    """One interval's figures (`at`: seconds since the start, at its end)."""

    at: float
    moves: int
    errors: int
    p50_ms: float
    p99_ms: float
    rss_mib: list[float]
    fds: list[int]
    redis_mib: float

    def text(self) -> str:
        rss = "/".join(f"{r:.0f}" for r in self.rss_mib)
        fds = "/".join(str(f) for f in self.fds)
        return (
            f"{self.at / 60:>7.1f} {self.moves:>7} {self.errors:>6} {self.p50_ms:>7.1f} "
            f"{self.p99_ms:>7.1f} {rss:>15} {fds:>11} {self.redis_mib:>9.1f}"
        )


@dataclass
class Soak:
    """What the players did in the current interval, and the bench's own failures."""

    front: str
    args: argparse.Namespace
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    racers: list[Seat] = field(default_factory=list)  # racing now
    rooms: list[str] = field(default_factory=list)  # running now
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    def failed(self, what: str) -> None:
        self.errors.append(what)
        print(f"error: {what}", file=sys.stderr)

    async def race(self, seat: Seat) -> None:
        """Play the seat's race to its end (the solver's line, else resign)."""
        planner = Planner()
        await seat.ready(True)
        view = seat.view
        while view.phase in ("lobby", "countdown") and not self.stop.is_set():
            await asyncio.sleep(0.05)
        self.racers.append(seat)
        try:
            while view.phase == "running" and not self.stop.is_set():
                me, engine = view.me, view.engine
                if me is None or engine is None or me.won or me.out:
                    await asyncio.sleep(0.05)
                    continue
                move = await planner.next_move(engine, hidden=False)
                if move is None:
                    await seat.resign()
                    break
                sent = time.monotonic()
                outcome = await seat.move(move)
                if outcome.ok:
                    self.latencies.append(time.monotonic() - sent)
                elif outcome.code not in ("not_running", "player_out"):  # the race just ended
                    self.failed(f"{view.room} {seat.name}: {move} refused: {outcome.reason}")
                    planner.forget()
                await asyncio.sleep(self.args.pace)
            while view.phase != "finished" and not self.stop.is_set():
                await asyncio.sleep(0.05)
        finally:
            self.racers.remove(seat)

    async def guarded(self, what: str, work: Awaitable[None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not self.stop.is_set():
                self.failed(f"{what}: {type(exc).__name__}: {exc}")

    async def room_after_room(self, slot: int) -> None:
        """Rooms of two racers, one after the other, until the end."""
        while not self.stop.is_set():
            seed = SEEDS[(slot + len(self.rooms)) % len(SEEDS)]
            async with (
                aiohttp.ClientSession() as http,
                http.post(
                    f"{self.front}/rooms", json={"game": "shaula", "seed": seed, "countdown": 0.5}
                ) as answer,
            ):
                if answer.status != 201:
                    self.failed(f"POST /rooms: {answer.status} {await answer.text()}")
                    await asyncio.sleep(1)
                    continue
                room = (await answer.json())["room"]["id"]
            seats = [Seat(self.front, room, name) for name in ("ann", "bo")]
            self.rooms.append(room)
            try:
                for seat in seats:
                    await seat.start()
                await asyncio.gather(*(self.race(seat) for seat in seats))
            finally:
                self.rooms.remove(room)
                for seat in seats:
                    await seat.close()

    async def quick_match(self) -> None:
        seats = [Seat(self.front, "", name, quick="shaula") for name in ("cy", "di")]
        try:
            await asyncio.gather(*(seat.start() for seat in seats))
            async with asyncio.timeout(30):
                while not all(seat.view.room for seat in seats):
                    await asyncio.sleep(0.05)
            await asyncio.gather(*(self.race(seat) for seat in seats))
        finally:
            for seat in seats:
                await seat.close()

    async def spectate(self, room: str, stay: float) -> None:
        seat = Seat(self.front, room, spectator=True)
        try:
            await seat.start()
            await asyncio.sleep(stay)
        finally:
            await seat.close()

    async def every(
        self, seconds: float, make: Callable[[], Awaitable[None] | None], what: str
    ) -> None:
        """`make()` (a coroutine, or None for nothing now) every `seconds`, in the
        background, until the end."""
        tasks: set[asyncio.Task[None]] = set()
        rng = random.Random(what)
        try:
            while not self.stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), seconds * rng.uniform(0.5, 1.5))
                if self.stop.is_set():
                    break
                work = make()
                if work is not None:
                    task = asyncio.create_task(self.guarded(what, work))
                    tasks.add(task)
                    task.add_done_callback(tasks.discard)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@contextlib.asynccontextmanager
async def servers(redis_url: str, ports: list[int]) -> AsyncIterator[list[int]]:
    """The server processes, running; their pids."""
    async with contextlib.AsyncExitStack() as stack:
        pids = []
        for port in ports:
            command = [sys.executable, "-m", "server", "--port", str(port)]
            env = {"REDIS_URL": redis_url, "SOLRACE_LOG_LEVEL": "WARNING"}
            process = await stack.enter_async_context(child(command, port, None, env, quiet=True))
            pids.append(process.pid)
        yield pids


async def healthy(url: str, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    async with aiohttp.ClientSession() as http:
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(f"{url}/healthz") as answer:
                    if answer.status == 200:
                        return
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} is not healthy")
            await asyncio.sleep(0.2)


Out = Callable[[str], None]


async def run(args: argparse.Namespace, out: Out = print) -> list[Row]:
    """The soak; each row is given to `out` as it is measured."""
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="solrace-soak-") as tmp_dir:
        tmp = Path(tmp_dir)
        async with RedisSupervisor(str(tmp / "redis")) as redis_url:
            ports = [free_loopback_port() for _ in range(2)]
            front = free_loopback_port()
            config = tmp / "haproxy.cfg"
            config.write_text(haproxy_config(front, ports, str(tmp / "haproxy.sock")))
            async with (
                servers(redis_url, ports) as pids,
                child([haproxy_binary(), "-db", "-f", str(config)], front, None, quiet=True),
            ):
                url = f"http://127.0.0.1:{front}"
                await healthy(url)
                redis = Redis.from_url(redis_url)
                try:
                    rows = await _soak(args, url, pids, redis, out)
                finally:
                    await redis.aclose()
    return rows


async def _soak(
    args: argparse.Namespace, url: str, pids: list[int], redis: Redis, out: Out
) -> list[Row]:
    soak = Soak(url, args)
    rng = random.Random(1)

    def drop() -> Awaitable[None] | None:
        if not soak.racers:
            return None
        return rng.choice(soak.racers).link.drop()

    def watch() -> Awaitable[None] | None:
        if not soak.rooms:
            return None
        return soak.spectate(rng.choice(soak.rooms), rng.uniform(5, 15))

    workers = [
        asyncio.create_task(soak.guarded("rooms", soak.room_after_room(slot)))
        for slot in range(args.rooms)
    ]
    workers += [
        asyncio.create_task(soak.every(args.drop_every, drop, "reconnect")),
        asyncio.create_task(soak.every(args.watch_every, watch, "spectator")),
        asyncio.create_task(soak.every(args.quick_every, soak.quick_match, "quick match")),
    ]
    rows: list[Row] = []
    began = time.monotonic()
    out(HEADER)
    try:
        while (left := args.duration - (time.monotonic() - began)) > 0:
            await asyncio.sleep(min(args.interval, left))
            latencies, soak.latencies = sorted(soak.latencies), []
            errors, soak.errors = soak.errors, []
            memory = await redis.info("memory")
            row = Row(
                at=time.monotonic() - began,
                moves=len(latencies),
                errors=len(errors),
                p50_ms=1000 * percentile(latencies, 0.50) if latencies else 0.0,
                p99_ms=1000 * percentile(latencies, 0.99) if latencies else 0.0,
                rss_mib=[rss_mib(pid) for pid in pids],
                fds=[open_fds(pid) for pid in pids],
                redis_mib=int(memory["used_memory"]) / 2**20,
            )
            rows.append(row)
            out(row.text())
    finally:
        soak.stop.set()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
    return rows


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    parser.add_argument("--duration", type=float, default=3600.0, help="seconds in all")
    parser.add_argument("--interval", type=float, default=600.0, help="seconds a row covers")
    parser.add_argument("--rooms", type=int, default=8, help="rooms racing at once")
    parser.add_argument("--pace", type=float, default=0.5, help="seconds between a racer's moves")
    parser.add_argument("--drop-every", type=float, default=10.0, help="seconds between cuts")
    parser.add_argument("--watch-every", type=float, default=5.0, help="seconds between spectators")
    parser.add_argument(
        "--quick-every", type=float, default=30.0, help="seconds between quick matches"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    rows = asyncio.run(run(args))
    errors = sum(row.errors for row in rows)
    print(f"{len(rows)} intervals, {sum(r.moves for r in rows)} moves accepted, {errors} errors")
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
