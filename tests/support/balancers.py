"""The shipped balancer configs, run for real: deploy/haproxy.cfg and deploy/nginx.conf with
their ports (and HAProxy's stats socket) moved to free ones, nothing else changed.

- `haproxy_config(tmp, front, servers)`: the shipped HAProxy file, rewritten; `haproxy(...)`
  runs it (optionally under a descriptor limit) until the block ends; `stats(sock, cmd)`
  talks to its runtime API; `server_states(sock)` reads each server's state from it and
  `await wait_for_state(sock, "s1", "UP")` waits for one.
- `nginx_config(tmp, front, servers)`: a minimal nginx.conf that includes the shipped file,
  rewritten; `nginx(...)` runs it in the foreground.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from support.paths import ROOT
from support.ports import port_open

__all__ = [
    "DEPLOY",
    "haproxy",
    "haproxy_binary",
    "haproxy_config",
    "nginx",
    "nginx_binary",
    "nginx_config",
    "server_states",
    "stats",
    "wait_for_state",
    "wait_listening",
]

DEPLOY = ROOT / "deploy"
SHIPPED_FRONT = "127.0.0.1:8765"
SHIPPED_SERVERS = ("127.0.0.1:8801", "127.0.0.1:8802", "127.0.0.1:8803")


def _binary(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        raise RuntimeError(f"{name} is not installed: run `make test` (scripts/ensure-test-tools)")
    return found


def haproxy_binary() -> str:
    return _binary("haproxy")


def nginx_binary() -> str:
    return _binary("nginx")


def _moved(text: str, front: int, servers: list[int]) -> str:
    assert SHIPPED_FRONT in text, f"the shipped config no longer listens on {SHIPPED_FRONT}"
    text = text.replace(SHIPPED_FRONT, f"127.0.0.1:{front}")
    for shipped, port in zip(SHIPPED_SERVERS, servers, strict=True):
        assert shipped in text, f"the shipped config has no server {shipped}"
        text = text.replace(shipped, f"127.0.0.1:{port}")
    return text


def haproxy_config(tmp: Path, front: int, servers: list[int]) -> Path:
    """deploy/haproxy.cfg with its frontend on `front` and its three servers on `servers`."""
    path = tmp / "haproxy.cfg"
    path.write_text(_moved((DEPLOY / "haproxy.cfg").read_text(), front, servers))
    return path


def wait_listening(port: int, proc: subprocess.Popen[bytes], limit: float = 10.0) -> None:
    _wait_for(lambda: port_open(port), proc, limit, f"listening on {port}")


def _wait_for(
    ready: Callable[[], bool], proc: subprocess.Popen[bytes], limit: float, what: str
) -> None:
    """Until `ready()`; RuntimeError if `proc` exits first or `limit` seconds pass."""
    deadline = time.monotonic() + limit
    while True:
        if ready():
            return
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode} before {what}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"not {what} after {limit} s")
        time.sleep(0.02)


@contextlib.contextmanager
def _running(command: list[str], front: int, **popen: Any) -> Iterator[subprocess.Popen[bytes]]:
    """Run `command` until the block ends, once it listens on `front`."""
    proc = subprocess.Popen(command, **popen)
    try:
        wait_listening(front, proc)
        yield proc
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def haproxy(
    config: Path, stats_socket: Path, front: int, log: Path, fd_limit: int | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """Run HAProxy in the foreground on `config` (its log, from stdout, into `log`)."""

    def limit() -> None:
        if fd_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    env = {"SOLRACE_HAPROXY_STATS": str(stats_socket), "PATH": "/usr/bin:/bin"}
    command = [haproxy_binary(), "-db", "-f", str(config)]
    with (
        log.open("wb") as out,
        _running(
            command, front, env=env, stdout=out, stderr=subprocess.STDOUT, preexec_fn=limit
        ) as proc,
    ):
        _wait_stats(stats_socket, proc)
        yield proc


def _wait_stats(sock: Path, proc: subprocess.Popen[bytes], limit: float = 10.0) -> None:
    """Until HAProxy's stats socket takes connections: it is made after the front listens
    (a loaded machine showed the gap: "No such file or directory" on the first query)."""
    _wait_for(lambda: _takes_connections(sock), proc, limit, f"taking connections on {sock}")


def _takes_connections(sock: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as s:
        try:
            s.connect(str(sock))
        except (FileNotFoundError, ConnectionRefusedError):
            return False
        return True


def stats(sock: Path, command: str) -> str:
    """One command on HAProxy's runtime API (the stats socket); its answer."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(str(sock))
        s.sendall(command.encode() + b"\n")
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


def server_states(sock: Path, backend: str = "solrace_servers") -> dict[str, str]:
    """{"s1": "UP" | "DOWN" | ...} from `show stat`."""
    lines = stats(sock, "show stat").splitlines()
    header = lines[0].lstrip("# ").split(",")
    states = {}
    for line in lines[1:]:
        row = dict(zip(header, line.split(","), strict=False))
        if row.get("pxname") == backend and row.get("svname") not in ("FRONTEND", "BACKEND"):
            states[row["svname"]] = row["status"]
    return states


async def wait_for_state(
    sock: Path, server: str, state: str, limit: float = 15.0, backend: str = "solrace_servers"
) -> None:
    """Until HAProxy's checks put `server` ("s1") of `backend` in `state` ("UP", "DOWN")."""
    deadline = asyncio.get_running_loop().time() + limit
    while not (states := server_states(sock, backend))[server].startswith(state):
        assert asyncio.get_running_loop().time() < deadline, states
        await asyncio.sleep(0.1)


def nginx_config(tmp: Path, front: int, servers: list[int]) -> Path:
    """A minimal nginx.conf for a non-root run that includes deploy/nginx.conf, rewritten."""
    site = tmp / "solrace.conf"
    site.write_text(_moved((DEPLOY / "nginx.conf").read_text(), front, servers))
    main = tmp / "nginx.conf"
    main.write_text(
        f"""daemon off;
master_process off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log info;
events {{ worker_connections 256; }}
http {{
    access_log {tmp}/access.log;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    include {site};
}}
"""
    )
    return main


@contextlib.contextmanager
def nginx(config: Path, front: int) -> Iterator[subprocess.Popen[bytes]]:
    command = [nginx_binary(), "-p", str(config.parent), "-c", str(config)]
    with _running(command, front, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as proc:
        yield proc
