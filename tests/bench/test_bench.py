"""The benchmark's own parts, small and fast: its client, the relay, the load plans.

These check that the load generator still speaks the server's protocol (every move
legal and answered), not how fast anything is.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from aiohttp import web
from redis.asyncio import Redis
from support.balancers import haproxy_binary
from support.servers import MakeServer

import core
from bench import process_stats, script_call
from bench.floor import make_floor_app
from bench.loadgen import run_plan
from bench.loop_stats import difference, parse, summary
from bench.racers import move_sequences
from bench.redis_stats import difference as redis_difference
from bench.redis_stats import line as redis_line
from bench.relay import make_relay_app
from bench.server import (
    FLOOR,
    Row,
    floor_lines,
    median_rows,
    parse_args,
    perf_verdicts,
    ratios,
    table,
)
from bench.wsclient import client_frame
from server.storage.store import MOVE


def plan(target: str, port: int, **extra: Any) -> dict[str, Any]:
    sequences = move_sequences("shaula", 2, 40)
    return {
        "target": target,
        "host": "127.0.0.1",
        "port": port,
        "game": "shaula",
        "room_size": 4,
        "seeds": list(sequences),
        "sequences": list(sequences.values()),
        "racers": 8,
        "warmup": 0.2,
        "duration": 0.6,
        "drain": 2.0,
        **extra,
    }


def test_move_sequences_are_legal_from_the_deal() -> None:
    for seed, moves in move_sequences("shaula", 3, 30).items():
        game = core.new_game("shaula", seed)
        for move in moves:
            game.apply(move)
        assert game.moves == 30 and not game.won and game.legal_moves()


def test_client_frames_are_masked_with_a_zero_key() -> None:
    assert client_frame(b"hi") == b"\x82\x82\x00\x00\x00\x00hi"
    long = client_frame(b"x" * 300)
    assert long[:4] == b"\x82\xfe\x01\x2c" and long[4:8] == b"\x00" * 4 and len(long) == 308


async def test_the_relay_answers_every_move_of_an_open_loop() -> None:
    runner = web.AppRunner(make_relay_app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        result = await run_plan(plan("relay", port, rate=10.0))
    finally:
        await runner.cleanup()
    assert result.sent > 0 and result.unanswered == 0 and result.refused == 0
    assert result.answered_per_s > 0 and result.p50_ms <= result.p99_ms


async def test_the_floor_keeps_every_message_in_redis_before_relaying_it(redis_url: str) -> None:
    address = urlsplit(redis_url)
    assert address.hostname is not None and address.port is not None
    runner = web.AppRunner(make_floor_app(address.hostname, address.port))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    redis = Redis.from_url(redis_url)
    try:
        await redis.delete("floor:0:log", "floor:1:log")
        # Two seconds measured: under a loaded suite a shorter window may hold no move.
        result = await run_plan(plan("relay", port, rate=10.0, redis_url=redis_url, duration=2.0))
        kept = await redis.xlen("floor:0:log") + await redis.xlen("floor:1:log")
    finally:
        await redis.aclose()
        await runner.cleanup()
    # Every move sent was answered (relayed back from its published copy) and kept.
    assert result.sent > 0 and result.unanswered == 0 and result.refused == 0
    assert kept == result.sent
    # What Redis ran per move in the measured interval: the script and its two commands.
    assert {"fcall", "xadd", "publish"} <= set(result.redis["calls"])
    assert result.redis["usec_per_script_call"] > 0


def test_redis_commands_bytes_and_script_time_are_counted_per_move() -> None:
    before = {
        "calls": {"evalsha": 10, "rpush": 20, "hset": 5},
        "usec": {"evalsha": 300, "rpush": 40, "hset": 10},
        "aof_bytes": 1000,
    }
    after = {
        "calls": {"evalsha": 110, "rpush": 220, "hset": 5, "publish": 100},
        "usec": {"evalsha": 6_500, "rpush": 440, "hset": 10, "publish": 150},
        "aof_bytes": 49_400,
    }
    got = redis_difference(before, after, moves=100)
    assert got == {
        "calls": {"rpush": 2.0, "evalsha": 1.0, "publish": 1.0},
        "commands": 4.0,
        "aof_bytes": 484.0,
        "usec_per_script_call": 62.0,
    }
    assert redis_line(got) == (
        "4.00 Redis commands per move (rpush 2.00, evalsha 1.00, publish 1.00); "
        "484 bytes of append-only file per move; 62.0 µs per script call as Redis clocks it"
    )
    # Without a script in the interval there is no script time to give.
    plain = redis_difference(
        {"calls": {"publish": 0}, "usec": {"publish": 0}, "aof_bytes": 0},
        {"calls": {"publish": 10}, "usec": {"publish": 20}, "aof_bytes": 0},
        moves=10,
    )
    assert plain["usec_per_script_call"] is None
    assert "script call" not in redis_line(plain)
    # A rewrite of the append-only file in the interval shrinks it: no bytes to give.
    rewritten = redis_difference(before, {**after, "aof_bytes": 500}, moves=100)
    assert rewritten["aof_bytes"] is None
    assert "the append-only file rewritten in the interval" in redis_line(rewritten)
    assert redis_difference({}, after, moves=100) == {}


async def test_the_solrace_server_accepts_every_precomputed_move(make_server: MakeServer) -> None:
    port = urlsplit(await make_server()).port
    assert port is not None
    # Short sequences run out fast: measure from the start.
    metrics = f"http://127.0.0.1:{port}/metrics"
    result = await run_plan(plan("solrace", port, window=2, warmup=0.0, metrics_url=metrics))
    assert result.errors == []
    assert result.sent > 0 and result.refused == 0 and result.unanswered == 0
    assert result.answered_per_s > 0
    # The server's loop lag, read from its /metrics over the measured 0.6 s (every 25 ms).
    assert result.loop["lag_samples"] >= 5
    assert set(result.loop["gc_per_1000_moves"]) == {"0", "1", "2"}


def test_the_table_and_the_goal_lines() -> None:
    def row(rate: float, p99: float, redis: float = 0.0) -> dict[str, Any]:
        return {
            "answered_per_s": rate,
            "refused": 0,
            "p50_ms": 1.0,
            "p99_ms": p99,
            "max_ms": p99,
            "unanswered": 0,
            "server_cpu": 0.5,
            "redis_cpu": redis,
            "loadgen_cpu": 0.2,
            "offered": rate,
        }

    rows = [
        Row("bare relay", "saturation: 8 racers", row(1000, 5)),
        Row("solrace", "saturation: 8 racers", row(600, 5, redis=0.1)),
        Row("bare relay", "fixed: 8 racers", row(100, 2)),
        Row("solrace", "fixed: 8 racers", row(100, 12)),
    ]
    assert table(rows).count("\n") == 5
    lines = ratios(rows)
    assert lines[0] == "saturation: solrace / bare relay = 0.60"
    assert lines[2] == "fixed load: solrace p99 = 12.00 ms, bare relay p99 = 2.00 ms"
    # The same CPU for the same moves as the relay: 1.00x.
    assert lines[3].endswith("solrace (server and Redis) 5000 µs / bare relay 5000 µs = 1.00")
    # 0.5 s of CPU for 100 moves: 5,000 µs each, so 100 offered moves/s need half a core.
    assert "needs 50% of one core (5000 µs/move), of which the server process 50%" in lines[4]
    # The server process alone (0.4 of a core) and with its redis-server (0.5).
    assert "solrace 1,500 moves/s (server process), 1,200 with its redis" in lines[5]
    assert "bare relay 2,000 messages/s" in lines[5]
    rows[2] = Row("bare relay", "fixed: 8 racers", {**row(100, 2), "server_cpu": 0.2})
    assert ratios(rows)[3].endswith("= 2.50")
    # redis-server's 0.1 of a core over 600 moves/s; the relay has no Redis.
    assert "| 167 |" in table(rows) and "| - |" in table(rows)


def test_the_floor_says_what_the_goal_leaves_for_solrace() -> None:
    def row(rate: float, server: float, redis: float = 0.0) -> dict[str, Any]:
        return {"answered_per_s": rate, "server_cpu": server, "redis_cpu": redis}

    rows = [
        Row("bare relay", "saturation: 8 racers", row(1000, 1.0)),
        Row(FLOOR, "saturation: 8 racers", row(1200, 1.2, redis=0.12)),
        Row("solrace", "saturation: 8 racers", row(600, 1.2)),
        Row("bare relay", "fixed: 8 racers", row(100, 0.01)),  # 100 µs a message
        Row(FLOOR, "fixed: 8 racers", row(100, 0.015, redis=0.003)),  # 150, Redis 30
        Row("solrace", "fixed: 8 racers", row(100, 0.03)),  # 300
    ]
    lines = floor_lines({(r.target, r.load.split(":")[0]): r.result for r in rows})
    assert lines[0].startswith("floor, saturation: relay kept in Redis / bare relay = 1.20")
    assert "(1000 µs/message, Redis 100); solrace / floor = 0.50" in lines[0]
    assert "kept in Redis 150 µs/message (Redis 30) = 1.50 x the bare relay" in lines[1]
    # 1.5 x the floor's 150 µs: 75 µs for solrace's own work, which spends 150.
    assert "leaves 75 µs per move" in lines[1] and lines[1].endswith("(solrace spends 150)")
    assert floor_lines({}) == []


def test_a_server_process_s_system_calls_and_cpu_are_counted_per_move() -> None:
    before = process_stats.snapshot(os.getpid())
    a, b = socket.socketpair()
    with a, b:
        for _ in range(50):  # read(2) and write(2), as uvloop's sockets make them
            os.write(a.fileno(), b"x")
            os.read(b.fileno(), 1)
    after, deadline = before, time.monotonic() + 10
    while time.monotonic() < deadline:  # CPU in user space, until /proc counts a tick of it
        after = process_stats.snapshot(os.getpid())
        if after["user_s"] > before["user_s"]:
            break
    got = process_stats.difference(before, after, moves=10)
    assert got["writes"] >= 5 and got["reads"] >= 5  # 50 of each, over 10 moves
    assert got["user_us"] > 0
    assert process_stats.difference({}, after, moves=10) == {}
    assert process_stats.snapshot(2**22 + 1) == {}  # no such process
    exact = process_stats.difference(
        {"reads": 10, "writes": 20, "sleeps": 5, "user_s": 1.0, "kernel_s": 0.5},
        {"reads": 30, "writes": 100, "sleeps": 15, "user_s": 1.02, "kernel_s": 0.51},
        moves=10,
    )
    assert exact == pytest.approx(
        {"reads": 2.0, "writes": 8.0, "sleeps": 1.0, "user_us": 2000.0, "kernel_us": 1000.0}
    )
    assert process_stats.line(exact).startswith(
        "per move 2.00 read and 8.00 write calls, 1.00 sleeps of the event loop; CPU 2000 µs "
        "in user space and 1000 µs in the kernel"
    )
    result = {"answered_per_s": 1, "server_cpu": 0.1, "p99_ms": 1, "max_ms": 2, "unanswered": 0}
    rows = [Row("solrace", "fixed: 8 racers", {**result, "process": exact})]
    assert any(
        line.startswith("perf_verdict process (solrace, fixed): per move 2.00 read")
        for line in perf_verdicts(rows, runs=1)
    )


def test_the_perf_verdicts_judge_each_goal() -> None:
    def row(rate: float, cpu: float, p99: float, top: float, **extra: Any) -> dict[str, Any]:
        return {
            "answered_per_s": rate,
            "server_cpu": cpu,
            "p99_ms": p99,
            "max_ms": top,
            "unanswered": 0,
            **extra,
        }

    loop = summary(
        {
            "solrace_gc_collections_total|0": 40.0,
            "solrace_gc_collections_total|2": 1.0,
            "solrace_gc_pause_seconds_sum": 0.05,
            "solrace_gc_pause_seconds_count": 41.0,
            "solrace_gc_pause_seconds_bucket|0.005": 40.0,
            "solrace_gc_pause_seconds_bucket|0.025": 40.0,
            "solrace_gc_pause_seconds_bucket|0.05": 41.0,
            "solrace_loop_lag_seconds_count": 320.0,
            "solrace_loop_lag_seconds_bucket|0.005": 318.0,
            "solrace_loop_lag_seconds_bucket|0.025": 319.0,
            "solrace_loop_lag_seconds_bucket|0.05": 320.0,
        },
        moves=2000,
    )
    rows = [
        Row("bare relay", "saturation: 8 racers", row(1000, 1.0, 100, 200)),
        Row(FLOOR, "fixed: 8 racers", row(100, 0.02, 1, 2)),  # 200 µs a message
        Row("bare relay", "fixed: 8 racers", row(100, 0.01, 2.0, 5)),
        Row("solrace", "saturation: 8 racers", row(850, 1.0, 100, 200)),
        Row("solrace", "fixed: 8 racers", row(100, 0.029, 3.9, 20, loop=loop)),  # 290 µs
    ]
    lines = perf_verdicts(rows, runs=3)
    assert lines[0].startswith("perf_verdict machine: load average")
    assert lines[1].startswith("perf_verdict tail: solrace p99 3.90 ms, bare relay p99 2.00 ms")
    assert lines[1].endswith("-> met")
    assert lines[2] == (
        "perf_verdict loop (solrace, fixed): collections per 1,000 moves 20 / 0 / 0.5 "
        "(generation 0/1/2), paused 25 ms (CPU 0 ms) per 1,000 moves, longest <= 50 ms (CPU "
        "none), 1 over 5 ms (CPU 0); loop lag over 5 ms 2 and over 25 ms 1 of 320 samples, "
        "longest <= 50 ms; of it the loop's own work (CPU time) over 5 ms 0, over 25 ms 0, "
        "longest none"
    )
    assert "= 1.45 (goal: at most 1.5" in lines[3] and lines[3].endswith("-> met")
    assert "= 0.85 (goal: at least 0.80) -> met" in lines[4]
    # Over twice the relay's p99 (though under 5 ms), a move of 25 ms, one of 1.
    for bad in ({"p99_ms": 4.1}, {"max_ms": 25.0}, {"unanswered": 1}):
        rows[4] = Row("solrace", "fixed: 8 racers", row(100, 0.029, 3.9, 20) | bad)
        assert perf_verdicts(rows, runs=3)[1].endswith("NOT met")
    rows[4] = Row("solrace", "fixed: 8 racers", row(100, 0.031, 3.9, 20))
    assert perf_verdicts(rows, runs=3)[2].endswith(
        "= 1.55 (goal: at most 1.5, median of 3 alternated runs; these: median of 3) -> NOT met"
    )
    assert (
        "-> met in 1 run(s); the goal is the median of 3"
        in perf_verdicts(
            [*rows[:4], Row("solrace", "fixed: 8 racers", row(100, 0.028, 3.9, 20))], runs=1
        )[2]
    )
    rows[3] = Row("solrace", "saturation: 8 racers", row(790, 1.0, 100, 200))
    assert perf_verdicts(rows, runs=3)[3].endswith("(goal: at least 0.80) -> NOT met")


def test_the_loop_figures_come_from_two_scrapes_of_metrics() -> None:
    text = (
        "# TYPE solrace_gc_collections_total counter\n"
        'solrace_gc_collections_total{generation="0"} 7\n'
        'solrace_loop_lag_seconds_bucket{le="0.005"} 3\n'
        "solrace_loop_lag_seconds_count 4\n"
        "solrace_moves_accepted_total 9\n"
    )
    first = parse(text)
    assert first == {
        "solrace_gc_collections_total|0": 7.0,
        "solrace_loop_lag_seconds_bucket|0.005": 3.0,
        "solrace_loop_lag_seconds_count": 4.0,
    }
    later = parse(text.replace("} 7", "} 10").replace("count 4", "count 6"))
    got = summary(difference(first, later), moves=1000)
    assert got["gc_per_1000_moves"] == {"0": 3.0, "1": 0.0, "2": 0.0}
    assert got["lag_samples"] == 2 and got["lag_over_5ms"] == 2


def test_repeated_runs_are_judged_by_their_median_rates() -> None:
    def row(target: str, load: str, rate: float) -> Row:
        return Row(target, load, {"answered_per_s": rate})

    runs = [
        [row("bare relay", "saturation", 900), row("solrace", "saturation", 300)],
        [row("bare relay", "saturation", 1000), row("solrace", "saturation", 700)],
        [row("bare relay", "saturation", 1100), row("solrace", "saturation", 500)],
    ]
    medians = {r.target: r.result["answered_per_s"] for r in median_rows(runs)}
    assert medians == {"bare relay": 1000, "solrace": 500}
    assert {r.result["answered_per_s"] for r in median_rows(runs[:2])} == {900, 300}
    # At a fixed load every run answers what is offered: the median is by CPU per move.
    fixed = [
        [Row("solrace", "fixed", {"answered_per_s": 100, "server_cpu": cpu, "offered": 100})]
        for cpu in (0.03, 0.05, 0.04)
    ]
    assert [r.result["server_cpu"] for r in median_rows(fixed)] == [0.04]
    assert parse_args(["--repeat", "3"]).repeat == 3
    with pytest.raises(SystemExit):
        parse_args(["--repeat", "0"])


def test_haproxy_runs_the_shipped_config_in_front_of_the_bench_servers(tmp_path: Path) -> None:
    from bench.server import ROOT, haproxy_config

    text = haproxy_config(4000, [4001, 4002], "/tmp/x.sock")
    shipped = (ROOT / "deploy" / "haproxy.cfg").read_text()
    assert "bind 127.0.0.1:4000" in text and "127.0.0.1:8765" not in text
    servers = [line.split() for line in text.splitlines() if line.strip().startswith("server ")]
    # Both backends: least connections, and the room sockets' hash, each checking them.
    assert servers == [
        ["server", "s1", "127.0.0.1:4001"],
        ["server", "s2", "127.0.0.1:4002"],
        ["server", "s1", "127.0.0.1:4001"],
        ["server", "s2", "127.0.0.1:4002"],
    ]
    # Everything else as shipped: balancing, health checks, retries, timeouts.
    for line in shipped.splitlines():
        if not line.strip().startswith(("server s", "bind", "stats socket")):
            assert line in text.splitlines()
    # And HAProxy takes it.
    config = tmp_path / "haproxy.cfg"
    config.write_text(text)
    check = subprocess.run(
        [haproxy_binary(), "-c", "-f", str(config)], capture_output=True, text=True
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_two_processes_behind_haproxy_are_judged_against_one() -> None:
    def row(target: str, rate: float) -> Row:
        return Row(target, "saturation: 8 racers", {"answered_per_s": rate})

    lines = ratios([row("solrace x1 behind HAProxy", 1000), row("solrace x2 behind HAProxy", 1300)])
    assert lines == [
        "behind HAProxy, saturation: 2 processes / 1 = 1.30 (goal: clearly more, at least "
        "1.25) -> met"
    ]
    lines = ratios([row("solrace x1 behind HAProxy", 1000), row("solrace x2 behind HAProxy", 1100)])
    assert lines[0].endswith("-> NOT met")
    assert parse_args(["--haproxy", "1,2"]).haproxy == [1, 2]


async def test_the_script_call_bench_compares_the_tree_s_script_with_a_baseline(
    tmp_path: Path,
) -> None:
    baseline = tmp_path / "move.lua"
    baseline.write_text("redis.call('EXISTS', KEYS[1])\n" + MOVE.body)  # one command more
    rows = await script_call.run(rounds=2, moves=2, baseline=str(baseline))
    assert len(rows) == 2
    for row in rows:
        assert row["baseline"] > 0 and row["tree"] > 0
        assert row["baseline_commands"] == pytest.approx(row["tree_commands"] + 1)
        assert row["baseline_aof"] > 0 and row["tree_aof"] > 0


def test_the_script_call_bench_reads_fcall_s_instructions_from_callgrind() -> None:
    annotated = """\
745,367,349 (86.79%)  ???:call [/usr/bin/redis-check-rdb]
614,922,688 (71.60%)  ???:fcallCommand [/usr/bin/redis-check-rdb]
610,802,120 (71.13%)  ???:luaCallFunction [/usr/bin/redis-check-rdb]
"""
    assert script_call.fcall_instructions(annotated) == 614_922_688
    with pytest.raises(RuntimeError):
        script_call.fcall_instructions("1,000 (1%) ???:call [/usr/bin/redis-server]")
