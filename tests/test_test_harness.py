"""The suite's own harness (tests/support/): what every other test stands on.

Four pytest-xdist workers start servers on ports each picks at random: two workers that
picked the same port at the same moment had one test talk to the other's server (its
Redis, its records), and a subprocess server whose port was taken seemed up, since
another answered its /healthz."""

from __future__ import annotations

import asyncio
import itertools
import sys
from collections import deque
from pathlib import Path

import pytest
from support import ports
from support.databases import scratch_database_url
from support.paths import ROOT
from support.ports import free_port, port_range
from support.server_processes import ServerProcess, environment


def test_each_worker_picks_ports_from_its_own_range(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", "4")
    spans = []
    for worker in ("gw0", "gw1", "gw2", "gw3"):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        low, high = port_range()
        assert all(low <= free_port() < high for _ in range(50))
        spans.append((low, high))
    for (_, high), (low, _) in itertools.pairwise(spans):
        assert high <= low  # disjoint


def test_a_free_port_is_not_handed_out_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """A port is free until its server binds it: picks in a row (a cluster's nodes and
    their bus ports) must differ, or one of two servers fails to start."""
    # Sixteen ports all free, and a record of ports given out that holds none of them: the
    # picks come from those sixteen alone (a window drawn at random could hold ports this
    # worker's earlier tests were given, or still bound, until fewer than ten were left).
    base = ports.free_ports_in_a_row(16)
    monkeypatch.setattr(ports, "_GIVEN", deque(maxlen=512))
    monkeypatch.setattr(ports, "port_range", lambda: (base, base + 16))
    picked = [free_port() for _ in range(10)]
    assert len(set(picked)) == 10, picked


async def test_a_server_process_whose_port_another_server_holds_is_not_taken_for_up(
    redis_url: str, tmp_path: Path
) -> None:
    port = free_port()
    env = environment(REDIS_URL=redis_url)
    first = ServerProcess(port, env, log=tmp_path / "first.log")
    await first.start()
    try:
        second = ServerProcess(port, env, log=tmp_path / "second.log")
        with pytest.raises(AssertionError, match="exited at start"):
            await second.start()
        await second.stop()
    finally:
        await first.stop()


def test_each_test_has_a_records_database_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    urls = {}
    for test, phase in (("t.py::one", "setup"), ("t.py::one", "call"), ("t.py::two", "call")):
        monkeypatch.setenv("PYTEST_CURRENT_TEST", f"{test} ({phase})")
        urls[test, phase] = scratch_database_url()
    assert urls["t.py::one", "setup"] == urls["t.py::one", "call"]  # its fixtures' servers too
    assert urls["t.py::two", "call"] != urls["t.py::one", "call"]


async def test_a_server_process_not_up_in_time_is_not_left_running(
    redis_url: str, tmp_path: Path
) -> None:
    """A start that gives up (a loaded machine, a test's own timeout) kills its process:
    one left running outlived its test and its Redis, serving nothing, to the end."""
    server = ServerProcess(free_port(), environment(REDIS_URL=redis_url), log=tmp_path / "s.log")
    with pytest.raises(AssertionError, match="server not up"):
        await server.start(limit=0.0)
    assert server.process is not None
    await asyncio.wait_for(server.process.wait(), 10)


async def test_a_server_process_ends_with_the_worker_that_started_it(
    redis_url: str, tmp_path: Path
) -> None:
    """A worker that ends without stopping its servers (killed, or a test that skipped its
    clean-up) takes them with it."""
    port = free_port()
    script = (
        "import asyncio, os, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "from pathlib import Path\n"
        "from support.server_processes import ServerProcess, environment\n"
        f"s = ServerProcess({port}, environment(REDIS_URL={redis_url!r}),"
        f" log=Path({str(tmp_path / 'w.log')!r}))\n"
        "asyncio.run(s.start())\n"
        "print(s.process.pid, flush=True)\n"
        "os._exit(0)\n"  # no clean-up at all
    )
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-c", script, cwd=ROOT, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(worker.communicate(), 60)
    pid = int(out.split()[0])
    async with asyncio.timeout(10):
        while Path(f"/proc/{pid}").exists() and "zombie" not in _state(pid):
            await asyncio.sleep(0.05)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:")[1].split("\n")[0].lower()
    except (OSError, IndexError):
        return "zombie"
