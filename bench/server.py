"""Benchmark the race server against a bare aiohttp relay, in one run.

``python -m bench.server`` (or ``make bench``) starts, one after the other, the bare
relay (bench/relay.py) and the real server (``python -m server`` on its own
redis-server, AOF on, free loopback ports), and drives each from a separate load
process (bench/loadgen.py) with simulated racers in rooms of 8 sending precomputed
legal moves: once at saturation (a fixed number of moves in flight per racer) and once
at a fixed open-loop load (by default 1,000 racers x 2 moves/s). Each server is pinned
to one core, the load process to the other, and solrace's redis-server to the load
process's core by default (Redis is a service of its own in any deployment, and the
relay has none; ``--redis-cpu 0`` puts it on the server's core instead, the harder
layout for a 2-core machine). It prints a table, with redis-server's CPU per move in
a column of its own, and the
ratios the goals are stated in. Everything is bounded: fixed durations, a timeout on
every child process, loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import loop_stats, process_stats, redis_stats
from bench.racers import move_sequences
from server.redis_io.supervisor import RedisSupervisor, free_loopback_port

__all__ = [
    "FLOOR",
    "add_process_options",
    "floor_lines",
    "main",
    "perf_verdicts",
    "place_processes",
    "server_env",
]

ROOT = Path(__file__).resolve().parent.parent
LOAD_TIMEOUT = 120.0
# The goals `perf_verdicts` judges (docs/performance.md, "The goals"):
SATURATION_GOAL = 0.80  # solrace's rate at saturation, as a fraction of the relay's
TAIL_P99_MS = 5.0  # fixed load: solrace's p99 under this ...
TAIL_RELAY_TIMES = 2.0  # ... and at most this many times the relay's p99 in the same run
TAIL_MAX_MS = 25.0  # fixed load: no move slower than this
CPU_FLOOR_TIMES = 1.5  # fixed load: server and Redis CPU per move, times the floor's
CPU_RUNS = 3  # ... in the median of this many alternated runs
MORE_PROCESSES = 1.25  # what "clearly more" means for two processes against one
FLOOR = "floor: relay kept in Redis"


@dataclass
class Row:
    target: str
    load: str
    result: dict[str, Any]


NICE: int | None = None  # --nice: scheduling priority of every measured process


def pin(pid: int, cpu: int | None) -> None:
    """Put a measured process on its core (and at the --nice priority, if given)."""
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(pid, {cpu})
    if NICE is not None:
        # Needs root for a negative value; without it the run is merely less shielded.
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, pid, NICE)


async def wait_for_port(port: int, process: asyncio.subprocess.Process, limit: float) -> None:
    deadline = time.monotonic() + limit
    while True:
        if process.returncode is not None:
            raise RuntimeError(f"server exited with code {process.returncode} at start")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing listens on port {port} after {limit} s")
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def child(
    args: list[str],
    port: int,
    cpu: int | None,
    env: dict[str, str] | None = None,
    quiet: bool = False,
) -> AsyncIterator[asyncio.subprocess.Process]:
    """A server process, pinned, listening on ``port``; terminated on exit."""
    process = await asyncio.create_subprocess_exec(
        *args,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL if quiet else None,
    )
    try:
        pin(process.pid, cpu)
        await wait_for_port(port, process, 30.0)
        yield process
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), 10)
            except TimeoutError:
                process.kill()
                await process.wait()


async def run_load(plan: dict[str, Any], cpu: int | None) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(plan, f)
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.loadgen",
            f.name,
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
        )
        pin(process.pid, cpu)
        try:
            out, _ = await asyncio.wait_for(process.communicate(), LOAD_TIMEOUT)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        if process.returncode != 0:
            raise RuntimeError(f"load generator failed with code {process.returncode}")
        result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
        return result
    finally:
        os.unlink(f.name)


def plans(args: argparse.Namespace, base: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    timing = {"warmup": args.warmup, "duration": args.duration}
    found = [
        (
            f"saturation: {args.sat_racers} racers, {args.window} in flight each",
            {**base, **timing, "racers": args.sat_racers, "window": args.window},
        ),
        (
            f"fixed: {args.racers} racers x {args.rate:g} moves/s",
            {**base, **timing, "racers": args.racers, "rate": args.rate},
        ),
    ]
    if args.loads != "both":
        found = [(load, plan) for load, plan in found if load.startswith(args.loads)]
    if args.profile:
        os.makedirs(args.profile, exist_ok=True)
        for load, plan in found:
            name = f"{plan['target']}-{load.split(':')[0]}.txt"
            plan["profile"] = os.path.abspath(os.path.join(args.profile, name))
    return found


async def bench_relay(args: argparse.Namespace, base: dict[str, Any]) -> list[Row]:
    port = free_loopback_port()
    rows = []
    server_args = [sys.executable, "-m", "bench.relay", "--port", str(port)]
    async with child(server_args, port, args.server_cpu) as relay:
        base = {**base, "target": "relay", "port": port, "server_pids": [relay.pid]}
        for load, plan in plans(args, base):
            print(f"relay, {load} ...", file=sys.stderr)
            rows.append(Row("bare relay", load, await run_load(plan, args.load_cpu)))
    return rows


async def bench_floor(args: argparse.Namespace, base: dict[str, Any]) -> list[Row]:
    """The relay with every message kept in Redis first (bench/floor.py), each load on a
    fresh floor and Redis, Redis placed as solrace's."""
    rows = []
    for load, plan in plans(args, {**base, "target": "relay"}):
        port = free_loopback_port()
        with tempfile.TemporaryDirectory(prefix="solrace-bench-") as data:
            redis = RedisSupervisor(data)
            async with redis:
                assert redis.pid is not None
                pin(redis.pid, args.redis_cpu)
                command = [sys.executable, "-m", "bench.floor", "--port", str(port)]
                command += ["--redis-port", str(redis.port)]
                async with child(command, port, args.server_cpu) as floor:
                    plan = {
                        **plan,
                        "port": port,
                        "server_pids": [floor.pid, redis.pid],
                        "redis_url": f"redis://127.0.0.1:{redis.port}",
                    }
                    print(f"floor, {load} ...", file=sys.stderr)
                    rows.append(Row(FLOOR, load, await run_load(plan, args.load_cpu)))
    return rows


