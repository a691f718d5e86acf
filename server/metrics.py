"""A tiny Prometheus registry: counters (plain or labelled), gauges and one histogram, in
the text exposition format 0.0.4 (checked by `promtool check metrics` in the tests).

Written here rather than taken from prometheus-client: a few dozen lines cover what
/metrics needs, and each app gets its own registry (prometheus-client's global default
registry trips over two apps in one test process). Whole numbers are printed exactly
(`1234567`, never `1.23457e+06`): a counter that loses digits looks stuck to a `rate()`.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from typing import TypeVar

from redis.exceptions import RedisError

__all__ = [
    "LOOP_BUCKETS",
    "RECORDS_DOWN",
    "REDIS_DOWN",
    "Counter",
    "CounterFunc",
    "Gauge",
    "Histogram",
    "LabelledCounter",
    "Metrics",
    "Registry",
    "number",
    "redis_error",
]

T = TypeVar("T", "Counter", "LabelledCounter", "CounterFunc", "Gauge", "Histogram")


def number(value: float) -> str:
    """A sample's value: whole numbers exactly, others with every digit repr keeps."""
    if isinstance(value, int) or value.is_integer():
        return str(int(value))
    return repr(float(value))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labelled(name: str, label: str, counts: Mapping[str, float]) -> list[str]:
    return [f'{name}{{{label}="{_escape(key)}"}} {number(counts[key])}' for key in sorted(counts)]


class Counter:
    kind = "counter"

    def __init__(self, name: str, help: str) -> None:
        self.name, self.help = name, help
        self.value: float = 0

    def inc(self, amount: float = 1) -> None:
        self.value += amount

    def lines(self) -> list[str]:
        return [f"{self.name} {number(self.value)}"]


