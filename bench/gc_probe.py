"""What a garbage collection of the loaded server costs, in counts a busy machine does not
change: the objects in each generation and the CPU time of a collection of each.

    python -m bench.gc_probe [--racers 1000] [--rate 2] [--seconds 6]

It starts the real server (``python -m server`` with its own redis-server, AOF on) under
a small wrapper that answers SIGUSR2 by reporting from inside the process: the objects the
collector tracks in each generation and frozen, its thresholds, and the thread CPU time of
``gc.collect(0)``, ``gc.collect(1)`` and ``gc.collect(2)`` in turn. It drives the server
with the racers of ``bench.server``'s fixed load (1,000 racers x 2 moves/s by default),
asks for the report while they play, and prints it. A collection of a generation
examines every object in it and in the younger ones, so the objects per generation say
how long such a collection stops the event loop (and every move waiting on it) whatever
else runs; the CPU times say the same in time, on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import loop_stats
from bench.racers import move_sequences
from bench.server import child, pin, run_load, server_env
from server.redis_io.supervisor import RedisSupervisor, free_loopback_port

__all__ = ["main", "report"]

REPORT_ENV = "SOLRACE_GC_PROBE_REPORT"
THRESHOLD_ENV = "SOLRACE_GC_PROBE_THRESHOLD"  # the collector's thresholds, for an A/B


def report() -> dict[str, Any]:
    """The collector's state in this process, then the CPU time of one collection of each
    generation (youngest first, so each examines what the last left)."""
    out: dict[str, Any] = {
        "tracked": [len(gc.get_objects(generation)) for generation in range(3)],
        "frozen": gc.get_freeze_count(),
        "threshold": list(gc.get_threshold()),
        "counts": list(gc.get_count()),
    }
    for generation in range(3):
        start = time.thread_time()
        gc.collect(generation)
        out[f"collect{generation}_cpu_ms"] = round((time.thread_time() - start) * 1000, 2)
    return out


def _serve() -> None:
    """The server, answering SIGUSR2 with `report` written to $SOLRACE_GC_PROBE_REPORT."""
    path = os.environ[REPORT_ENV]

    def on_signal(signum: int, frame: object) -> None:
        Path(path).write_text(json.dumps(report()))

    signal.signal(signal.SIGUSR2, on_signal)
    import server.edge.app
    from server.__main__ import main as server_main

    if os.environ.get(THRESHOLD_ENV):
        first, second, third = (int(n) for n in os.environ[THRESHOLD_ENV].split(","))
        server.edge.app.GC_THRESHOLD = (first, second, third)

    server_main(sys.argv[2:])


async def probe(args: argparse.Namespace, threshold: str) -> dict[str, Any]:
    sequences = move_sequences("shaula", 16, 40 + int(60 * (args.seconds + 4)))
    port = free_loopback_port()
    with tempfile.TemporaryDirectory(prefix="solrace-gc-probe-") as data:
        redis = RedisSupervisor(data)
        async with redis as redis_url:
            assert redis.pid is not None
            pin(redis.pid, 1)
            out = Path(data) / "report.json"
            command = [sys.executable, "-m", "bench.gc_probe", "--serve", "--port", str(port)]
            env = {
                **server_env(args, redis_url),
                REPORT_ENV: str(out),
                THRESHOLD_ENV: threshold,
                "SOLRACE_LOG_LEVEL": "WARNING",
            }
            async with child(command, port, 0, env) as server:
                plan = {
                    "host": "127.0.0.1",
                    "port": port,
                    "target": "solrace",
                    "game": "shaula",
                    "room_size": 8,
                    "seeds": list(sequences),
                    "sequences": list(sequences.values()),
                    "racers": args.racers,
                    "rate": args.rate,
                    "warmup": 1.0,
                    "duration": args.seconds,
                    "server_pids": [server.pid, redis.pid],
                }
                load = asyncio.create_task(run_load(plan, 1))
                await asyncio.sleep(args.seconds)  # the racers joined and are playing
                os.kill(server.pid, signal.SIGUSR2)
                result = await load
                whole = await loop_stats.scrape(f"http://127.0.0.1:{port}/metrics")
                for _ in range(100):
                    if out.exists():
                        break
                    await asyncio.sleep(0.1)
                found: dict[str, Any] = json.loads(out.read_text())
                found["run"] = loop_stats.summary(whole, result["sent"])
                found["p99_ms"], found["max_ms"] = result["p99_ms"], result["max_ms"]
                return found


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--serve"]:
        _serve()
        return
    parser = argparse.ArgumentParser(prog="python -m bench.gc_probe", description=__doc__)
    parser.add_argument("--racers", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=6.0, help="of play before the report")
    parser.add_argument(
        "--server-env",
        nargs="*",
        default=[],
        type=lambda kv: tuple(kv.split("=", 1)),
        help="extra NAME=VALUE settings for the solrace server",
    )
    parser.add_argument(
        "--thresholds",
        nargs="+",
        default=[""],
        metavar="A,B,C",
        help="the collector's thresholds to compare (default: the server's own), alternated",
    )
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    for _ in range(args.rounds):
        for threshold in args.thresholds:
            found = asyncio.run(probe(args, threshold))
            print(json.dumps(found), file=sys.stderr)
            tracked, run = found["tracked"], found["run"]
            print(
                f"thresholds {found['threshold']}, {args.racers} racers: tracked by generation "
                f"{tracked[0]:,} / {tracked[1]:,} / {tracked[2]:,}, frozen {found['frozen']:,}; "
                f"a collection of generation 0 / 1 / 2 now: {found['collect0_cpu_ms']} / "
                f"{found['collect1_cpu_ms']} / {found['collect2_cpu_ms']} ms CPU; over the "
                f"whole run (joins too): {loop_stats.line(run)}; p99 {found['p99_ms']:.1f} ms"
            )


if __name__ == "__main__":
    main()