async def bench_server(args: argparse.Namespace, base: dict[str, Any]) -> list[Row]:
    """Each load on a fresh server and Redis: the fixed load once measured, on the same
    server, the clean-up of the saturation run's 1,000 racers who had just left (their
    seats' grace clocks, forfeits, finishing rooms): bursts of 20-110 moves over 10 ms,
    p99 11-16 ms, where the same load on a fresh server had p99 2 ms."""
    rows = []
    for load, plan in plans(args, {**base, "target": "solrace"}):
        port = free_loopback_port()
        with tempfile.TemporaryDirectory(prefix="solrace-bench-") as data:
            redis = RedisSupervisor(data)
            async with redis as redis_url:
                assert redis.pid is not None
                pin(redis.pid, args.redis_cpu)
                server_args = [sys.executable, "-m", "server", "--port", str(port)]
                env = server_env(args, redis_url)
                async with child(server_args, port, args.server_cpu, env) as server:
                    plan = {
                        **plan,
                        "port": port,
                        "server_pids": [server.pid, redis.pid],
                        "metrics_url": f"http://127.0.0.1:{port}/metrics",
                        "redis_url": redis_url,
                    }
                    print(f"solrace, {load} ...", file=sys.stderr)
                    rows.append(Row("solrace", load, await run_load(plan, args.load_cpu)))
    return rows


SHIPPED_SERVER = re.compile(r"(\s*)server s1 127\.0\.0\.1:\d+(.*)")


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError("haproxy is not installed (scripts/ensure-test-tools installs it)")
    return found


