"""Shared fixtures: a real redis-server for the session, and a real race server.

- `redis_url`: a redis-server (binary from PATH; `make test` installs it) on a free loopback
  port, started once per test session (per worker when the suite runs in parallel), no
  persistence, emptied before every test that uses it: what one test left (a finished race
  in the archive's outbox, a queue, a lease) is never another's to trip on, whatever order
  the tests run in.
- `server_url`: this test's own app (`server.edge.app.create_app`) served on a free port over
  that Redis; `http://127.0.0.1:PORT`. WebSockets are at `ws://127.0.0.1:PORT/ws`.
- `make_server`: start more apps (another "process" on the same Redis) with settings.
- `redis_cluster_url`, `make_cluster_server`: the same over a real Redis Cluster of three
  primaries, started once per session (tests/support/redis_cluster.py), emptied before each
  test too.
- `own_redis`: a redis-server of this test's own (tests/support/own_redis.py), append-only with
  every write synced, for a test to kill and start again (what it held survives).
- `own_server_url`: this test's own app over `own_redis`.
- `postgres`: a PostgreSQL server started once per test session (tests/support/own_postgres.py);
  `database_url`: an empty records database of this test's own, on SQLite and on that
  PostgreSQL (the test runs once on each); `sqlite_url`: the SQLite one only.
  Servers started by `make_server` keep their records in one SQLite database of the test's
  own unless given `database_url`.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.own_postgres import OwnPostgres, own_postgres
from support.own_redis import OwnRedis
from support.ports import free_port
from support.redis_cluster import command, redis_cluster, wait_up
from support.servers import MakeServer

BY_MODULE = ("tests/server/edge/web/",)  # folders whose modules share a fixture (a Chromium)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """On several workers (`make test`: pytest-xdist), each test goes to whichever worker
    is free, but a browser module's tests all go to one, which starts the module's
    Chromium once. (xdist's own `loadgroup` cannot do it under pytest 9: it marks a test
    by rewriting a node id field pytest no longer reads.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByTestOrModule(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(BY_MODULE):
                return nodeid.split("::", 1)[0]
            return nodeid

    return ByTestOrModule(config, log)


@pytest.fixture(scope="session")
def session_redis() -> Iterator[int]:
    """The session's redis-server; its port."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not on PATH: run `make test` (it installs it)")
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="solrace-test-redis-") as tmp:
        proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                tmp,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            try:
                wait_up(port, proc)
            except RuntimeError as exc:
                pytest.fail(str(exc))
            yield port
        finally:
            proc.terminate()
            proc.wait(5)


def _empty(port: int) -> None:
    flushed = command(port, "FLUSHALL")
    assert flushed is True, flushed


@pytest.fixture
def redis_url(session_redis: int) -> str:
    """The session's Redis, empty (every database of it)."""
    _empty(session_redis)
    return f"redis://127.0.0.1:{session_redis}/0"


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[OwnRedis]:
    redis = OwnRedis(tmp_path, "--appendonly", "yes", "--appendfsync", "always")
    redis.start()
    yield redis
    redis.stop()


@pytest.fixture(scope="session")
def session_redis_cluster() -> Iterator[list[int]]:
    """A Redis Cluster of 3 primaries (tests/support/redis_cluster.py); their ports."""
    with redis_cluster(3) as ports:
        yield ports


@pytest.fixture
def redis_cluster_url(session_redis_cluster: list[int]) -> str:
    """The session's Redis Cluster, every primary emptied; the URL of one node."""
    for port in session_redis_cluster:
        _empty(port)
    return f"redis://127.0.0.1:{session_redis_cluster[0]}/0"


@pytest.fixture(scope="session")
def postgres() -> Iterator[OwnPostgres]:
    try:
        with own_postgres() as server:
            yield server
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite+aiosqlite:///{tmp_path}/records.sqlite3"


@pytest.fixture(params=["sqlite", "postgresql"])
async def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty records database (no tables yet), on each database the records run on."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path}/records.sqlite3"
    server: OwnPostgres = request.getfixturevalue("postgres")
    return await server.new_database()


async def _servers(redis_url: str, database_url: str) -> AsyncIterator[MakeServer]:
    from aiohttp import web

    from server.edge.app import create_app
    from server.edge.http_server import Runner
    from server.settings import Settings

    runners: list[web.AppRunner] = []

    async def start(**overrides: Any) -> str:
        port = free_port()
        settings = Settings(
            host="127.0.0.1",
            port=port,
            redis_url=redis_url,
            **{"database_url": database_url, **overrides},
        )
        runner = Runner(create_app(settings), shutdown_timeout=1.0)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        runners.append(runner)
        return f"http://127.0.0.1:{port}"

    yield start
    for runner in reversed(runners):
        await runner.cleanup()


@pytest.fixture
async def make_server(redis_url: str, sqlite_url: str) -> AsyncIterator[MakeServer]:
    """Start apps on free ports over the session's Redis; returns their http base URLs."""
    async for start in _servers(redis_url, sqlite_url):
        yield start


@pytest.fixture
async def make_cluster_server(redis_cluster_url: str, sqlite_url: str) -> AsyncIterator[MakeServer]:
    """As make_server, over the session's Redis Cluster."""
    async for start in _servers(redis_cluster_url, sqlite_url):
        yield start


@pytest.fixture
async def server_url(make_server: MakeServer) -> str:
    return await make_server()


@pytest.fixture
async def make_own_server(own_redis: OwnRedis, sqlite_url: str) -> AsyncIterator[MakeServer]:
    """As make_server, over this test's own Redis (`own_redis`), for a test that kills it."""
    async for start in _servers(own_redis.url, sqlite_url):
        yield start


@pytest.fixture
async def own_server_url(make_own_server: MakeServer) -> str:
    """This test's own app over its own Redis (`own_redis`), for a test that kills Redis."""
    return await make_own_server()
