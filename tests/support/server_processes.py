"""Real `python -m server` processes for tests that signal, kill and restart them.

- `environment(**extra)`: this process's environment without any SOLRACE_* or REDIS_URL,
  with `extra` on top; SOLRACE_DRAIN is 0 unless given (a SIGTERM stops at once), and the
  records in the test run's scratch database unless SOLRACE_DATABASE_URL is given.
- `ServerProcess(port, env, *args, log=PATH)`: `await start()` (returns once /healthz
  answers 200; a process that does not come up is killed), `await connections()` (the
  WebSockets it holds open), `kill()` (SIGKILL), `await stop()` (SIGTERM and wait); every
  run's log is appended to PATH (`text()`). A process gets SIGTERM when the test worker
  that started it ends, however that ends: none outlives the suite.
- `server_process(port, env, *args)`: one process for the length of a block, its log
  printed at the end (pytest shows it when the test fails).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp

from server.redis_io.supervisor import die_with_parent
from support.databases import scratch_database_url
from support.paths import ROOT

__all__ = ["ROOT", "ServerProcess", "environment", "server_process"]


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOLRACE_")}
    env.pop("REDIS_URL", None)
    env["SOLRACE_DRAIN"] = "0"
    env["SOLRACE_DATABASE_URL"] = scratch_database_url()
    env.update(extra)
    return env


class ServerProcess:
    """One `python -m server` on a fixed port, which can be started again after it dies."""

    def __init__(self, port: int, env: Mapping[str, str], *args: str, log: Path) -> None:
        self.port, self.env, self.args, self.log = port, dict(env), args, log
        self.process: asyncio.subprocess.Process | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, limit: float = 30.0) -> None:
        with self.log.open("ab") as out:
            out.write(b"--- start\n")
            self.process = process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "server",
                "--port",
                str(self.port),
                *self.args,
                cwd=ROOT,
                env=self.env,
                stdin=asyncio.subprocess.DEVNULL,
                stderr=out,
                preexec_fn=die_with_parent,
            )
        try:
            await self._up(process, limit)
        except BaseException:
            self.kill()  # not up in time (or the test gave up): no process left behind
            raise

    async def _up(self, process: asyncio.subprocess.Process, limit: float) -> None:
        deadline = asyncio.get_running_loop().time() + limit
        # Up once this process says it serves on the port, not merely once something there
        # answers: another server holding the port (ours then exits) answers /healthz too.
        serving = f"solrace serving on {self.url} "
        async with aiohttp.ClientSession() as http:
            while True:
                this_start = self.text().rpartition("--- start\n")[2]
                if process.returncode is None and serving in this_start:
                    try:
                        async with http.get(f"{self.url}/healthz") as answer:
                            if answer.status == 200:
                                return
                    except aiohttp.ClientError:
                        pass
                await asyncio.sleep(0.05)
                assert process.returncode is None, f"the server exited at start:\n{self.text()}"
                assert asyncio.get_running_loop().time() < deadline, "server not up"

    async def connections(self) -> int:
        """The WebSockets this process holds open now (its `solrace_connections` metric)."""
        async with aiohttp.ClientSession() as http, http.get(f"{self.url}/metrics") as answer:
            text = await answer.text()
        return int(text.split("\nsolrace_connections ")[1].split()[0])

    def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.kill()

    async def stop(self, limit: float = 20.0) -> None:
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), limit)
            except TimeoutError:
                process.kill()
        await process.wait()

    def text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@asynccontextmanager
async def server_process(
    port: int, env: Mapping[str, str], *args: str
) -> AsyncIterator[asyncio.subprocess.Process]:
    """`python -m server` on `port`, up once /healthz answers 200; SIGTERM on exit."""
    with tempfile.TemporaryDirectory(prefix="solrace-server-log-") as tmp:
        server = ServerProcess(port, env, *args, log=Path(tmp) / "server.log")
        try:
            await server.start()
            assert server.process is not None
            yield server.process
        finally:
            await server.stop()
            print(server.text())
