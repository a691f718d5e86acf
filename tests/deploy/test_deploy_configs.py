"""The shipped balancer configs, checked and run by the real haproxy and nginx binaries."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from support.balancers import (
    DEPLOY,
    haproxy,
    haproxy_binary,
    haproxy_config,
    nginx,
    nginx_binary,
    nginx_config,
    server_states,
    stats,
    wait_for_state,
)
from support.ports import free_port
from support.servers import MakeServer
from yarl import URL


def test_haproxy_accepts_the_shipped_config() -> None:
    check = subprocess.run(
        [haproxy_binary(), "-c", "-f", str(DEPLOY / "haproxy.cfg")],
        capture_output=True,
        text=True,
        env={"SOLRACE_HAPROXY_STATS": "/tmp/unused.sock"},
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_nginx_accepts_the_shipped_config(tmp_path: Path) -> None:
    config = nginx_config(tmp_path, free_port(), [free_port() for _ in range(3)])
    check = subprocess.run(
        [nginx_binary(), "-t", "-p", str(tmp_path), "-c", str(config)],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.fixture
async def two_servers(make_server: MakeServer) -> AsyncIterator[list[int]]:
    """Two real race servers; the third port of the shipped configs has nobody on it."""
    urls = [await make_server(), await make_server()]
    yield [int(url.rsplit(":", 1)[1]) for url in urls]


async def _rooms_through(front: int, times: int) -> list[int]:
    statuses = []
    async with aiohttp.ClientSession() as http:
        for _ in range(times):
            # A new connection each time: each is balanced on its own.
            async with http.get(
                f"http://127.0.0.1:{front}/rooms", headers={"Connection": "close"}
            ) as answer:
                statuses.append(answer.status)
    return statuses


async def test_haproxy_starts_under_a_20000_descriptor_limit_and_skips_a_dead_server(
    tmp_path: Path, two_servers: list[int]
) -> None:
    front, dead = free_port(), free_port()
    config = haproxy_config(tmp_path, front, [*two_servers, dead])
    sock = tmp_path / "stats.sock"
    with haproxy(config, sock, front, tmp_path / "haproxy.log", fd_limit=20_000):
        info = stats(sock, "show info")
        maxconn = int(info.split("Maxconn: ")[1].split()[0])
        assert 5_000 <= maxconn <= 10_000, info  # sized from the limit, not a fixed 50,000
        # Right after the start nobody has checked the dead server yet: a connection it gets
        # is tried again on a live one, not answered 503.
        assert await _rooms_through(front, 12) == [200] * 12
        states = server_states(sock)
        assert states["s3"].startswith("DOWN"), states
        assert states["s1"].startswith("UP") and states["s2"].startswith("UP"), states
        # The room sockets' backend checks the same processes, and finds the same.
        await wait_for_state(sock, "s3", "DOWN", backend="solrace_rooms")
        rooms = server_states(sock, "solrace_rooms")
        assert rooms["s1"].startswith("UP") and rooms["s2"].startswith("UP"), rooms
    log = (tmp_path / "haproxy.log").read_text()
    assert "GET /rooms HTTP/1.1" in log  # one line per request (option httplog)
    assert "Server solrace_servers/s3 is DOWN" in log


async def test_nginx_runs_the_shipped_config(tmp_path: Path, two_servers: list[int]) -> None:
    front = free_port()
    config = nginx_config(tmp_path, front, [*two_servers, free_port()])
    with nginx(config, front):
        assert await _rooms_through(front, 6) == [200] * 6


async def test_the_helpers_fail_on_a_dead_backend_alone(tmp_path: Path) -> None:
    """The assertions above can fail: with no live server at all HAProxy answers 503."""
    front = free_port()
    config = haproxy_config(tmp_path, front, [free_port() for _ in range(3)])
    with haproxy(config, tmp_path / "stats.sock", front, tmp_path / "haproxy.log"):
        assert set(await _rooms_through(front, 2)) == {503}


async def _error_through(front: int, method: str, path: str) -> tuple[int, str, object]:
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, f"http://127.0.0.1:{front}{path}", json={"game": "shaula"}) as answer,
    ):
        body = await answer.json(content_type=None)
        return answer.status, answer.headers.get("Retry-After", ""), body


UNAVAILABLE = {"code": "unavailable", "message": "no server process can take this request now"}


async def test_with_no_process_up_haproxy_answers_the_protocol_s_json_503(tmp_path: Path) -> None:
    """A client written from docs/protocol.md reads every HTTP error as JSON; the balancer's
    own answer when no process can take a request (all down: a Redis outage makes every
    /healthz fail) was HAProxy's HTML page."""
    front = free_port()
    config = haproxy_config(tmp_path, front, [free_port() for _ in range(3)])
    with haproxy(config, tmp_path / "stats.sock", front, tmp_path / "haproxy.log"):
        for method, path in (("GET", "/rooms"), ("POST", "/rooms"), ("GET", "/ws?room=ab")):
            status, retry_after, body = await _error_through(front, method, path)
            assert (status, retry_after, body) == (503, "1", {"error": UNAVAILABLE}), path


async def test_with_no_process_up_nginx_answers_the_protocol_s_json_503(tmp_path: Path) -> None:
    front = free_port()
    config = nginx_config(tmp_path, front, [free_port() for _ in range(3)])
    with nginx(config, front):
        for method, path in (("GET", "/rooms"), ("POST", "/rooms"), ("GET", "/ws?room=ab")):
            status, retry_after, body = await _error_through(front, method, path)
            assert (status, retry_after, body) == (503, "1", {"error": UNAVAILABLE}), path


NOT_PUBLIC = {"code": "not_found", "message": "no such path: /metrics (see docs/protocol.md)"}


async def _status_through(front: int, path: str) -> tuple[int, object]:
    url = URL(f"http://127.0.0.1:{front}{path}", encoded=True)  # sent as written
    async with aiohttp.ClientSession() as http, http.get(url) as answer:
        body = await answer.json(content_type=None) if answer.status != 200 else None
        return answer.status, body


METRICS_PATHS = ("/metrics", "/metrics?name=x", "/%6detrics")


async def test_haproxy_keeps_metrics_off_the_public_door(
    tmp_path: Path, two_servers: list[int]
) -> None:
    """A process without a metrics port (the default, and what run-local.sh starts) answers
    /metrics on its public port: through the balancer, to anyone. The shipped balancer
    answers it 404 itself, as a process with a metrics port does; the server decodes
    `%6d`, so the balancer must too."""
    direct = URL(f"http://127.0.0.1:{two_servers[0]}/%6detrics", encoded=True)
    async with aiohttp.ClientSession() as http, http.get(direct) as answer:
        assert answer.status == 200  # what the balancer has to stop
    front = free_port()
    config = haproxy_config(tmp_path, front, [*two_servers, free_port()])
    with haproxy(config, tmp_path / "stats.sock", front, tmp_path / "haproxy.log"):
        for path in METRICS_PATHS:
            assert await _status_through(front, path) == (404, {"error": NOT_PUBLIC}), path
        assert await _status_through(front, "/healthz") == (200, None)


async def test_nginx_keeps_metrics_off_the_public_door(
    tmp_path: Path, two_servers: list[int]
) -> None:
    front = free_port()
    config = nginx_config(tmp_path, front, [*two_servers, free_port()])
    with nginx(config, front):
        for path in METRICS_PATHS:
            assert await _status_through(front, path) == (404, {"error": NOT_PUBLIC}), path
        assert await _status_through(front, "/healthz") == (200, None)
