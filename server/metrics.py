"""A tiny Prometheus registry: counters, gauges and one histogram, text format 0.0.4.

Written here rather than taken from prometheus-client: a few dozen lines cover what
/metrics needs, and each app gets its own registry (prometheus-client's global default
registry trips over two apps in one test process).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import TypeVar

__all__ = ["Counter", "Gauge", "Histogram", "Metrics", "Registry"]

T = TypeVar("T", "Counter", "Gauge", "Histogram")


class Counter:
    kind = "counter"

    def __init__(self, name: str, help: str) -> None:
        self.name, self.help, self.value = name, help, 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount

    def lines(self) -> list[str]:
        return [f"{self.name} {self.value:g}"]


class Gauge:
    kind = "gauge"

    def __init__(self, name: str, help: str, read: Callable[[], float]) -> None:
        self.name, self.help, self.read = name, help, read

    def lines(self) -> list[str]:
        return [f"{self.name} {self.read():g}"]


class Histogram:
    kind = "histogram"

    def __init__(self, name: str, help: str, buckets: tuple[float, ...]) -> None:
        self.name, self.help, self.buckets = name, help, buckets
        self.counts = [0] * (len(buckets) + 1)
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, value)] += 1
        self.sum += value

    def lines(self) -> list[str]:
        out, total = [], 0
        for bound, count in zip(self.buckets, self.counts, strict=False):
            total += count
            out.append(f'{self.name}_bucket{{le="{bound:g}"}} {total}')
        total += self.counts[-1]
        out.append(f'{self.name}_bucket{{le="+Inf"}} {total}')
        out.append(f"{self.name}_sum {self.sum:g}")
        out.append(f"{self.name}_count {total}")
        return out


class Registry:
    def __init__(self) -> None:
        self.metrics: list[Counter | Gauge | Histogram] = []

    def add(self, metric: T) -> T:
        self.metrics.append(metric)
        return metric

    def render(self) -> str:
        out: list[str] = []
        for m in self.metrics:
            out += [f"# HELP {m.name} {m.help}", f"# TYPE {m.name} {m.kind}", *m.lines()]
        return "\n".join(out) + "\n"


class Metrics:
    """The server's metrics; gauges read live values through the callables given."""

    def __init__(self, rooms: Callable[[], float], connections: Callable[[], float]) -> None:
        self.registry = r = Registry()
        r.add(Gauge("solrace_rooms_active", "rooms with a socket on this process", rooms))
        r.add(Gauge("solrace_connections", "open WebSocket connections", connections))
        self.rooms_created = r.add(Counter("solrace_rooms_created_total", "rooms created"))
        self.moves_accepted = r.add(Counter("solrace_moves_accepted_total", "moves accepted"))
        self.moves_refused = r.add(Counter("solrace_moves_refused_total", "moves refused"))
        self.errors = r.add(Counter("solrace_errors_total", "error messages sent"))
        self.dropped = r.add(
            Counter("solrace_slow_clients_dropped_total", "sockets closed for not reading")
        )
        self.move_latency = r.add(
            Histogram(
                "solrace_move_latency_seconds",
                "from a move frame read to its answer queued",
                (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
            )
        )

    def render(self) -> str:
        return self.registry.render()
