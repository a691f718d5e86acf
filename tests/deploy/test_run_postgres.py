"""deploy/run-postgres.sh, run for real: it makes a PostgreSQL with a solrace database and
role, two server processes on it archive a race (each migrating at start), and the records
outlive a stop and start of the database."""

from __future__ import annotations

import asyncio
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.finished import archived_replay, finish_race
from support.http import get_text
from support.paths import ROOT
from support.ports import free_port
from support.server_processes import ServerProcess, environment


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """A folder the `postgres` user can reach when the tests run as root (pytest's own
    temporary folders are closed to other users)."""
    folder = Path(tempfile.mkdtemp(prefix="solrace-deploy-pg-"))
    folder.chmod(0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _start(data: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = environment(SOLRACE_DATA_DIR=str(data), PG_PORT=str(port))
    with log.open("ab") as out:
        return subprocess.Popen(
            [str(ROOT / "deploy" / "run-postgres.sh")], env=env, stdout=out, stderr=out
        )


async def _url_when_up(data: Path, script: subprocess.Popen[bytes], log: Path) -> str:
    url_file = data / "postgres" / "database-url"
    async with asyncio.timeout(60):
        while "ready to accept connections" not in log.read_text(errors="replace"):
            assert script.poll() is None, log.read_text()
            await asyncio.sleep(0.1)
    assert oct(url_file.stat().st_mode & 0o777) == "0o600"
    return url_file.read_text().strip()


def _stop(script: subprocess.Popen[bytes]) -> int:
    script.send_signal(signal.SIGINT)
    return script.wait(30)


async def test_a_fleet_archives_into_the_postgres_the_kit_runs(
    data_dir: Path, redis_url: str, tmp_path: Path
) -> None:
    port, log = free_port(), tmp_path / "postgres.log"
    script = _start(data_dir, port, log)
    servers: list[ServerProcess] = []
    try:
        url = await _url_when_up(data_dir, script, log)
        assert url.startswith("postgresql+asyncpg://solrace:") and url.endswith(
            f"@127.0.0.1:{port}/solrace"
        )
        password = url.split(":")[2].split("@")[0]
        assert password not in log.read_text()  # the script never prints it
        env = environment(REDIS_URL=redis_url, SOLRACE_DATABASE_URL=url)
        servers = [
            ServerProcess(free_port(), env, log=tmp_path / f"server-{i}.log") for i in (0, 1)
        ]
        await asyncio.gather(*(server.start() for server in servers))
        room = await finish_race(servers[0].url, servers[1].url)
        replay = await archived_replay(servers[1].url, f"{room}.1")
        assert _stop(script) == 0
        script = _start(data_dir, port, log)  # the same cluster, started again
        assert await _url_when_up(data_dir, script, log) == url
        async with asyncio.timeout(30):  # the servers' connections come back by themselves
            while (await get_text(f"{servers[0].url}/races/{room}.1/replay")) != (200, replay):
                await asyncio.sleep(0.2)
    finally:
        for server in servers:
            await server.stop()
        if script.poll() is None:
            _stop(script)
        print(log.read_text(errors="replace"))
