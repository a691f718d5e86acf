"""Where a server's tail comes from, over a measured interval: its /metrics read at the
interval's start and end (server/edge/loop_health.py), and the difference summed up.

Counts survive a busy machine: collections per 1,000 moves by generation are the same
whatever else runs. Pause and lag durations are wall time, so on a shared machine they
include waits for a core; read them on a quiet one (or against the relay's p99 in the
same run).
"""

from __future__ import annotations

import re
from typing import Any

import aiohttp

__all__ = ["difference", "line", "parse", "scrape", "summary"]

SAMPLE = re.compile(r'^(solrace_(?:gc|loop)_[a-z_]+)(?:\{(\w+)="([^"]*)"\})? (\S+)$')


def parse(text: str) -> dict[str, float]:
    """The loop's and the collector's samples of an exposition, by `name` or `name|label`."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        if found := SAMPLE.match(line):
            name, _, label, value = found.groups()
            out[f"{name}|{label}" if label is not None else name] = float(value)
    return out


async def scrape(url: str) -> dict[str, float]:
    """`parse` of the server's /metrics ({} when it cannot be read: no figures, no failure)."""
    try:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            return parse(await response.text()) if response.status == 200 else {}
    except (aiohttp.ClientError, OSError):
        return {}


def difference(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {key: value - before.get(key, 0.0) for key, value in after.items()}


def _over(delta: dict[str, float], histogram: str, bound: str) -> int:
    """Samples of `histogram` above `bound` (one of its bucket bounds)."""
    count = delta.get(f"{histogram}_count", 0.0)
    return round(count - delta.get(f"{histogram}_bucket|{bound}", count))


def _longest(delta: dict[str, float], histogram: str) -> str:
    """The bucket the longest sample fell in, as "<= X ms" ("none" without samples)."""
    bounds = sorted(
        (float(key.split("|")[1]), value)
        for key, value in delta.items()
        if key.startswith(f"{histogram}_bucket|") and key.split("|")[1] != "+Inf"
    )
    count = delta.get(f"{histogram}_count", 0.0)
    if not count:
        return "none"
    for bound, below in bounds:
        if below >= count:
            return f"<= {bound * 1000:g} ms"
    return f"> {bounds[-1][0] * 1000:g} ms" if bounds else "?"


def summary(delta: dict[str, float], moves: float) -> dict[str, Any]:
    """The figures a verdict line prints: collections per 1,000 moves by generation, the
    collector's total pause per 1,000 moves and its longest, the loop's lag samples over 5
    and 25 ms with the longest, and the same of the part of the lag that was the loop's own
    work (CPU time, which a busy host does not stretch)."""
    per = 1000 / moves if moves else 0.0
    collections = {
        gen: round(delta.get(f"solrace_gc_collections_total|{gen}", 0.0) * per, 2)
        for gen in ("0", "1", "2")
    }
    return {
        "gc_per_1000_moves": collections,
        "gc_pause_ms_per_1000_moves": round(
            delta.get("solrace_gc_pause_seconds_sum", 0.0) * 1000 * per, 3
        ),
        "gc_cpu_ms_per_1000_moves": round(
            delta.get("solrace_gc_cpu_seconds_sum", 0.0) * 1000 * per, 3
        ),
        "gc_longest": _longest(delta, "solrace_gc_pause_seconds"),
        "gc_over_5ms": _over(delta, "solrace_gc_pause_seconds", "0.005"),
        "gc_cpu_longest": _longest(delta, "solrace_gc_cpu_seconds"),
        "gc_cpu_over_5ms": _over(delta, "solrace_gc_cpu_seconds", "0.005"),
        "lag_samples": round(delta.get("solrace_loop_lag_seconds_count", 0.0)),
        "lag_over_5ms": _over(delta, "solrace_loop_lag_seconds", "0.005"),
        "lag_over_25ms": _over(delta, "solrace_loop_lag_seconds", "0.025"),
        "lag_longest": _longest(delta, "solrace_loop_lag_seconds"),
        "busy_over_5ms": _over(delta, "solrace_loop_busy_seconds", "0.005"),
        "busy_over_25ms": _over(delta, "solrace_loop_busy_seconds", "0.025"),
        "busy_longest": _longest(delta, "solrace_loop_busy_seconds"),
    }


def line(stats: dict[str, Any]) -> str:
    gens = stats["gc_per_1000_moves"]
    return (
        f"collections per 1,000 moves {gens['0']:g} / {gens['1']:g} / {gens['2']:g} "
        f"(generation 0/1/2), paused {stats['gc_pause_ms_per_1000_moves']:g} ms (CPU "
        f"{stats['gc_cpu_ms_per_1000_moves']:g} ms) per 1,000 moves, longest "
        f"{stats['gc_longest']} (CPU {stats['gc_cpu_longest']}), {stats['gc_over_5ms']} over "
        f"5 ms (CPU {stats['gc_cpu_over_5ms']}); loop lag "
        f"over 5 ms {stats['lag_over_5ms']} and over 25 ms {stats['lag_over_25ms']} of "
        f"{stats['lag_samples']} samples, longest {stats['lag_longest']}; of it the loop's own "
        f"work (CPU time) over 5 ms {stats['busy_over_5ms']}, over 25 ms "
        f"{stats['busy_over_25ms']}, longest {stats['busy_longest']}"
    )
