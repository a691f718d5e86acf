"""The load process: simulated racers over real WebSockets, run apart from the server.

``python -m bench.loadgen PLAN.json`` connects the racers the plan lists, gets them
into their races, then sends their precomputed legal moves and times each move's
acknowledgement. Two ways to send:

* ``rate`` (moves/s per racer): open loop, every racer on a fixed schedule, whether
  or not its earlier moves were answered; the racers' phases are spread evenly.
* ``window`` (moves in flight per racer): saturation; each answer releases the next move.

It prints one JSON object: moves answered per second during the measured interval,
the latency percentiles of the moves sent in it, refusals, and its own CPU use (a
load generator near 100 % would measure itself, not the server).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bench import loop_stats, process_stats, redis_stats
from bench.instrument import collections_off, collections_on
from bench.targets import TARGETS, Racer

__all__ = ["Result", "main", "run_plan"]


@dataclass
class Result:
    racers: int
    mode: str
    offered: float | None  # moves/s offered in open loop
    answered_per_s: float
    refused: int
    sent: int
    unanswered: int  # sent in the measured interval, no answer by the end of the drain
    p50_ms: float
    p99_ms: float
    max_ms: float
    loadgen_cpu: float  # fraction of one core
    server_cpu: float  # server processes (and Redis), fraction of one core
    redis_cpu: float  # of which redis-server (plan's redis_pids; else every pid after the first)
    proxy_cpu: float = 0.0  # of which the balancer in front (plan's proxy_pids)
    loop: dict[str, Any] = field(default_factory=dict)  # bench.loop_stats.summary, if read
    redis: dict[str, Any] = field(default_factory=dict)  # bench.redis_stats.difference
    process: dict[str, Any] = field(default_factory=dict)  # bench.process_stats.difference
    errors: list[str] = field(default_factory=list)


def process_cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of processes, from /proc (0 where it cannot be read)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime in clock ticks
    return total / os.sysconf("SC_CLK_TCK")


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))
    return sorted_values[index]


class Measurement:
    """Send times and answers of every racer, and what fell in the measured interval."""

    def __init__(self, racers: list[Racer]) -> None:
        self.racers = racers
        self.window_start = float("inf")
        self.window_end = float("inf")
        self.answered_in_window = 0
        self.refused = 0
        self.sent = 0
        self.on_answer: Callable[[Racer], None] = lambda racer: None
        for racer in racers:
            racer.sent_at = [0.0] * len(racer.frames)
            racer.answered_at = [0.0] * len(racer.frames)
            racer.answer = self._answer

    def _answer(self, racer: Racer, index: int, accepted: bool) -> None:
        now = time.perf_counter()
        racer.answered_at[index] = now
        racer.answered += 1
        if not accepted:
            self.refused += 1
        if self.window_start <= now < self.window_end:
            self.answered_in_window += 1
        self.on_answer(racer)

    def send_next(self, racer: Racer) -> bool:
        index = racer.next
        if index >= len(racer.frames):
            return False
        racer.sent_at[index] = time.perf_counter()
        racer.next = index + 1
        racer.client.send(racer.frames[index])
        self.sent += 1
        return True

    def latencies(self) -> tuple[list[float], int]:
        samples: list[float] = []
        unanswered = 0
        for racer in self.racers:
            for sent, answered in zip(racer.sent_at, racer.answered_at, strict=True):
                if self.window_start <= sent < self.window_end:
                    if answered:
                        samples.append(answered - sent)
                    else:
                        unanswered += 1
        samples.sort()
        return samples, unanswered


async def open_loop(measure: Measurement, rate: float, stop_at: float) -> None:
    """Send rate x racers moves per second, racer after racer, on a fixed schedule."""
    racers = measure.racers
    total_rate = rate * len(racers)
    start = time.perf_counter()
    due_sent = 0
    while True:
        now = time.perf_counter()
        if now >= stop_at:
            return
        due = int((now - start) * total_rate)
        while due_sent < due:
            measure.send_next(racers[due_sent % len(racers)])
            due_sent += 1
        # libuv timers tick in milliseconds: a shorter sleep would spin the core.
        await asyncio.sleep(0.001)


async def closed_window(measure: Measurement, window: int, stop_at: float) -> None:
    """Keep ``window`` moves in flight per racer until ``stop_at``."""

    def release(racer: Racer) -> None:
        if time.perf_counter() < stop_at:
            measure.send_next(racer)

    measure.on_answer = release
    for _ in range(window):
        for racer in measure.racers:
            measure.send_next(racer)
        await asyncio.sleep(0)
    await asyncio.sleep(max(0.0, stop_at - time.perf_counter()))


async def profile(pid: int, duration: float, path: str) -> asyncio.subprocess.Process:
    """Sample the server with py-spy over the measured interval (raw folded stacks)."""
    py_spy = os.path.join(os.path.dirname(sys.executable), "py-spy")
    return await asyncio.create_subprocess_exec(
        py_spy, "record", "--pid", str(pid), "--duration", str(max(1, int(duration))),
        "--rate", "250", "--format", "raw", "--output", path, "--nonblocking",
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip


async def run_plan(plan: dict[str, Any]) -> Result:
    target = TARGETS[plan["target"]](plan)
    racers = await target.open_racers()
    print(f"loadgen: {len(racers)} racers in their races", file=sys.stderr)
    measure = Measurement(racers)
    collections_off()  # the instrument adds no pauses of its own
    warmup, duration = float(plan["warmup"]), float(plan["duration"])
    start = time.perf_counter()
    measure.window_start = start + warmup
    measure.window_end = measure.window_start + duration
    server_pids: list[int] = plan.get("server_pids", [])
    redis_pids: list[int] = plan.get("redis_pids", server_pids[1:])
    proxy_pids: list[int] = plan.get("proxy_pids", [])
    cpu_start = cpu_end = server_start = server_end = redis_start = redis_end = 0.0
    proxy_start = proxy_end = 0.0
    metrics_url = plan.get("metrics_url")
    loop_start: dict[str, float] = {}
    loop_end: dict[str, float] = {}
    redis_url = plan.get("redis_url")
    redis_before: dict[str, Any] = {}
    redis_after: dict[str, Any] = {}
    process_before: dict[str, float] = {}
    process_after: dict[str, float] = {}

    async def mark_cpu() -> None:
        nonlocal cpu_start, cpu_end, server_start, server_end, redis_start, redis_end
        nonlocal proxy_start, proxy_end, loop_start, loop_end, redis_before, redis_after
        nonlocal process_before, process_after
        await asyncio.sleep(warmup)
        if metrics_url:
            loop_start = await loop_stats.scrape(metrics_url)
        if redis_url:
            redis_before = await redis_stats.snapshot(redis_url)
        if server_pids:
            process_before = process_stats.snapshot(server_pids[0])
        cpu_start, server_start = time.process_time(), process_cpu_seconds(server_pids)
        redis_start = process_cpu_seconds(redis_pids)
        proxy_start = process_cpu_seconds(proxy_pids)
        if plan.get("profile") and server_pids:
            profiler = await profile(server_pids[0], duration, plan["profile"])
        await asyncio.sleep(duration)
        cpu_end, server_end = time.process_time(), process_cpu_seconds(server_pids)
        redis_end = process_cpu_seconds(redis_pids)
        if server_pids:
            process_after = process_stats.snapshot(server_pids[0])
        proxy_end = process_cpu_seconds(proxy_pids)
        if metrics_url:
            loop_end = await loop_stats.scrape(metrics_url)
        if redis_url:
            redis_after = await redis_stats.snapshot(redis_url)
        if plan.get("profile") and server_pids:
            await profiler.wait()

    marker = asyncio.create_task(mark_cpu())
    if plan.get("rate"):
        await open_loop(measure, float(plan["rate"]), measure.window_end)
    else:
        await closed_window(measure, int(plan["window"]), measure.window_end)
    await marker
    # Let the answers to the last moves come in before counting them missing.
    drain_until = time.perf_counter() + float(plan.get("drain", 2.0))
    while time.perf_counter() < drain_until and any(r.answered < r.next for r in racers):
        await asyncio.sleep(0.01)
    collections_on()
    await target.close()
    samples, unanswered = measure.latencies()
    return Result(
        racers=len(racers),
        mode="open" if plan.get("rate") else "window",
        offered=float(plan["rate"]) * len(racers) if plan.get("rate") else None,
        answered_per_s=measure.answered_in_window / duration,
        refused=measure.refused,
        sent=measure.sent,
        unanswered=unanswered,
        p50_ms=percentile(samples, 0.50) * 1000,
        p99_ms=percentile(samples, 0.99) * 1000,
        max_ms=(samples[-1] if samples else float("nan")) * 1000,
        loadgen_cpu=(cpu_end - cpu_start) / duration,
        server_cpu=(server_end - server_start) / duration,
        redis_cpu=(redis_end - redis_start) / duration,
        proxy_cpu=(proxy_end - proxy_start) / duration,
        errors=target.errors[:5],
        loop=loop_stats.summary(
            loop_stats.difference(loop_start, loop_end), measure.answered_in_window
        )
        if loop_end
        else {},
        redis=redis_stats.difference(redis_before, redis_after, measure.answered_in_window),
        process=process_stats.difference(process_before, process_after, measure.answered_in_window),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("plan", help="a JSON file written by bench.server")
    args = parser.parse_args()
    with open(args.plan) as f:
        plan = json.load(f)
    try:
        import uvloop
    except ImportError:
        result = asyncio.run(run_plan(plan))
    else:
        result = uvloop.run(run_plan(plan))
    print(json.dumps(result.__dict__))


if __name__ == "__main__":
    main()
