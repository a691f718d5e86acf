"""A redis-server a test may kill and start again on the same port (the session's Redis
must stay up for the other tests)."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from support.ports import free_port
from support.redis_cluster import wait_up

__all__ = ["OwnRedis", "durable_redis"]


class OwnRedis:
    """`start()` (returns once it answers PING), `stop()` (SIGKILL), `url`."""

    def __init__(self, data: Path, *extra: str) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed: run `make test`"
        self.port = free_port()
        self.args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        self.args += ["--dir", str(data), *extra]
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        quiet = subprocess.DEVNULL
        self.proc = subprocess.Popen(self.args, stdout=quiet, stderr=quiet)
        wait_up(self.port, self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)


@contextlib.contextmanager
def durable_redis(tmp: Path) -> Iterator[OwnRedis]:
    """A started redis-server whose every write is on disk before it answers (append-only
    file, `appendfsync always`, in tmp/redis): killed and started again, it has lost
    nothing acknowledged. Killed at the end."""
    data = tmp / "redis"
    data.mkdir()
    redis = OwnRedis(data, "--appendonly", "yes", "--appendfsync", "always")
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()
