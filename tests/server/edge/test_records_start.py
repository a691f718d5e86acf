"""A process started while the records' database cannot be reached (PostgreSQL restarting,
or started after the servers) waits for it, saying so once, and serves once it is back:
it does not exit with a traceback, to be started again and again by its supervisor
(run-local.sh, systemd, whose start limit then gives up on it for good). A stop signal
ends the wait. Real processes, a real PostgreSQL behind a relay that refuses."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from sqlalchemy.engine import make_url
from support.own_postgres import OwnPostgres
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.tcp_relay import tcp_relay

WAITING = "the records' database cannot be reached"


async def _until_logged(server: ServerProcess, text: str, within: float = 20.0) -> None:
    async with asyncio.timeout(within):
        while text not in server.text():
            assert server.process is None or server.process.returncode is None, server.text()
            await asyncio.sleep(0.05)


async def test_a_process_started_while_the_records_are_down_waits_for_them(
    redis_url: str, postgres: OwnPostgres, tmp_path: Path
) -> None:
    url = await postgres.new_database()
    async with tcp_relay(postgres.port) as relay:
        await relay.refuse()
        through = make_url(url).set(port=relay.port).render_as_string(hide_password=False)
        env = environment(REDIS_URL=redis_url, SOLRACE_DATABASE_URL=through)
        server = ServerProcess(free_port(), env, log=tmp_path / "server.log")
        starting = asyncio.ensure_future(server.start(limit=60))
        try:
            await _until_logged(server, WAITING)
            await asyncio.sleep(2.5)  # several tries, one line, still there
            assert not starting.done()
            assert server.text().count(WAITING) == 1
            assert "Traceback" not in server.text()
            await relay.listen()
            await starting  # up, serving
        finally:
            starting.cancel()
            await server.stop()
        stopped = ServerProcess(free_port(), env, log=tmp_path / "stopped.log")
        await relay.refuse()
        waiting = asyncio.ensure_future(stopped.start(limit=60))
        try:
            await _until_logged(stopped, WAITING)
            assert stopped.process is not None
            stopped.process.send_signal(signal.SIGTERM)
            async with asyncio.timeout(10):  # the wait ends with it
                await stopped.process.wait()
        finally:
            waiting.cancel()
            stopped.kill()
