"""deploy/run-local.sh, run for real: a server that dies is started again while the rest
goes on, each Redis has its own data directory, Ctrl-C stops the servers before Redis, and a
Redis password is not printed."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
from support.own_redis import OwnRedis
from support.paths import ROOT
from support.ports import free_ports_in_a_row, port_open
from support.run_scripts import kill_all
from support.server_processes import environment
from support.signals import interruptible
from support.waiting import answers_healthy, until_true


def _pids(log: Path) -> dict[int, int]:
    """{port: pid} of the servers, as the script last reported them."""
    found = re.findall(r"server on port (\d+) started \(pid (\d+)\)", log.read_text())
    return {int(port): int(pid) for port, pid in found}


def _run_local(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """deploy/run-local.sh ARGS started as a terminal would, its output to `log`."""
    with log.open("wb") as out:
        return subprocess.Popen(
            [str(ROOT / "deploy" / "run-local.sh"), *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own, as in a terminal
            preexec_fn=interruptible,
        )


def _two_servers(tmp_path: Path) -> tuple[subprocess.Popen[bytes], Path, list[int], int]:
    """`run-local.sh 2` on free ports with its own Redis: the script, its log, the
    servers' ports and Redis's."""
    base = free_ports_in_a_row(3)
    log = tmp_path / "run-local.log"
    env = environment(
        REDIS_PORT=str(base + 2), SOLRACE_DATA_DIR=str(tmp_path), PYTHON=sys.executable
    )
    return _run_local(["2", str(base)], env, log), log, [base, base + 1], base + 2


async def _all_healthy(ports: list[int]) -> bool:
    return all([await answers_healthy(port) for port in ports])


async def test_the_fleet_stays_up_and_stops_in_order(tmp_path: Path) -> None:
    script, log, ports, redis_port = _two_servers(tmp_path)
    base = ports[0]
    try:

        async def all_healthy() -> bool:
            return await _all_healthy(ports)

        await until_true("both servers", all_healthy)
        assert (tmp_path / f"redis-{redis_port}" / "appendonlydir").is_dir()
        first = _pids(log)
        os.kill(first[base], signal.SIGKILL)

        async def restarted() -> bool:
            return _pids(log)[base] != first[base] and await answers_healthy(base)

        await until_true("the killed server to be started again", restarted)
        assert script.poll() is None
        assert _pids(log)[base + 1] == first[base + 1]  # the other one was left alone
        assert await answers_healthy(base + 1) and port_open(redis_port)

        # Ctrl-C: the terminal sends SIGINT to the whole foreground process group.
        os.killpg(script.pid, signal.SIGINT)
        while any(port_open(port) for port in ports):
            assert port_open(redis_port), "Redis stopped while a server was still up"
            assert script.poll() is None or any(port_open(p) for p in ports)
            await asyncio.sleep(0.005)
        assert script.wait(30) == 130
        assert not port_open(redis_port)
    finally:
        kill_all(script, log)
        print(log.read_text())
    text = log.read_text()
    assert f"server on port {base} (pid {first[base]}) exited with status 137" in text
    assert text.index("stopping the servers") < text.index("stopping Redis")


def _redis_pid(log: Path) -> int:
    """The pid of the Redis the script started last."""
    return int(re.findall(r"Redis on port \d+ started \(pid (\d+)", log.read_text())[-1])


async def test_children_that_die_at_once_are_all_started_again(tmp_path: Path) -> None:
    """Two servers killed at the same moment (a host's OOM killer, a bad deploy), then a
    server and Redis: each is started again, not only the first the script hears of."""
    script, log, ports, _ = _two_servers(tmp_path)
    base = ports[0]
    try:

        async def all_healthy() -> bool:
            return await _all_healthy(ports)

        await until_true("both servers", all_healthy)
        first = _pids(log)
        for port in ports:
            os.kill(first[port], signal.SIGKILL)

        async def both_restarted() -> bool:
            now = _pids(log)
            return all(now[port] != first[port] for port in ports) and await all_healthy()

        await until_true("both killed servers to be started again", both_restarted)
        second, redis = _pids(log), _redis_pid(log)
        os.kill(second[base], signal.SIGKILL)
        os.kill(redis, signal.SIGKILL)

        async def server_and_redis_restarted() -> bool:
            return (
                _pids(log)[base] != second[base]
                and _redis_pid(log) != redis
                and await all_healthy()
            )

        await until_true("the server and Redis to be started again", server_and_redis_restarted)
        assert script.poll() is None
    finally:
        kill_all(script, log)
        print(log.read_text())


async def test_the_script_does_not_print_the_redis_password(tmp_path: Path) -> None:
    """A REDIS_URL with a password (a Redis user's, here) works, and the script's own lines
    show it as `***`, as the servers' do: its output goes to a terminal or a journal."""
    password = "pw-" + os.urandom(8).hex()
    redis = OwnRedis(tmp_path, "--user", "solrace", "on", f">{password}", "~*", "&*", "+@all")
    redis.start()
    port = free_ports_in_a_row(1)
    log = tmp_path / "run-local.log"
    env = environment(
        REDIS_URL=f"redis://solrace:{password}@127.0.0.1:{redis.port}/0",
        SOLRACE_DATA_DIR=str(tmp_path),
        PYTHON=sys.executable,
    )
    script = _run_local(["1", str(port)], env, log)
    try:
        await until_true("the server", lambda: answers_healthy(port))
        os.killpg(script.pid, signal.SIGINT)
        assert script.wait(30) == 130
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
            script.wait(10)
        for pid in _pids(log).values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        redis.stop()
    text = log.read_text()
    assert password not in text, text
    assert f"Redis at redis://solrace:***@127.0.0.1:{redis.port}/0" in text, text


async def _metrics_status(port: int) -> int:
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/metrics") as answer,
        ):
            text = await answer.text()
            return answer.status if answer.status != 200 or "solrace_connections" in text else -1
    except aiohttp.ClientError:
        return 0  # nothing listens


async def test_a_metrics_port_gives_each_process_its_own(tmp_path: Path) -> None:
    """SOLRACE_METRICS_PORT (deploy/README.md, "Metrics in production") set for the fleet:
    one port for every process left all but the first one failing to bind it, started
    again every second for ever. The script gives the processes that port and the next
    ones, as it does their public ports."""
    base = free_ports_in_a_row(5)
    ports, metrics = [base, base + 1], [base + 2, base + 3]
    log = tmp_path / "run-local.log"
    env = environment(
        REDIS_PORT=str(base + 4),
        SOLRACE_DATA_DIR=str(tmp_path),
        SOLRACE_METRICS_PORT=str(metrics[0]),
        PYTHON=sys.executable,
    )
    script = _run_local(["2", str(base)], env, log)
    try:

        async def all_scraped() -> bool:
            return [await _metrics_status(port) for port in metrics] == [200, 200]

        await until_true("both processes' metrics ports", all_scraped)
        assert all([await answers_healthy(port) for port in ports])
        assert [await _metrics_status(port) for port in ports] == [404, 404]  # not public
        os.killpg(script.pid, signal.SIGINT)
        assert script.wait(30) == 130
    finally:
        kill_all(script, log)
    text = log.read_text()
    assert "exited with status" not in text, text
    assert f"server on port {base + 1} started" in text
    assert f"its /metrics on 127.0.0.1:{metrics[1]}" in text, text
