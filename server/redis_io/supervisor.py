"""Start, watch and stop a local ``redis-server`` when no ``REDIS_URL`` is given.

The supervisor runs the binary found on PATH on a free loopback port, with its data
(append-only file on) in one directory, restarts it on the same port whenever it dies,
and stops it cleanly on exit, so a newcomer needs nothing but ``make run``.

Two supervisors must never share a data directory (both would write the same AOF): a
lock file in it makes the second one fail with a message naming the first one's URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import shutil
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

__all__ = ["DataDirBusy", "RedisSupervisor", "RedisSupervisorError", "free_loopback_port"]

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
LOCK_NAME = "redis.lock"


class RedisSupervisorError(RuntimeError):
    """The local redis-server could not be found or started."""


class DataDirBusy(RedisSupervisorError):
    """Another supervisor already runs a redis-server on this data directory."""


def free_loopback_port() -> int:
    """A TCP port on the loopback interface that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        port: int = sock.getsockname()[1]
        return port


def die_with_parent() -> None:
    """In the child, before exec: get SIGTERM if its parent dies without cleaning up.

    Without it a server killed with SIGKILL leaves redis-server running on the data
    directory, and the next start would race it for the AOF.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


class RedisSupervisor:
    """One supervised redis-server; use ``async with`` or ``start()``/``stop()``."""

    def __init__(
        self,
        data_dir: Path | str,
        *,
        binary: str = "redis-server",
        port: int | None = None,
        ready_timeout: float = 10.0,
        stop_timeout: float = 10.0,
        max_restart_delay: float = 5.0,
        extra_args: tuple[str, ...] = (),
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.binary = binary
        self.port = port
        self.ready_timeout = ready_timeout
        self.stop_timeout = stop_timeout
        self.max_restart_delay = max_restart_delay
        self.extra_args = extra_args
        self.restarts = 0
        self._process: asyncio.subprocess.Process | None = None
        self._watcher: asyncio.Task[None] | None = None
        self._lock_file: IO[str] | None = None
        self._listeners: list[Callable[[], None]] = []

    @property
    def url(self) -> str:
        if self.port is None:
            raise RedisSupervisorError("redis-server has not been started")
        return f"redis://{LOOPBACK}:{self.port}/0"

    @property
    def pid(self) -> int | None:
        """The running redis-server's process id (tests kill it to check the restart)."""
        return self._process.pid if self._process is not None else None

    def on_restart(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` each time a dead redis-server has been started again."""
        self._listeners.append(callback)

    async def __aenter__(self) -> str:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    async def start(self) -> str:
        """Start redis-server, wait until it answers PING, and return its URL."""
        if shutil.which(self.binary) is None:
            raise RedisSupervisorError(
                f"{self.binary!r} not found on PATH: run scripts/ensure-redis-server "
                "(or `make setup`), or set REDIS_URL to a running Redis"
            )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._take_lock()
        try:
            if self.port is None:
                self.port = free_loopback_port()
            await self._spawn()
        except BaseException:
            await self._kill()
            self._release_lock()
            raise
        self._watcher = asyncio.create_task(self._watch(), name="redis-supervisor")
        log.info("redis-server running at %s, data in %s", self.url, self.data_dir)
        return self.url

    async def stop(self) -> None:
        """Stop watching, then shut redis-server down (it flushes the AOF on SIGTERM)."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        await self._kill()
        self._release_lock()

    def _take_lock(self) -> None:
        lock_path = self.data_dir / LOCK_NAME
        lock_file = lock_path.open("a+")
        try:
            fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock_file.seek(0)
            holder = lock_file.read().strip() or "another process"
            lock_file.close()
            raise DataDirBusy(
                f"{self.data_dir} is in use by {holder}; share it with REDIS_URL, "
                "or give this server its own --data-dir"
            ) from None
        self._lock_file = lock_file

    def _write_lock_holder(self) -> None:
        if self._lock_file is not None:
            self._lock_file.seek(0)
            self._lock_file.truncate()
            self._lock_file.write(f"pid {os.getpid()} (redis at {self.url})\n")
            self._lock_file.flush()

    def _release_lock(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    def _command(self) -> list[str]:
        return [
            self.binary,
            "--bind",
            LOOPBACK,
            "--port",
            str(self.port),
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
            # The AOF is the persistence; RDB snapshots would only add forks.
            "--save",
            "",
            "--daemonize",
            "no",
            "--logfile",
            str(self.data_dir / "redis.log"),
            *self.extra_args,
        ]

    async def _spawn(self) -> None:
        self._process = await asyncio.create_subprocess_exec(
            *self._command(),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
            # Its own session: Ctrl-C in the terminal reaches the server only, which
            # then stops Redis last, after the server has closed its connections.
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        self._write_lock_holder()
        await self._wait_ready()

    async def _wait_ready(self) -> None:
        assert self._process is not None and self.port is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.ready_timeout
        while True:
            if self._process.returncode is not None:
                raise RedisSupervisorError(
                    f"redis-server exited with code {self._process.returncode} at start; "
                    f"see {self.data_dir / 'redis.log'}"
                )
            if await _answers_ping(self.port):
                return
            if loop.time() > deadline:
                raise RedisSupervisorError(
                    f"redis-server did not answer on port {self.port} "
                    f"within {self.ready_timeout} s; see {self.data_dir / 'redis.log'}"
                )
            await asyncio.sleep(0.02)

    async def _watch(self) -> None:
        while True:
            assert self._process is not None
            code = await self._process.wait()
            log.error("redis-server exited with code %s: restarting it", code)
            await self._restart()

    async def _restart(self) -> None:
        # Same port, so the server's Redis clients simply reconnect to the new process.
        delay = 0.1
        while True:
            await asyncio.sleep(delay)
            try:
                await self._spawn()
            except (OSError, RedisSupervisorError) as exc:
                log.error("redis-server restart failed (%s); retrying in %.1f s", exc, delay)
                await self._kill()
                delay = min(delay * 2, self.max_restart_delay)
                continue
            self.restarts += 1
            log.warning("redis-server restarted at %s (restart %d)", self.url, self.restarts)
            for callback in self._listeners:
                callback()
            return

    async def _kill(self) -> None:
        process, self._process = self._process, None
        if process is None or process.returncode is not None:
            return
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), self.stop_timeout)
        except TimeoutError:
            log.error("redis-server ignored SIGTERM for %.0f s: killing it", self.stop_timeout)
            process.kill()
            await process.wait()


async def _answers_ping(port: int) -> bool:
    """True when a Redis on the loopback port answers PING (not LOADING the AOF)."""
    try:
        reader, writer = await asyncio.open_connection(LOOPBACK, port)
    except OSError:
        return False
    try:
        writer.write(b"PING\r\n")
        await writer.drain()
        line = await asyncio.wait_for(reader.readline(), 1.0)
        return line.startswith(b"+PONG")
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