def haproxy_config(front: int, servers: list[int], stats: str) -> str:
    """The shipped deploy/haproxy.cfg, listening on `front`, in front of `servers`, its
    stats socket at `stats`; nothing else changed. Each backend's list of servers (both
    the least-connections one and the one hashing a room's sockets) becomes `servers`,
    with the options of its first server (an option naming `/s1`, such as a `track`,
    names each one's own)."""
    text = (ROOT / "deploy" / "haproxy.cfg").read_text()
    assert "127.0.0.1:8765" in text, "deploy/haproxy.cfg no longer listens on 8765"
    text = text.replace("127.0.0.1:8765", f"127.0.0.1:{front}")
    text = text.replace('"${SOLRACE_HAPROXY_STATS-/tmp/solrace-haproxy.sock}"', f'"{stats}"')
    lines = []
    for line in text.splitlines():
        if first := SHIPPED_SERVER.fullmatch(line):
            indent, options = first.groups()
            lines += [
                f"{indent}server s{i} 127.0.0.1:{port}{options.replace('/s1', f'/s{i}')}"
                for i, port in enumerate(servers, start=1)
            ]
        elif not line.strip().startswith("server s"):
            lines.append(line)
    return "\n".join(lines) + "\n"


async def bench_haproxy(args: argparse.Namespace, base: dict[str, Any], count: int) -> list[Row]:
    """`count` server processes on one Redis behind HAProxy (the shipped config), server i
    on core server_cpu + i, HAProxy with the load and Redis."""
    front = free_loopback_port()
    ports = [free_loopback_port() for _ in range(count)]
    label = f"solrace x{count} behind HAProxy"
    rows = []
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="solrace-bench-") as data:
        redis = RedisSupervisor(data)
        async with redis as redis_url, contextlib.AsyncExitStack() as stack:
            assert redis.pid is not None
            pin(redis.pid, args.redis_cpu)
            # Through a proxy every client counts per address, loopback too: no caps here.
            env = server_env(
                args, redis_url, SOLRACE_ROOM_RATE="0", SOLRACE_MAX_CONNECTIONS_PER_ADDRESS="0"
            )
            servers = []
            for i, port in enumerate(ports):
                cpu = None if args.server_cpu is None else (args.server_cpu + i) % cores
                command = [sys.executable, "-m", "server", "--port", str(port)]
                servers.append(await stack.enter_async_context(child(command, port, cpu, env)))
            config = Path(data) / "haproxy.cfg"
            config.write_text(haproxy_config(front, ports, str(Path(data) / "haproxy.sock")))
            proxy = await stack.enter_async_context(
                child(
                    [haproxy_binary(), "-db", "-f", str(config)], front, args.load_cpu, quiet=True
                )
            )
            await asyncio.sleep(2.5)  # health checks: every server up
            pids = [s.pid for s in servers] + [redis.pid, proxy.pid]
            base = {
                **base,
                "target": "solrace",
                "port": front,
                "server_pids": pids,
                "redis_pids": [redis.pid],
                "proxy_pids": [proxy.pid],
            }
            for load, plan in plans(args, base):
                print(f"{label}, {load} ...", file=sys.stderr)
                rows.append(Row(label, load, await run_load(plan, args.load_cpu)))
    return rows


def cpu_per_move(result: dict[str, Any], redis: bool = True) -> float:
    """Server (and, unless `redis` is False, Redis) CPU microseconds per answered move:
    robust to a busy machine."""
    rate = result["answered_per_s"]
    used = result["server_cpu"] - (0.0 if redis else result.get("redis_cpu", 0.0))
    return float(used / rate * 1e6) if rate else float("nan")


def redis_per_move(result: dict[str, Any]) -> str:
    """redis-server's part of the CPU per move ("-" for the relay, which has none)."""
    rate, redis = result["answered_per_s"], result.get("redis_cpu", 0.0)
    return f"{redis / rate * 1e6:.0f}" if rate and redis else "-"


def proxy_per_move(result: dict[str, Any]) -> str:
    """The balancer's part of the CPU per move ("-" without one)."""
    rate, proxy = result["answered_per_s"], result.get("proxy_cpu", 0.0)
    return f"{proxy / rate * 1e6:.0f}" if rate and proxy else "-"


