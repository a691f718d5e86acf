"""deploy/run-cluster-local.sh, run for real: three Redis Cluster primaries with their data
under SOLRACE_DATA_DIR, server processes on them that share the rooms, and Ctrl-C stopping
the servers before the nodes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
from support.paths import ROOT
from support.ports import free_ports_in_a_row, port_open
from support.run_scripts import kill_all
from support.server_processes import environment
from support.signals import interruptible
from support.waiting import answers_healthy, until_true


async def test_a_fleet_on_a_local_cluster_shares_its_rooms_and_stops_in_order(
    tmp_path: Path,
) -> None:
    base = free_ports_in_a_row(2)
    nodes = [_node_port() for _ in range(3)]
    ports = [base, base + 1]
    log = tmp_path / "run-cluster-local.log"
    env = environment(
        CLUSTER_PORTS=" ".join(map(str, nodes)),
        SOLRACE_DATA_DIR=str(tmp_path),
        PYTHON=sys.executable,
    )
    with log.open("wb") as out:
        script = subprocess.Popen(
            [str(ROOT / "deploy" / "run-cluster-local.sh"), "2", str(base)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own, as in a terminal
            preexec_fn=interruptible,
        )
    try:

        async def all_healthy() -> bool:
            return all([await answers_healthy(port) for port in ports])

        await until_true("both servers", all_healthy, limit=60)
        for port in nodes:  # each node's data in the fleet's data directory
            assert (tmp_path / "cluster" / str(port) / "appendonlydir").is_dir()
        async with aiohttp.ClientSession() as http:
            async with http.post(
                f"http://127.0.0.1:{base}/rooms", json={"game": "shaula"}
            ) as answer:
                assert answer.status == 201, await answer.text()
                room = (await answer.json())["room"]["id"]
            async with http.get(f"http://127.0.0.1:{base + 1}/rooms/{room}") as answer:
                assert answer.status == 200, await answer.text()
                assert (await answer.json())["room"]["id"] == room

        os.killpg(script.pid, signal.SIGINT)  # the terminal's Ctrl-C
        while any(port_open(port) for port in ports):
            assert all(port_open(port) for port in nodes), "a node stopped before the servers"
            await asyncio.sleep(0.005)
        assert script.wait(30) == 130

        async def nodes_down() -> bool:
            return not any(port_open(port) for port in nodes)

        await until_true("the nodes to stop", nodes_down, limit=15)
    finally:
        kill_all(script, log)
        _kill_nodes(nodes)
        print(log.read_text())


def _node_port() -> int:
    """A free port whose cluster bus port (the script leaves Redis's default, the port plus
    10000) is free too."""
    while True:
        port = free_ports_in_a_row(1)
        if not port_open(port + 10_000):
            return port


def _kill_nodes(nodes: list[int]) -> None:
    """The nodes, if still running (after a failed test): their pids are in their data."""
    for port in nodes:
        subprocess.run(
            ["redis-cli", "-p", str(port), "shutdown", "nosave"],
            capture_output=True,
            timeout=10,
            check=False,
        )