class LabelledCounter:
    """A counter per value of one label (`{code="illegal_move"}`), created on first use."""

    kind = "counter"

    def __init__(self, name: str, help: str, label: str) -> None:
        self.name, self.help, self.label = name, help, label
        self.values: dict[str, int] = {}

    def inc(self, key: str, amount: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + amount

    @property
    def total(self) -> int:
        return sum(self.values.values())

    def lines(self) -> list[str]:
        return _labelled(self.name, self.label, self.values)


class CounterFunc:
    """A labelled counter kept elsewhere (e.g. by a Redis client), read when rendered."""

    kind = "counter"

    def __init__(
        self, name: str, help: str, label: str, read: Callable[[], Mapping[str, int]]
    ) -> None:
        self.name, self.help, self.label, self.read = name, help, label, read

    def lines(self) -> list[str]:
        return _labelled(self.name, self.label, self.read())


class Gauge:
    kind = "gauge"

    def __init__(self, name: str, help: str, read: Callable[[], float]) -> None:
        self.name, self.help, self.read = name, help, read

    def lines(self) -> list[str]:
        return [f"{self.name} {number(self.read())}"]


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
            out.append(f'{self.name}_bucket{{le="{bound!r}"}} {total}')
        total += self.counts[-1]
        out.append(f'{self.name}_bucket{{le="+Inf"}} {total}')
        out.append(f"{self.name}_sum {number(self.sum)}")
        out.append(f"{self.name}_count {total}")
        return out


class Registry:
    def __init__(self) -> None:
        self.metrics: list[Counter | LabelledCounter | CounterFunc | Gauge | Histogram] = []

    def add(self, metric: T) -> T:
        self.metrics.append(metric)
        return metric

    def render(self) -> str:
        out: list[str] = []
        for m in self.metrics:
            out += [f"# HELP {m.name} {m.help}", f"# TYPE {m.name} {m.kind}", *m.lines()]
        return "\n".join(out) + "\n"


def _none() -> dict[str, int]:
    return {}


class Metrics:
    """The server's metrics; gauges read live values through the callables given, and
    `redis_reconnects` the Redis clients' reconnection counts by client."""

    def __init__(
        self,
        rooms: Callable[[], float],
        connections: Callable[[], float],
        redis_reconnects: Callable[[], Mapping[str, int]] = _none,
    ) -> None:
        self.registry = r = Registry()
        r.add(Gauge("solrace_rooms_active", "rooms with a socket on this process", rooms))
        r.add(Gauge("solrace_connections", "open WebSocket connections", connections))
        self.rooms_created = r.add(Counter("solrace_rooms_created_total", "rooms created"))
        self.moves_accepted = r.add(Counter("solrace_moves_accepted_total", "moves accepted"))
        self.moves_on_read = r.add(
            Counter(
                "solrace_moves_judged_on_read_total",
                "moves judged as their frame was read, without waking the socket's task",
            )
        )
        self.moves_refused = r.add(
            LabelledCounter("solrace_moves_refused_total", "moves refused, by code", "code")
        )
        self.errors = r.add(
            LabelledCounter("solrace_errors_total", "error messages sent, by code", "code")
        )
        self.http_errors = r.add(
            LabelledCounter("solrace_http_errors_total", "HTTP error answers, by code", "code")
        )
        self.redis_errors = r.add(
            LabelledCounter(
                "solrace_redis_errors_total",
                "requests or background jobs failed by a Redis error, by the error's kind",
                "kind",
            )
        )
        r.add(
            CounterFunc(
                "solrace_redis_reconnects_total",
                "connections to Redis made again after one was lost, by client",
                "client",
                redis_reconnects,
            )
        )
        self.dropped = r.add(
            Counter("solrace_slow_clients_dropped_total", "sockets closed for not reading")
        )
        self.races_archived = r.add(
            LabelledCounter(
                "solrace_races_archived_total",
                "finished races this process took from the outbox, by result: archived "
                "(written and rated here), already (another process had written it) or "
                "failed (set aside: not an outage, a bug; kept and tried again later)",
                "result",
            )
        )
        self.move_latency = r.add(
            Histogram(
                "solrace_move_latency_seconds",
                "from a move frame read to its answer queued",
                (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
            )
        )
        # What holds the event loop up (server/edge/loop_health.py): a move waits behind it.
        self.loop_lag = r.add(
            Histogram(
                "solrace_loop_lag_seconds",
                "how much later than due the event loop ran a timer, sampled every 25 ms",
                LOOP_BUCKETS,
            )
        )
        self.loop_busy = r.add(
            Histogram(
                "solrace_loop_busy_seconds",
                "of each loop lag sample, the part this process's event loop spent running "
                "(its CPU time beyond the 25 ms interval): a long stretch of its own work, "
                "where the lag also counts waits for a core",
                LOOP_BUCKETS,
            )
        )
        self.gc_pause = r.add(
            Histogram(
                "solrace_gc_pause_seconds",
                "each garbage collection's pause of the event loop",
                LOOP_BUCKETS,
            )
        )
        self.gc_cpu = r.add(
            Histogram(
                "solrace_gc_cpu_seconds",
                "each garbage collection's CPU time (its pause less any wait for a core)",
                LOOP_BUCKETS,
            )
        )
        self.gc_collections = r.add(
            LabelledCounter(
                "solrace_gc_collections_total", "garbage collections, by generation", "generation"
            )
        )

    def failed(self, error: BaseException) -> None:
        """Count `error` when it came from Redis (or the connection to it)."""
        if redis_error(error):
            self.redis_errors.inc(type(error).__name__)

    def render(self) -> str:
        return self.registry.render()


# Stalls of the loop: the everyday goals are a p99 under 5 ms and no move over 25 ms.
LOOP_BUCKETS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)

REDIS_DOWN = "the room store (Redis) cannot be reached now: try again in a few seconds"


RECORDS_DOWN = "the records' database did not answer: nothing changed, try again"


def redis_error(error: BaseException) -> bool:
    """Whether `error` is Redis's (a reply error, a lost or refused connection)."""
    return isinstance(error, RedisError | OSError | TimeoutError)