def table(rows: list[Row]) -> str:
    haproxy = any(row.result.get("proxy_cpu") for row in rows)
    lines = [
        "| server | load | moves answered/s | refused | p50 ms | p99 ms | max ms "
        "| unanswered | server CPU | server µs/move | of which Redis "
        + ("| of which HAProxy " if haproxy else "")
        + "| load CPU |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        + ("---:|" if haproxy else "")
        + "---:|",
    ]
    for row in rows:
        r = row.result
        lines.append(
            f"| {row.target} | {row.load} | {r['answered_per_s']:,.0f} | {r['refused']} "
            f"| {r['p50_ms']:.2f} | {r['p99_ms']:.2f} | {r['max_ms']:.1f} "
            f"| {r['unanswered']} | {r['server_cpu']:.0%} | {cpu_per_move(r):.0f} "
            f"| {redis_per_move(r)} "
            + (f"| {proxy_per_move(r)} " if haproxy else "")
            + f"| {r['loadgen_cpu']:.0%} |"
        )
    return "\n".join(lines)


def ratios(rows: list[Row]) -> list[str]:
    found = {(row.target, row.load.split(":")[0]): row.result for row in rows}
    relay_sat, server_sat = (
        found.get(("bare relay", "saturation")),
        found.get(("solrace", "saturation")),
    )
    out = []
    if relay_sat and server_sat:
        ratio = server_sat["answered_per_s"] / relay_sat["answered_per_s"]
        out.append(f"saturation: solrace / bare relay = {ratio:.2f}")
        cost = cpu_per_move(relay_sat) / cpu_per_move(server_sat, redis=False)
        total = cpu_per_move(relay_sat) / cpu_per_move(server_sat)
        out.append(
            f"saturation, by CPU per message: bare relay / solrace = {cost:.2f} for the "
            f"server process, {total:.2f} counting redis-server too (less sensitive to "
            "other work on the machine than the rates)"
        )
    fixed = found.get(("solrace", "fixed"))
    relay_fixed = found.get(("bare relay", "fixed"))
    if fixed:
        line = f"fixed load: solrace p99 = {fixed['p99_ms']:.2f} ms"
        if relay_fixed:
            line += f", bare relay p99 = {relay_fixed['p99_ms']:.2f} ms"
        out.append(line)
        if relay_fixed:
            times = cpu_per_move(fixed) / cpu_per_move(relay_fixed)
            out.append(
                f"fixed load, CPU per message: solrace (server and Redis) {cpu_per_move(fixed):.0f}"
                f" µs / bare relay {cpu_per_move(relay_fixed):.0f} µs = {times:.2f}"
            )
        # What a core of its own would give, whatever share of a core this run got.
        offered = fixed.get("offered") or fixed["answered_per_s"]
        need = cpu_per_move(fixed) * offered / 1e6
        alone = cpu_per_move(fixed, redis=False)
        out.append(
            f"fixed load needs {need:.0%} of one core ({cpu_per_move(fixed):.0f} µs/move), "
            f"of which the server process {alone * offered / 1e6:.0%} ({alone:.0f} µs/move); "
            f"the server and Redis got {fixed['server_cpu']:.0%} of one"
        )
    out += floor_lines(found)
    behind = {
        int(target.split(" ")[1][1:]): result
        for (target, load), result in found.items()
        if target.startswith("solrace x") and load == "saturation"
    }
    if 1 in behind and len(behind) > 1:
        for count, result in sorted(behind.items()):
            if count == 1:
                continue
            gain = result["answered_per_s"] / behind[1]["answered_per_s"]
            out.append(
                f"behind HAProxy, saturation: {count} processes / 1 = {gain:.2f} "
                f"(goal: clearly more, at least {MORE_PROCESSES:.2f}) "
                f"-> {'met' if gain >= MORE_PROCESSES else 'NOT met'}"
            )
    if relay_sat and server_sat:
        out.append(
            "one core's capacity at these costs: solrace "
            f"{1e6 / cpu_per_move(server_sat, redis=False):,.0f} moves/s (server process), "
            f"{1e6 / cpu_per_move(server_sat):,.0f} with its redis-server on the same core; "
            f"bare relay {1e6 / cpu_per_move(relay_sat):,.0f} messages/s"
        )
    return out


