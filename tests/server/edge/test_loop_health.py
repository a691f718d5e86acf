"""What holds up the event loop, on /metrics: the loop's lag and each garbage collection's
pause by generation (server/edge/loop_health.py)."""

from __future__ import annotations

import asyncio
import gc
import time

from support.http import get_text
from support.ports import free_port

from server.edge.app import create_app
from server.edge.http_server import Runner
from server.edge.loop_health import GcPauses
from server.metrics import Metrics
from server.settings import Settings


def samples(text: str) -> dict[str, float]:
    return {
        name: float(value)
        for name, value in (line.rsplit(" ", 1) for line in text.splitlines() if line[:1] != "#")
    }


def test_a_collection_is_timed_from_start_to_stop_and_counted_by_generation() -> None:
    metrics = Metrics(lambda: 0.0, lambda: 0.0)
    now, cpu = [10.0], [1.0]
    pauses = GcPauses(
        metrics.gc_pause,
        metrics.gc_cpu,
        metrics.gc_collections,
        clock=lambda: now[0],
        cpu_clock=lambda: cpu[0],
    )
    pauses("start", {"generation": 2, "collected": 0, "uncollectable": 0})
    now[0] += 0.03  # of which 20 ms running, 10 ms waiting for a core
    cpu[0] += 0.02
    pauses("stop", {"generation": 2, "collected": 5, "uncollectable": 0})
    pauses("start", {"generation": 0, "collected": 0, "uncollectable": 0})
    now[0] += 0.0004
    pauses("stop", {"generation": 0, "collected": 0, "uncollectable": 0})
    got = samples(metrics.render())
    assert got['solrace_gc_collections_total{generation="2"}'] == 1
    assert got['solrace_gc_collections_total{generation="0"}'] == 1
    assert got["solrace_gc_pause_seconds_count"] == 2
    assert got['solrace_gc_pause_seconds_bucket{le="0.0005"}'] == 1
    assert got['solrace_gc_pause_seconds_bucket{le="0.025"}'] == 1  # the 30 ms one is above
    assert got['solrace_gc_pause_seconds_bucket{le="0.05"}'] == 2
    assert abs(got["solrace_gc_cpu_seconds_sum"] - 0.02) < 1e-9
    assert got['solrace_gc_cpu_seconds_bucket{le="0.01"}'] == 1  # the 20 ms one is above


async def test_a_blocked_loop_and_a_collection_show_on_metrics(server_url: str) -> None:
    async def scrape() -> dict[str, float]:
        status, text = await get_text(f"{server_url}/metrics")
        assert status == 200
        return samples(text)

    def over_25ms(got: dict[str, float], name: str) -> float:
        return got[f"{name}_count"] - got[f'{name}_bucket{{le="0.025"}}']

    await asyncio.sleep(0.1)  # the lag watcher is asleep on its timer
    time.sleep(0.06)  # the server's loop (this test's) held up 60 ms, doing nothing
    gc.collect()
    await asyncio.sleep(0.1)
    got = await scrape()
    # The watcher's timer was due at most 25 ms into the stall: it ran at least 35 ms late,
    # but the loop's thread was not running meanwhile.
    assert over_25ms(got, "solrace_loop_lag_seconds") >= 1
    assert over_25ms(got, "solrace_loop_busy_seconds") == 0
    assert got["solrace_loop_lag_seconds_count"] >= 3
    assert got['solrace_gc_collections_total{generation="2"}'] >= 1
    assert got["solrace_gc_pause_seconds_count"] >= 1
    spun = time.thread_time() + 0.08
    while time.thread_time() < spun:  # now held up by 80 ms of work
        pass
    await asyncio.sleep(0.1)
    got = await scrape()
    assert over_25ms(got, "solrace_loop_busy_seconds") >= 1


async def test_a_stopped_server_leaves_no_collection_callback(
    redis_url: str, sqlite_url: str
) -> None:
    before = list(gc.callbacks)
    port = free_port()
    settings = Settings(host="127.0.0.1", port=port, redis_url=redis_url, database_url=sqlite_url)
    runner = Runner(create_app(settings), shutdown_timeout=1.0)
    await runner.setup()
    assert any(isinstance(callback, GcPauses) for callback in gc.callbacks)
    await runner.cleanup()
    assert gc.callbacks == before
