"""A PostgreSQL server of the test session's own, as the suite starts redis-server.

`initdb` into a temporary folder and `postgres` on a free loopback port, no durability (fsync
off: the data dies with the session). PostgreSQL refuses to run as root, and CI runs as root:
then the server runs as the `postgres` user (the distribution's package creates it) through
`setpriv`, in a folder that user owns. Binaries from /usr/lib/postgresql/*/bin
(scripts/ensure-test-tools installs the package).
"""

from __future__ import annotations

import asyncio
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import asyncpg

from support.ports import free_port

__all__ = ["OwnPostgres", "lock_waited_on", "own_postgres", "table_locked"]

USER = "solrace"


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=_version)
    if not found:
        raise RuntimeError("PostgreSQL is not installed: run `make test` (it installs it)")
    return Path(found[-1]).parent


def _version(path: str) -> float:
    try:
        return float(Path(path).parent.parent.name)
    except ValueError:
        return 0.0


class OwnPostgres:
    """`url(database)` of a database of this server; `new_database()` makes an empty one."""

    def __init__(self, port: int) -> None:
        self.port = port

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+asyncpg://{USER}@127.0.0.1:{self.port}/{database}"

    async def new_database(self) -> str:
        """A fresh empty database; its SQLAlchemy URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        conn = await asyncpg.connect(
            host="127.0.0.1", port=self.port, user=USER, database="postgres"
        )
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()
        return self.url(name)


@asynccontextmanager
async def table_locked(
    postgres: OwnPostgres, url: str, table: str, mode: str = "EXCLUSIVE"
) -> AsyncIterator[None]:
    """`LOCK TABLE` on a database of `postgres` (by its `url`), held by a connection of
    its own for the block: a write to the table (a read too, in `ACCESS EXCLUSIVE` mode)
    hangs meanwhile (`lock_waited_on`)."""
    conn = await asyncpg.connect(
        host="127.0.0.1", port=postgres.port, user=USER, database=url.rsplit("/", 1)[1]
    )
    try:
        async with conn.transaction():
            await conn.execute(f'LOCK TABLE "{table}" IN {mode} MODE')
            yield
    finally:
        await conn.close()


async def lock_waited_on(postgres: OwnPostgres, within: float = 10.0) -> None:
    """Return once a connection to `postgres` waits on a lock."""
    conn = await asyncpg.connect(
        host="127.0.0.1", port=postgres.port, user=USER, database="postgres"
    )
    try:
        deadline = time.monotonic() + within
        query = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        while not await conn.fetchval(query):
            if time.monotonic() > deadline:
                raise TimeoutError("nobody waits on a lock")
            await asyncio.sleep(0.05)
    finally:
        await conn.close()


def _as_postgres(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    # setpriv execs the command itself (runuser would stay between, as its parent).
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [setpriv, "--reuid=postgres", "--regid=postgres", "--init-groups", "--", *args]


@contextmanager
def own_postgres() -> Iterator[OwnPostgres]:
    bin_dir = _bin_dir()
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="solrace-test-postgres-") as tmp:
        data = Path(tmp) / "data"
        sockets = Path(tmp) / "run"
        data.mkdir()
        sockets.mkdir()
        if os.geteuid() == 0:
            owner = pwd.getpwnam("postgres")
            for path in (Path(tmp), data, sockets):
                os.chown(path, owner.pw_uid, owner.pw_gid)
        subprocess.run(
            _as_postgres(
                [
                    str(bin_dir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    USER,
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                ]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        proc = subprocess.Popen(
            _as_postgres(
                [
                    str(bin_dir / "postgres"),
                    "-D",
                    str(data),
                    "-p",
                    str(port),
                    "-h",
                    "127.0.0.1",
                    "-k",
                    str(sockets),
                    "-c",
                    "fsync=off",
                    "-c",
                    "full_page_writes=off",
                    "-c",
                    "synchronous_commit=off",
                    "-c",
                    "max_connections=200",
                ]
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait_up(bin_dir, port, proc)
            yield OwnPostgres(port)
        finally:
            proc.send_signal(signal.SIGINT)  # a fast shutdown: SIGTERM waits for clients
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def _wait_up(bin_dir: Path, port: int, proc: subprocess.Popen[bytes], limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    while True:
        ready = subprocess.run(
            [str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, "-q"],
            check=False,
        )
        if ready.returncode == 0:
            return
        if time.monotonic() > deadline or proc.poll() is not None:
            raise RuntimeError(f"postgres on port {port} did not start")
        time.sleep(0.05)
