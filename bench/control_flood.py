"""Benchmark: an honest player's latency while other sockets flood the server with
WebSocket ping frames (issue 14: control frames were not rate limited).

``python -m bench.control_flood`` starts ``python -m server`` (uvloop, as deployed) on its
own redis-server, pinned to core 0, and measures, from this process (core 1), the round
trip of an honest client's protocol ``ping`` (20 a second, the server's own message path),
in phases of ``--seconds`` each:

- **quiet**: the honest client alone (the baseline, same run);
- **60k pings**: the issue's attack: three sockets send 20,000 ping frames each as fast as
  they can (from a flooder process of its own, at the lowest priority, on core 1);
- **sustained**: three sockets flood for the whole phase, reconnecting whenever the server
  closes them (harsher than the issue's);
- **60k pings, no limit**: the issue's attack against a server whose message budget is so
  high that nothing is limited: what it did before control frames counted.

It prints a table (p50/p99/max of the honest client, ping frames sent, pongs received,
sockets closed with 1008) and the ratio of each flood's p99 to the quiet p99 (goal: 2x at
most). Bounded: fixed phases, loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

import bench.server
from bench.server import child, pin
from bench.wsclient import OP_CLOSE, OP_PING, client_frame, connect
from server.redis_supervisor import RedisSupervisor, free_loopback_port

__all__ = ["main"]

FLOODERS = 3
BATCH = 500  # ping frames per write
ISSUE_PINGS = 20_000  # per socket: the issue's 60,000 from three sockets
NO_LIMIT = {"SOLRACE_RATE_PER_SECOND": "1e9", "SOLRACE_RATE_BURST": "1e9"}


@dataclass
class Phase:
    name: str
    latencies: list[float]
    flood: dict[str, int]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def honest(port: int, seconds: float, rate: float = 20.0) -> list[float]:
    """Round trips (ms) of protocol pings sent `rate` times a second for `seconds`."""
    latencies: list[float] = []
    sent: dict[int, float] = {}
    async with (
        aiohttp.ClientSession() as http,
        http.ws_connect(f"http://127.0.0.1:{port}/ws", autoping=True) as ws,
    ):

        async def read() -> None:
            async for frame in ws:
                message = json.loads(frame.data)
                if message.get("type") == "pong" and message["id"] in sent:
                    latencies.append((time.perf_counter() - sent.pop(message["id"])) * 1000)

        reader = asyncio.create_task(read())
        deadline = time.monotonic() + seconds
        i = 0
        while time.monotonic() < deadline:
            i += 1
            sent[i] = time.perf_counter()
            await ws.send_str(json.dumps({"type": "ping", "v": 1, "id": i}))
            await asyncio.sleep(1 / rate)
        await asyncio.sleep(0.5)  # the last answers
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    return latencies


async def flood(port: int, seconds: float, pings: int | None) -> dict[str, int]:
    """FLOODERS sockets sending ping frames as fast as they can: `pings` each, or (None)
    for `seconds`, reconnecting when closed."""
    counts = {"pings": 0, "pongs": 0, "closed_1008": 0, "connections": 0}
    deadline = time.monotonic() + seconds
    batch = client_frame(b"flood", OP_PING) * BATCH

    async def one() -> None:
        while time.monotonic() < deadline:
            client = await connect("127.0.0.1", port, "/ws")
            counts["connections"] += 1
            assert client.transport is not None

            def received(data: bytes, feed: Any = client.data_received) -> None:
                # Count the pongs and a 1008 close in the raw bytes (frames are tiny).
                counts["pongs"] += data.count(b"\x8a\x05flood")
                if b"\x88" in data and b"\x03\xf0" in data:
                    counts["closed_1008"] += 1
                feed(data)

            client.data_received = received  # type: ignore[method-assign]
            left = pings
            while time.monotonic() < deadline and not client.closed.done():
                if left is not None:
                    if left <= 0:
                        break
                    left -= BATCH
                client.send(batch)
                counts["pings"] += BATCH
                await asyncio.sleep(0)
                while client.transport.get_write_buffer_size() > 1 << 20:
                    await asyncio.sleep(0.001)  # as fast as the server reads, no faster
            if pings is not None:
                await asyncio.wait({client.closed}, timeout=deadline - time.monotonic())
                return  # the issue's attack: one connection each
            if not client.closed.done():
                client.send(client_frame(b"\x03\xe8", OP_CLOSE))
                client.transport.close()

    await asyncio.gather(*(one() for _ in range(FLOODERS)))
    return counts


def flood_process(port: int, seconds: float, pings: int | None) -> None:
    # At the lowest priority: on a 2-core machine the flooder shares the honest client's
    # core, and what is measured must be the server's delay, not this process's.
    os.nice(19)
    print(json.dumps(asyncio.run(flood(port, seconds, pings))))


async def phase(
    port: int, name: str, seconds: float, pings: int | bool | None, cpu: int | None
) -> Phase:
    """The honest client for `seconds`; with a flood of `pings` per socket (None: a
    sustained one), unless `pings` is False."""
    print(f"{name} ...", file=sys.stderr)
    if pings is False:
        return Phase(name, await honest(port, seconds), {})
    code = (
        "from bench.control_flood import flood_process; "
        f"flood_process({port}, {seconds + 1}, {pings!r})"
    )
    flooder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    pin(flooder.pid, cpu)
    latencies = await honest(port, seconds)
    out, _ = await asyncio.wait_for(flooder.communicate(), seconds + 30)
    return Phase(name, latencies, json.loads(out.decode().strip().splitlines()[-1]))


async def run(args: argparse.Namespace) -> list[Phase]:
    phases = []
    plans: list[tuple[str, int | bool | None, bool]] = [
        ("quiet", False, True),
        ("60k pings", ISSUE_PINGS, True),
        ("sustained", None, True),
        ("60k, no limit", ISSUE_PINGS, False),
    ]
    with tempfile.TemporaryDirectory(prefix="solrace-bench-") as data:
        redis = RedisSupervisor(data)
        async with redis as redis_url:
            assert redis.pid is not None
            pin(redis.pid, args.client_cpu)
            for name, pings, limited in plans:
                port = free_loopback_port()  # a fresh server for each phase
                server = [sys.executable, "-m", "server", "--port", str(port)]
                env = {"REDIS_URL": redis_url, **({} if limited else NO_LIMIT)}
                async with child(server, port, args.server_cpu, env):
                    phases.append(await phase(port, name, args.seconds, pings, args.client_cpu))
    return phases


def table(phases: list[Phase]) -> str:
    head = (
        f"{'phase':<16} {'samples':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
        f"{'pings sent':>11} {'pongs':>9} {'1008s':>6}"
    )
    lines = [head, "-" * len(head)]
    for ph in phases:
        lat = ph.latencies or [float("nan")]
        f = ph.flood
        lines.append(
            f"{ph.name:<16} {len(ph.latencies):>7} {statistics.median(lat):>8.2f} "
            f"{percentile(lat, 0.99):>8.2f} {max(lat):>8.2f} {f.get('pings', 0):>11,} "
            f"{f.get('pongs', 0):>9,} {f.get('closed_1008', 0):>6}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.control_flood", description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each phase")
    parser.add_argument("--server-cpu", type=int, default=0 if os.cpu_count() else None)
    parser.add_argument("--client-cpu", type=int, default=1 if (os.cpu_count() or 1) > 1 else None)
    parser.add_argument(
        "--nice",
        type=int,
        default=None,
        help="scheduling priority of the server, Redis and the honest client (e.g. -5, as "
        "root: shields the measurement from other load on a shared machine; the flooder "
        "stays at 19)",
    )
    args = parser.parse_args(argv)
    bench.server.NICE = args.nice
    if args.nice is not None:
        pin(os.getpid(), None)  # this process measures the honest client
    phases = asyncio.run(run(args))
    print(table(phases))
    by_name = {ph.name: ph for ph in phases}
    quiet = percentile(by_name["quiet"].latencies, 0.99)
    for name in ("60k pings", "sustained", "60k, no limit"):
        ratio = percentile(by_name[name].latencies, 0.99) / quiet
        verdict = "meets" if ratio <= 2.0 else "misses"
        print(f"p99 {name} / quiet: {ratio:.2f}x ({verdict} the goal of 2x at most)")


if __name__ == "__main__":
    main()