def floor_lines(found: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """What the design itself costs against the relay (bench/floor.py), and so what the
    goals leave for solrace's own work on top of it."""
    out = []
    relay_sat, floor_sat = found.get(("bare relay", "saturation")), found.get((FLOOR, "saturation"))
    server_sat = found.get(("solrace", "saturation"))
    if relay_sat and floor_sat:
        ratio = floor_sat["answered_per_s"] / relay_sat["answered_per_s"]
        line = (
            f"floor, saturation: relay kept in Redis / bare relay = {ratio:.2f} "
            f"({cpu_per_move(floor_sat):.0f} µs/message, Redis {redis_per_move(floor_sat)})"
        )
        if server_sat:
            share = server_sat["answered_per_s"] / floor_sat["answered_per_s"]
            line += f"; solrace / floor = {share:.2f}"
        out.append(line)
    relay_fixed, floor_fixed = found.get(("bare relay", "fixed")), found.get((FLOOR, "fixed"))
    server_fixed = found.get(("solrace", "fixed"))
    if relay_fixed and floor_fixed:
        relay, floor = cpu_per_move(relay_fixed), cpu_per_move(floor_fixed)
        left = CPU_FLOOR_TIMES * floor - floor
        line = (
            f"floor, fixed load: relay kept in Redis {floor:.0f} µs/message (Redis "
            f"{redis_per_move(floor_fixed)}) = {floor / relay:.2f} x the bare relay; the "
            f"{CPU_FLOOR_TIMES:g}x goal leaves {left:.0f} µs per move for everything solrace "
            "does beyond keeping and relaying a message"
        )
        if server_fixed:
            line += f" (solrace spends {cpu_per_move(server_fixed) - floor:.0f})"
        out.append(line)
    return out


def perf_verdicts(rows: list[Row], runs: int = 1) -> list[str]:
    """One `perf_verdict` line per goal (docs/performance.md), from the rows of one run or
    the median rows of `runs`, and what held the server's loop up at the fixed load.

    The tail and the saturation are wall-clock goals: judged on a quiet machine only, so
    the first line says how busy the machine was. The CPU goal is the median of three
    alternated runs (`--repeat 3` alternates relay, floor and solrace)."""
    found = {(row.target, row.load.split(":")[0]): row.result for row in rows}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    out = [
        f"perf_verdict machine: load average {load:.1f} on {os.cpu_count()} cores "
        "(the tail and saturation goals are judged on a quiet machine only)"
    ]
    fixed, relay_fixed = found.get(("solrace", "fixed")), found.get(("bare relay", "fixed"))
    floor_fixed = found.get((FLOOR, "fixed"))
    if fixed:
        p99, top = fixed["p99_ms"], fixed["max_ms"]
        ok = p99 < TAIL_P99_MS and top < TAIL_MAX_MS and fixed["unanswered"] == 0
        vs = ""
        if relay_fixed:
            ok = ok and p99 <= TAIL_RELAY_TIMES * relay_fixed["p99_ms"]
            times = p99 / relay_fixed["p99_ms"]
            vs = f", bare relay p99 {relay_fixed['p99_ms']:.2f} ms ({times:.2f}x)"
        out.append(
            f"perf_verdict tail: solrace p99 {p99:.2f} ms{vs}, max {top:.1f} ms, unanswered "
            f"{fixed['unanswered']} (goal: p99 at most {TAIL_RELAY_TIMES:g}x the relay's and "
            f"under {TAIL_P99_MS:g} ms, max under {TAIL_MAX_MS:g} ms) -> "
            + ("met" if ok and relay_fixed else "NOT met" if not ok else "not judged: no relay")
        )
        if fixed.get("loop"):
            out.append(f"perf_verdict loop (solrace, fixed): {loop_stats.line(fixed['loop'])}")
    if fixed and floor_fixed:
        ours, floor = cpu_per_move(fixed), cpu_per_move(floor_fixed)
        times = ours / floor
        judged = "met" if times <= CPU_FLOOR_TIMES else "NOT met"
        if runs < CPU_RUNS:
            judged += (
                f" in {runs} run(s); the goal is the median of {CPU_RUNS} (--repeat {CPU_RUNS})"
            )
        out.append(
            f"perf_verdict cpu: solrace {ours:.0f} µs/move (server and Redis) / floor "
            f"{floor:.0f} µs/message = {times:.2f} (goal: at most {CPU_FLOOR_TIMES:g}, median "
            f"of {CPU_RUNS} alternated runs; these: median of {runs}) -> {judged}"
        )
    relay_sat, server_sat = (
        found.get(("bare relay", "saturation")),
        found.get(("solrace", "saturation")),
    )
    if relay_sat and server_sat:
        ratio = server_sat["answered_per_s"] / relay_sat["answered_per_s"]
        out.append(
            f"perf_verdict saturation: solrace {server_sat['answered_per_s']:,.0f} / bare relay "
            f"{relay_sat['answered_per_s']:,.0f} moves/s = {ratio:.2f} (goal: at least "
            f"{SATURATION_GOAL:.2f}) -> {'met' if ratio >= SATURATION_GOAL else 'NOT met'}"
        )
    for target in ("solrace", FLOOR):
        for kind in ("fixed", "saturation"):
            if (result := found.get((target, kind))) and result.get("redis"):
                name = "floor" if target == FLOOR else target
                out.append(
                    f"perf_verdict redis ({name}, {kind}): {redis_stats.line(result['redis'])}"
                )
    if server_sat and server_sat.get("loop"):
        out.append(
            f"perf_verdict loop (solrace, saturation): {loop_stats.line(server_sat['loop'])}"
        )
    for target in ("bare relay", FLOOR, "solrace"):
        for kind in ("fixed", "saturation"):
            if (result := found.get((target, kind))) and result.get("process"):
                name = {"bare relay": "relay", FLOOR: "floor"}.get(target, target)
                out.append(
                    f"perf_verdict process ({name}, {kind}): "
                    f"{process_stats.line(result['process'])}"
                )
    return out


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.server",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--only",
        choices=["relay", "solrace", "floor"],
        nargs="+",
        help="run these servers only (the floor: bench/floor.py, the relay with every "
        "message kept in Redis first)",
    )
    parser.add_argument(
        "--no-floor", action="store_true", help="leave the floor out of a full run (quicker)"
    )
    parser.add_argument("--racers", type=int, default=1000, help="racers at fixed load")
    parser.add_argument("--rate", type=float, default=2.0, help="moves/s per racer, fixed load")
    parser.add_argument("--sat-racers", type=int, default=1000, help="racers at saturation")
    parser.add_argument("--window", type=int, default=2, help="moves in flight per racer")
    parser.add_argument("--room-size", type=int, default=8)
    parser.add_argument("--game", default="shaula")
    parser.add_argument(
        "--warmup",
        type=float,
        default=5.0,
        help="seconds of load before measuring (1,000 racers starting 125 races at once are a "
        "burst of a few seconds, not the load measured)",
    )
    parser.add_argument("--duration", type=float, default=8.0, help="seconds measured")
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run everything this many times and take the ratios from the median runs "
        "(the rate of the same code varies by 10-15%% from run to run)",
    )
    parser.add_argument(
        "--loads",
        choices=["both", "saturation", "fixed"],
        default="both",
        help="which of the two loads to run (one alone: quicker A/B comparisons)",
    )
    add_process_options(parser)
    parser.add_argument(
        "--profile",
        metavar="DIR",
        help="sample each server with py-spy (on PATH) while measured; folded stacks in DIR",
    )
    parser.add_argument(
        "--haproxy",
        type=lambda text: [int(n) for n in text.split(",")],
        default=[],
        metavar="N,M",
        help="also run solrace as N (then M...) processes on one Redis behind HAProxy (the "
        "shipped deploy/haproxy.cfg), process i pinned to core server-cpu + i",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    place_processes(args)
    return args


def add_process_options(parser: argparse.ArgumentParser) -> None:
    """The options every server bench shares (bench/load.py too): where each process runs,
    at what priority, and the server's extra settings; `place_processes` settles them."""
    parser.add_argument("--server-cpu", type=int, default=0, help="core for the servers")
    parser.add_argument(
        "--redis-cpu",
        type=int,
        default=None,
        help="core for solrace's redis-server (default: the load's core, as Redis is a "
        "service of its own in any deployment; give --server-cpu's to share the server's "
        "core)",
    )
    parser.add_argument("--load-cpu", type=int, default=1, help="core for the load processes")
    parser.add_argument(
        "--no-pin", action="store_true", help="let the OS place every process (busy machine)"
    )
    parser.add_argument(
        "--nice",
        type=int,
        help="scheduling priority of servers, Redis and load (e.g. -10 as root: a shared "
        "machine's other work then disturbs the figures less)",
    )
    parser.add_argument(
        "--server-env",
        nargs="*",
        default=[],
        type=lambda kv: tuple(kv.split("=", 1)),
        help="extra NAME=VALUE settings for the solrace server",
    )


def place_processes(args: argparse.Namespace) -> None:
    """Settle `add_process_options`' values: Redis on the load's core unless told, nothing
    pinned with --no-pin or on one core, and --nice for every process `pin` places."""
    global NICE
    NICE = args.nice
    if args.redis_cpu is None:
        args.redis_cpu = args.load_cpu
    if args.no_pin or (os.cpu_count() or 1) < 2:
        args.server_cpu = args.load_cpu = args.redis_cpu = None


def server_env(args: argparse.Namespace, redis_url: str, **settings: str) -> dict[str, str]:
    """The environment of a solrace server process: its Redis, no draining at its stop
    (no balancer is there to move its clients: each stop would only wait the drain out),
    `settings`, then --server-env (which wins)."""
    return {"REDIS_URL": redis_url, "SOLRACE_DRAIN": "0", **settings, **dict(args.server_env)}


async def run(args: argparse.Namespace) -> list[Row]:
    # Enough moves for the fastest racer over the whole run, with room to spare.
    length = 40 + int(60 * (args.warmup + args.duration + 2))
    started = time.perf_counter()
    sequences = move_sequences(args.game, 16, length)
    print(
        f"{len(sequences)} move sequences of {length} moves in "
        f"{time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    base = {
        "host": "127.0.0.1",
        "game": args.game,
        "room_size": args.room_size,
        "seeds": list(sequences),
        "sequences": list(sequences.values()),
    }
    rows: list[Row] = []
    if args.only is None or "relay" in args.only:
        rows += await bench_relay(args, base)
    if (args.only is None and not args.no_floor) or (args.only and "floor" in args.only):
        rows += await bench_floor(args, base)
    if args.only is None or "solrace" in args.only:
        rows += await bench_server(args, base)
    for count in args.haproxy:
        rows += await bench_haproxy(args, base, count)
    return rows


def median_rows(runs: list[list[Row]]) -> list[Row]:
    """Per server and load, the row of the run with the median rate (the lower middle one
    for an even count): one slow or fast run does not decide the ratios. At a fixed load
    every run answers what is offered, so there the median is by CPU per move."""
    found: dict[tuple[str, str], list[Row]] = {}
    for rows in runs:
        for row in rows:
            found.setdefault((row.target, row.load), []).append(row)
    out = []
    for same in found.values():
        if same[0].result.get("offered"):
            ranked = sorted(same, key=lambda row: cpu_per_move(row.result))
        else:
            ranked = sorted(same, key=lambda row: float(row.result["answered_per_s"]))
        out.append(ranked[(len(ranked) - 1) // 2])
    return out


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    runs = []
    for i in range(args.repeat):
        if args.repeat > 1:
            print(f"run {i + 1} of {args.repeat}", file=sys.stderr)
        runs.append(asyncio.run(run(args)))
    for i, rows in enumerate(runs):
        if args.repeat > 1:
            print(f"\nrun {i + 1} of {args.repeat}:\n")
        print(table(rows))
        for row in rows:  # why moves were refused, if any were
            for error in row.result.get("errors", [])[:5]:
                print(f"  {row.target}, {row.load.split(':')[0]}: {error}")
    rows = median_rows(runs)
    if args.repeat > 1:
        print(f"\nthe ratios of the median runs (by rate) of {args.repeat}:\n")
    for line in ratios(rows) + perf_verdicts(rows, len(runs)):
        print(line)


if __name__ == "__main__":
    main()
