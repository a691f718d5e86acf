"""The local redis-server supervisor, with real redis-server processes."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from server.redis_io.supervisor import DataDirBusy, RedisSupervisor, RedisSupervisorError


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_serves_on_loopback_with_aof_in_the_data_dir(tmp_path: Path) -> None:
    async with RedisSupervisor(tmp_path / "data") as url:
        assert url.startswith("redis://127.0.0.1:")
        client = aioredis.from_url(url)
        try:
            assert await client.ping()
            assert await client.config_get("appendonly") == {"appendonly": "yes"}
            assert await client.config_get("dir") == {"dir": str(tmp_path / "data")}
            assert await client.config_get("bind") == {"bind": "127.0.0.1"}
        finally:
            await client.aclose()


async def test_restarts_a_killed_server_on_the_same_url_with_its_data(tmp_path: Path) -> None:
    supervisor = RedisSupervisor(tmp_path)
    restarted = asyncio.Event()
    supervisor.on_restart(restarted.set)
    url = await supervisor.start()
    try:
        client = aioredis.from_url(url)
        # Every write on disk before the crash, so the AOF must bring it back.
        await client.config_set("appendfsync", "always")
        await client.set("{room:1}:seed", "617")
        await client.aclose()
        first_pid = supervisor.pid
        assert first_pid is not None
        os.kill(first_pid, signal.SIGKILL)
        await asyncio.wait_for(restarted.wait(), 10)
        assert supervisor.restarts == 1
        assert supervisor.pid not in (None, first_pid)
        assert supervisor.url == url
        client = aioredis.from_url(url)
        assert await client.get("{room:1}:seed") == b"617"
        await client.aclose()
    finally:
        await supervisor.stop()


async def test_stop_ends_the_process_and_a_new_start_keeps_the_data(tmp_path: Path) -> None:
    supervisor = RedisSupervisor(tmp_path)
    url = await supervisor.start()
    client = aioredis.from_url(url)
    await client.set("kept", "yes")
    await client.aclose()
    pid = supervisor.pid
    assert pid is not None
    await supervisor.stop()
    assert not process_alive(pid)
    assert supervisor.pid is None
    async with RedisSupervisor(tmp_path) as second_url:
        client = aioredis.from_url(second_url)
        assert await client.get("kept") == b"yes"
        await client.aclose()


async def test_a_second_supervisor_on_the_same_data_dir_is_refused(tmp_path: Path) -> None:
    async with RedisSupervisor(tmp_path) as url:
        with pytest.raises(DataDirBusy, match=url):
            await RedisSupervisor(tmp_path).start()
    # Once the first has stopped, the directory is free again.
    async with RedisSupervisor(tmp_path):
        pass


async def test_a_missing_binary_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RedisSupervisorError, match="ensure-redis-server"):
        await RedisSupervisor(tmp_path, binary="no-such-redis-server").start()


async def test_a_server_that_cannot_start_is_reported_and_releases_the_lock(
    tmp_path: Path,
) -> None:
    bad = RedisSupervisor(tmp_path, extra_args=("--no-such-option", "1"))
    with pytest.raises(RedisSupervisorError, match="exited"):
        await bad.start()
    async with RedisSupervisor(tmp_path):
        pass
