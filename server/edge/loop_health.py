"""What holds up the event loop, on /metrics: how late the loop runs a timer (its lag) and
how long each garbage collection stops it, by generation.

A move's answer waits behind anything else the loop is doing, so a slow tail that does not
follow the load is looked for here first: a long synchronous stretch or a collection shows
as lag, and a collection also as a pause of its own; a host that took the core away shows
as lag with no pause. `bench.server` reads both over its measured interval.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from aiohttp import web

from server.edge.app_keys import METRICS
from server.metrics import Histogram, LabelledCounter

__all__ = ["LAG_INTERVAL", "GcPauses", "loop_health_ctx", "watch_lag"]

# Often enough to catch a stall of a few milliseconds, rare enough to cost nothing
# (40 wake-ups a second).
LAG_INTERVAL = 0.025


class GcPauses:
    """A `gc.callbacks` entry: each collection's wall time into `pauses`, its CPU time into
    `cpu`, and one count per generation into `collections`."""

    def __init__(
        self,
        pauses: Histogram,
        cpu: Histogram,
        collections: LabelledCounter,
        clock: Callable[[], float] = time.perf_counter,
        cpu_clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self.pauses, self.cpu, self.collections = pauses, cpu, collections
        self.clock, self.cpu_clock = clock, cpu_clock
        self._started = self._cpu_started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started, self._cpu_started = self.clock(), self.cpu_clock()
            return
        self.pauses.observe(self.clock() - self._started)
        self.cpu.observe(self.cpu_clock() - self._cpu_started)
        self.collections.inc(str(info["generation"]))


async def watch_lag(
    lag: Histogram,
    busy: Histogram,
    interval: float = LAG_INTERVAL,
    cpu: Callable[[], float] = time.thread_time,
) -> None:
    """Sleep `interval` again and again; how much later than asked each wake-up came is
    the loop's lag (a timer's own jitter, well under a millisecond, included). Of a late
    wake-up, the part the loop's own thread spent running (its CPU time over the sleep,
    beyond the interval) goes to `busy`: a long stretch of the server's own work, which
    a busy host does not make longer, where the lag also counts waits for a core."""
    loop = asyncio.get_running_loop()
    while True:
        due, ran = loop.time() + interval, cpu()
        await asyncio.sleep(interval)
        late = loop.time() - due
        if late > 0:
            lag.observe(late)
            busy.observe(min(late, max(0.0, cpu() - ran - interval)))
        else:
            lag.observe(0.0)
            busy.observe(0.0)


async def loop_health_ctx(app: web.Application) -> AsyncIterator[None]:
    metrics = app[METRICS]
    pauses = GcPauses(metrics.gc_pause, metrics.gc_cpu, metrics.gc_collections)
    gc.callbacks.append(pauses)
    task = asyncio.create_task(
        watch_lag(metrics.loop_lag, metrics.loop_busy), name="solrace-loop-lag"
    )
    try:
        yield
    finally:
        gc.callbacks.remove(pauses)
        task.cancel()
        await asyncio.wait({task})
