"""Benchmark: does memory come back after connections close?

``python -m bench.closed_connections`` starts ``python -m server`` (uvloop, as deployed)
on its own redis-server and runs ``--cycles`` cycles: open ``--sockets`` WebSockets, let
them go, wait until the server counts none open (its ``solrace_connections`` gauge) and
``--settle`` seconds more, read the server's resident memory (RSS, /proc). How they go is
``--goodbye``: ``close-frame`` (each sends one protocol ping, reads its pong, then closes
with a close frame), ``none`` (each completes the upgrade, sends nothing and closes its
TCP socket without a close frame, as a phone losing its network does) or ``reset`` (the
same, but the TCP socket is reset instead of closed). It prints a table
of RSS after each cycle with none open, and the ratio of the growth after the first cycle
to the first cycle's level (goal: RSS comes back near its level after the first cycle,
whose growth is the allocator keeping its arenas). Bounded and loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from bench.server import child
from bench.wsclient import OP_TEXT, WsClient, client_frame, connect
from server.redis_io.supervisor import RedisSupervisor, free_loopback_port

__all__ = ["GOODBYES", "main", "run"]

PING = client_frame(json.dumps({"type": "ping", "v": 1, "id": 1}).encode(), OP_TEXT)
GOODBYES = ("close-frame", "none", "reset")
DRAIN_LIMIT = 60.0  # seconds the server may take to count every socket closed


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def cycle(port: int, sockets: int, goodbye: str) -> None:
    clients: list[WsClient] = []
    answered: asyncio.Queue[None] = asyncio.Queue()
    for start in range(0, sockets, 100):  # a hundred at a time, like a crowd arriving
        batch = await asyncio.gather(
            *(connect("127.0.0.1", port, "/ws") for _ in range(start, min(sockets, start + 100)))
        )
        if goodbye == "close-frame":
            for client in batch:
                client.on_message = lambda opcode, payload: answered.put_nowait(None)
                client.send(PING)
        clients.extend(batch)
    if goodbye == "close-frame":
        for _ in range(sockets):
            await asyncio.wait_for(answered.get(), 30)
    for client in clients:
        if goodbye == "close-frame":
            client.close()
        elif client.transport is not None and goodbye == "reset":
            client.transport.abort()  # no close frame, and an RST instead of a FIN
        elif client.transport is not None:
            client.transport.close()  # the TCP socket only: no close frame
    await asyncio.wait_for(asyncio.gather(*(c.closed for c in clients)), 30)


async def open_sockets(port: int) -> int:
    """The server's own count of its open WebSockets (/metrics)."""
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}/metrics") as response,
    ):
        text = await response.text()
    for line in text.splitlines():
        if line.startswith("solrace_connections "):
            return int(float(line.split()[1]))
    raise RuntimeError("no solrace_connections in /metrics")


async def until_none_open(port: int) -> None:
    deadline = time.monotonic() + DRAIN_LIMIT
    while (still := await open_sockets(port)) > 0:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{still} sockets still open {DRAIN_LIMIT:g} s after the cycle")
        await asyncio.sleep(0.1)


async def run(args: argparse.Namespace) -> list[tuple[str, float]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="solrace-bench-") as data:
        async with RedisSupervisor(data) as redis_url:
            port = free_loopback_port()
            server = [sys.executable, "-m", "server", "--port", str(port), "--log-level", "WARNING"]
            async with child(server, port, None, {"REDIS_URL": redis_url}) as process:
                await asyncio.sleep(args.settle)
                rows.append(("started", rss_mib(process.pid)))
                for n in range(1, args.cycles + 1):
                    began = time.monotonic()
                    await cycle(port, args.sockets, args.goodbye)
                    await until_none_open(port)
                    print(f"cycle {n}: {time.monotonic() - began:.1f} s", file=sys.stderr)
                    await asyncio.sleep(args.settle)
                    rows.append((f"after cycle {n}", rss_mib(process.pid)))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.closed_connections", description=__doc__)
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--sockets", type=int, default=2000)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before each reading")
    parser.add_argument(
        "--goodbye",
        choices=GOODBYES,
        default="none",
        help="how each socket goes: a close frame, or its TCP socket closed or reset without one",
    )
    args = parser.parse_args(argv)
    rows = asyncio.run(run(args))
    print(f"goodbye: {args.goodbye}")
    print(f"{'when (none open)':<18} {'RSS MiB':>8}")
    print("-" * 27)
    for name, rss in rows:
        print(f"{name:<18} {rss:>8.1f}")
    first, last = rows[1][1], rows[-1][1]
    growth = (last - first) / first
    verdict = "met" if growth <= 0.05 else "NOT met"
    print(
        f"RSS after cycle {len(rows) - 1} vs after cycle 1: {last:.1f} / {first:.1f} MiB = "
        f"{last / first:.2f}x ({growth:+.0%}; goal: back near the first cycle's level, "
        f"within 5%) -> {verdict}"
    )


if __name__ == "__main__":
    main()
