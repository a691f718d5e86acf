"""A real Redis Cluster for tests: `n` primaries (no replicas) on free loopback ports.

The slots are split evenly and the nodes introduced to each other with plain commands
(``CLUSTER ADDSLOTSRANGE``, ``CLUSTER MEET``), as `redis-cli --cluster create` would; each
node gets its own config epoch first, so no election is needed before the cluster is ok.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import redis

from support.ports import free_port

__all__ = ["command", "redis_cluster", "wait_up"]

SLOTS = 16384


def command(port: int, *args: str | int) -> object:
    """One command over a fresh connection (redis-py's plain client), its reply decoded."""
    with redis.Redis(port=port, socket_timeout=2.0, decode_responses=True) as client:
        return client.execute_command(*args)


def wait_up(
    port: int, proc: subprocess.Popen[bytes], limit: float = 10.0, log: Path | None = None
) -> None:
    """Return once the redis-server on `port` answers PING (RuntimeError if it never does,
    with the end of its `log` if it has one)."""
    deadline = time.monotonic() + limit
    while True:
        with contextlib.suppress(redis.ConnectionError):
            if command(port, "PING"):
                return
        if time.monotonic() > deadline or proc.poll() is not None:
            said = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
            raise RuntimeError(f"redis-server on port {port} did not start: {said}")
        time.sleep(0.02)


@contextlib.contextmanager
def redis_cluster(n: int = 3) -> Iterator[list[int]]:
    """Start the cluster; yields the nodes' ports once every node says cluster_state:ok."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not on PATH: run `make test` (it installs it)")
    ports = [free_port() for _ in range(n)]
    buses = [free_port() for _ in range(n)]  # the default, port + 10000, may pass 65535
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory(prefix="solrace-test-cluster-") as tmp:
        try:
            for port, bus in zip(ports, buses, strict=True):
                args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
                args += ["--appendonly", "no", "--dir", tmp, "--cluster-enabled", "yes"]
                args += ["--cluster-config-file", f"nodes-{port}.conf"]
                args += ["--cluster-port", str(bus)]
                with open(f"{tmp}/{port}.log", "wb") as log:
                    procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT))
            for port, proc in zip(ports, procs, strict=True):
                wait_up(port, proc, log=Path(tmp) / f"{port}.log")
            share = SLOTS // n
            for i, port in enumerate(ports):
                last = SLOTS - 1 if i == n - 1 else (i + 1) * share - 1
                assert command(port, "CLUSTER", "ADDSLOTSRANGE", i * share, last) == "OK"
                command(port, "CLUSTER", "SET-CONFIG-EPOCH", i + 1)
            for port in ports[1:]:
                meet = command(port, "CLUSTER", "MEET", "127.0.0.1", ports[0], buses[0])
                assert meet == "OK", meet
            deadline = time.monotonic() + 30
            while not all(
                "cluster_state:ok" in (info := str(command(p, "CLUSTER", "INFO")))
                and f"cluster_known_nodes:{n}" in info
                for p in ports
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError("the Redis Cluster did not come up")
                time.sleep(0.05)
            yield ports
        finally:
            for proc in procs:
                proc.terminate()
            for proc in procs:
                proc.wait(5)
