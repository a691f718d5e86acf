"""Benchmark: an honest player's latency while other sockets flood the server with
WebSocket ping frames (control frames spend a connection's message budget like any message).

``python -m bench.control_flood`` starts ``python -m server`` (uvloop, as deployed) on its
own redis-server, pinned to core 0, and measures, from this process (core 1), the round
trip of an honest client's protocol ``ping`` (20 a second, the server's own message path),
in phases of ``--seconds`` each:

- **quiet**: the honest client alone (the baseline, same run);
- **60k pings**: the issue's attack: three sockets send 20,000 ping frames each as fast as
  they can (from a flooder process of its own, at the lowest priority, on core 1);
- **sustained**: three sockets flood for the whole phase, reconnecting whenever the server
  closes them or refuses them (harsher than the issue's);
- **sustained, no cooldown**: the same against a server that does not refuse a flooder's
  new WebSockets (`flood_cooldown` 0): what a reconnecting flood cost before the cooldown;
- **60k pings, no limit**: the issue's attack against a server whose message budget is so
  high that nothing is limited: what it did before control frames counted.

The servers run with `limit_loopback` (SOLRACE_LIMIT_LOOPBACK=1): the flooder comes from
this machine, which production exempts from the per-address rules. The honest client
shares the flooder's address; it connects before the flood and is never refused.

It prints a table (p50/p99/max of the honest client, ping frames sent, pongs received,
sockets closed with 1008, upgrades refused 429, and the CPU seconds the server process
used in the phase: a figure that another load on the machine barely moves, unlike the
latencies) and the ratio of each flood's p99 and server CPU to the quiet phase's (goal:
2x at most for the latency). Bounded: fixed phases, loopback only.
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
from server.redis_io.supervisor import RedisSupervisor, free_loopback_port

__all__ = ["main"]

FLOODERS = 3
BATCH = 500  # ping frames per write
ISSUE_PINGS = 20_000  # per socket: the issue's 60,000 from three sockets
NO_LIMIT = {"SOLRACE_RATE_PER_SECOND": "1e9", "SOLRACE_RATE_BURST": "1e9"}
NO_COOLDOWN = {"SOLRACE_FLOOD_COOLDOWN": "0"}
LIMITED = {"SOLRACE_LIMIT_LOOPBACK": "1"}  # the flooder is on loopback: count it


@dataclass
class Phase:
    name: str
    latencies: list[float]
    flood: dict[str, int]
    server_cpu: float = float("nan")  # seconds of CPU the server process used


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process `pid` so far (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def honest(
    port: int, seconds: float, rate: float = 20.0, at_least: int = 0, settle: float = 0.5
) -> list[float]:
    """Round trips (ms) of protocol pings sent `rate` times a second for `seconds` (and
    until `at_least` have gone), then waiting up to `settle` seconds for the answers still
    due: those that come later are not counted."""
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
        while time.monotonic() < deadline or i < at_least:
            i += 1
            sent[i] = time.perf_counter()
            await ws.send_str(json.dumps({"type": "ping", "v": 1, "id": i}))
            await asyncio.sleep(1 / rate)
        settled = time.monotonic() + settle
        while sent and time.monotonic() < settled:  # the last answers
            await asyncio.sleep(0.01)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
    return latencies


async def flood(port: int, seconds: float, pings: int | None) -> dict[str, int]:
    """FLOODERS sockets sending ping frames as fast as they can: `pings` each, or (None)
    for `seconds`, reconnecting when closed."""
    counts = {"pings": 0, "pongs": 0, "closed_1008": 0, "connections": 0, "refused": 0}
    deadline = time.monotonic() + seconds
    batch = client_frame(b"flood", OP_PING) * BATCH

    async def one() -> None:
        while time.monotonic() < deadline:
            try:
                client = await connect("127.0.0.1", port, "/ws")
            except ConnectionError:
                # Refused (429: the flood cooldown): a flooder tries again at once.
                counts["refused"] += 1
                if pings is not None:
                    return
                await asyncio.sleep(0)
                continue
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
    port: int,
    name: str,
    seconds: float,
    pings: int | bool | None,
    cpu: int | None,
    server_pid: int | None = None,
) -> Phase:
    """The honest client for `seconds`; with a flood of `pings` per socket (None: a
    sustained one), unless `pings` is False. `server_pid`: whose CPU time to measure."""
    print(f"{name} ...", file=sys.stderr)
    used = float("nan") if server_pid is None else cpu_seconds(server_pid)
    if pings is False:
        latencies = await honest(port, seconds)
        if server_pid is not None:
            used = cpu_seconds(server_pid) - used
        return Phase(name, latencies, {}, used)
    code = (
        "from bench.control_flood import flood_process; "
        f"flood_process({port}, {seconds + 1}, {pings!r})"
    )
    # The honest client connects first: it shares the flooder's address, and the flood's
    # cooldown refuses that address's new sockets (not the open ones).
    measuring = asyncio.create_task(honest(port, seconds))
    await asyncio.sleep(0.2)
    flooder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE
    )
    pin(flooder.pid, cpu)
    latencies = await measuring
    if server_pid is not None:
        used = cpu_seconds(server_pid) - used
    out, _ = await asyncio.wait_for(flooder.communicate(), seconds + 30)
    return Phase(name, latencies, json.loads(out.decode().strip().splitlines()[-1]), used)


async def run(args: argparse.Namespace) -> list[Phase]:
    phases = []
    plans: list[tuple[str, int | bool | None, dict[str, str]]] = [
        ("quiet", False, LIMITED),
        ("60k pings", ISSUE_PINGS, LIMITED),
        ("sustained", None, LIMITED),
        ("sustained, no cooldown", None, {**LIMITED, **NO_COOLDOWN}),
        ("60k, no limit", ISSUE_PINGS, NO_LIMIT),
    ]
    with tempfile.TemporaryDirectory(prefix="solrace-bench-") as data:
        redis = RedisSupervisor(data)
        async with redis as redis_url:
            assert redis.pid is not None
            pin(redis.pid, args.client_cpu)
            for name, pings, settings in plans:
                port = free_loopback_port()  # a fresh server for each phase
                server = [sys.executable, "-m", "server", "--port", str(port)]
                env = {"REDIS_URL": redis_url, "SOLRACE_DRAIN": "0", **settings}
                async with child(server, port, args.server_cpu, env, quiet=True) as process:
                    phases.append(
                        await phase(port, name, args.seconds, pings, args.client_cpu, process.pid)
                    )
    return phases


def table(phases: list[Phase]) -> str:
    head = (
        f"{'phase':<23} {'samples':>7} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} "
        f"{'pings sent':>11} {'pongs':>9} {'1008s':>6} {'429s':>7} {'server cpu s':>12}"
    )
    lines = [head, "-" * len(head)]
    for ph in phases:
        lat = ph.latencies or [float("nan")]
        f = ph.flood
        lines.append(
            f"{ph.name:<23} {len(ph.latencies):>7} {statistics.median(lat):>8.2f} "
            f"{percentile(lat, 0.99):>8.2f} {max(lat):>8.2f} {f.get('pings', 0):>11,} "
            f"{f.get('pongs', 0):>9,} {f.get('closed_1008', 0):>6} {f.get('refused', 0):>7,} "
            f"{ph.server_cpu:>12.2f}"
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
    quiet = by_name["quiet"]
    for ph in phases[1:]:
        ratio = percentile(ph.latencies, 0.99) / percentile(quiet.latencies, 0.99)
        verdict = "meets" if ratio <= 2.0 else "misses"
        print(
            f"{ph.name} / quiet: p99 {ratio:.2f}x ({verdict} the goal of 2x at most), "
            f"server CPU {ph.server_cpu / quiet.server_cpu:.1f}x"
        )


if __name__ == "__main__":
    main()
