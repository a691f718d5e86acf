"""The stores' scripts are Redis Functions (server/redis_io/batcher.py): Redis keeps them
with its data and on its replicas, so a replica promoted to primary runs them with
nothing loaded again (deploy/README.md, "Redis: version and the Lua functions")."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from redis import Redis as SyncRedis
from redis.asyncio import Redis
from support.own_redis import OwnRedis

from server.redis_io.batcher import ScriptBatcher
from server.storage.store import BUDGET, RedisRoomStore


def wait_replicated(replica: SyncRedis, libraries: int, limit: float = 10.0) -> None:
    """Until the replica is in sync and holds `libraries` function libraries."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        linked = replica.info("replication").get("master_link_status") == "up"
        if linked and len(replica.function_list()) == libraries:
            return
        time.sleep(0.05)
    raise AssertionError("the replica did not get the primary's functions")


async def test_a_promoted_replica_runs_the_functions_with_nothing_loaded(tmp_path: Path) -> None:
    (tmp_path / "primary").mkdir()
    (tmp_path / "replica").mkdir()
    primary = OwnRedis(tmp_path / "primary")
    primary.start()
    replica = OwnRedis(tmp_path / "replica", "--replicaof", "127.0.0.1", str(primary.port))
    replica.start()
    try:
        redis = Redis.from_url(primary.url)
        batcher = ScriptBatcher(redis)
        try:
            await RedisRoomStore(redis, batcher).load_scripts()
            loaded = len(await redis.function_list())
        finally:
            await batcher.close()
            await redis.aclose()
        assert loaded == 6  # move, transition, load, quick, unschedule, budget
        with SyncRedis(port=replica.port) as client:
            await asyncio.to_thread(wait_replicated, client, loaded)
            primary.stop()
            client.replicaof("NO", "ONE")  # the failover
            client.config_resetstat()
        promoted = Redis.from_url(replica.url)
        batcher = ScriptBatcher(promoted)
        try:
            # The room-creation limit's function: 0 is "create it now".
            wait = await batcher.call(BUDGET, ("t:rate:test",), (1.0, 2))
            stats = await promoted.info("commandstats")
        finally:
            await batcher.close()
            await promoted.aclose()
        assert float(wait) == 0.0
        assert stats["cmdstat_fcall"]["calls"] == 1
        assert [name for name in stats if name.endswith("|load")] == []
    finally:
        replica.stop()
        primary.stop()
