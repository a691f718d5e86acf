"""Benchmark: does memory come back after connections close? (issue 14)

``python -m bench.closed_connections`` starts ``python -m server`` (uvloop, as deployed)
on its own redis-server and runs ``--cycles`` cycles: open ``--sockets`` WebSockets (each
sends one protocol ping and reads its pong), close them all, wait ``--settle`` seconds,
read the server's resident memory (RSS, /proc). It prints a table of RSS after each cycle
with none open, and the ratio of the growth after the first cycle to the first cycle's
level (goal: RSS comes back near its level after the first cycle). Bounded and loopback
only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.server import child
from bench.wsclient import OP_TEXT, WsClient, client_frame, connect
from server.redis_io.supervisor import RedisSupervisor, free_loopback_port

__all__ = ["main"]

PING = client_frame(json.dumps({"type": "ping", "v": 1, "id": 1}).encode(), OP_TEXT)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


async def cycle(port: int, sockets: int) -> None:
    clients: list[WsClient] = []
    answered: asyncio.Queue[None] = asyncio.Queue()
    for start in range(0, sockets, 100):  # a hundred at a time, like a crowd arriving
        batch = await asyncio.gather(
            *(connect("127.0.0.1", port, "/ws") for _ in range(start, min(sockets, start + 100)))
        )
        for client in batch:
            client.on_message = lambda opcode, payload: answered.put_nowait(None)
            client.send(PING)
        clients.extend(batch)
    for _ in range(sockets):
        await asyncio.wait_for(answered.get(), 30)
    for client in clients:
        client.close()
    await asyncio.wait_for(asyncio.gather(*(c.closed for c in clients)), 30)


async def run(args: argparse.Namespace) -> list[tuple[str, float]]:
    rows = []
    with tempfile.TemporaryDirectory(prefix="solrace-bench-") as data:
        async with RedisSupervisor(data) as redis_url:
            port = free_loopback_port()
            server = [sys.executable, "-m", "server", "--port", str(port)]
            async with child(server, port, None, {"REDIS_URL": redis_url}) as process:
                await asyncio.sleep(args.settle)
                rows.append(("started", rss_mib(process.pid)))
                for n in range(1, args.cycles + 1):
                    began = time.monotonic()
                    await cycle(port, args.sockets)
                    print(f"cycle {n}: {time.monotonic() - began:.1f} s", file=sys.stderr)
                    await asyncio.sleep(args.settle)
                    rows.append((f"after cycle {n}", rss_mib(process.pid)))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.closed_connections", description=__doc__)
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--sockets", type=int, default=2000)
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before each reading")
    args = parser.parse_args(argv)
    rows = asyncio.run(run(args))
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
