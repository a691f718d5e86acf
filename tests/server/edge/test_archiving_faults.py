"""A process killed between a race's end and its archive loses nothing: the race was kept
whole in Redis by the transition that ended it, and another process archives it once the
dead one's lease lapses. Real `python -m server` processes, a real SIGKILL. A race that
cannot be archived (a bug) is kept and set aside, and blocks no other."""

from __future__ import annotations

import asyncio
import sqlite3
import time
import uuid
from pathlib import Path

import sqlalchemy as sa
from redis.asyncio import Redis
from sqlalchemy.engine import make_url
from support.finished import archived_replay, finish_race
from support.http import get_text, post_json
from support.own_postgres import OwnPostgres, lock_waited_on, table_locked
from support.ports import free_port
from support.records import migrated
from support.server_processes import ServerProcess, environment
from support.servers import MakeServer
from support.tcp_relay import tcp_relay

import protocol as p
from core.replay import verify
from records.schema import race_results, races
from server.redis_io.batcher import ScriptBatcher
from server.room.checklist import Verdict
from server.room.race import Race, RoomConfig
from server.storage.codec import MoveWrite
from server.storage.keys import OUTBOX, RoomKeys, outbox_claim_key
from server.storage.store import RedisRoomStore


async def test_a_process_killed_between_the_end_and_the_archive_loses_nothing(
    redis_url: str, tmp_path: Path
) -> None:
    database = tmp_path / "records.sqlite3"
    env = environment(
        REDIS_URL=redis_url,
        SOLRACE_DATABASE_URL=f"sqlite+aiosqlite:///{database}",
        SOLRACE_ARCHIVE_LEASE="2",
    )
    first = ServerProcess(free_port(), env, log=tmp_path / "first.log")
    second = ServerProcess(free_port(), env, log=tmp_path / "second.log")
    redis = Redis.from_url(redis_url)
    await first.start()
    # The database stalls: the first process's archive waits for its write lock.
    stall = sqlite3.connect(database, isolation_level=None)
    try:
        stall.execute("BEGIN IMMEDIATE")
        room = await finish_race(first.url)
        async with asyncio.timeout(20):  # the first process took the job, and waits
            while not await redis.exists(outbox_claim_key(room)):
                await asyncio.sleep(0.05)
        first.kill()
        assert first.process is not None and await first.process.wait() == -9
        assert await redis.zscore(OUTBOX, room) is not None
        assert await redis.hexists(RoomKeys(room).ended, "1")
        stall.execute("ROLLBACK")
    finally:
        stall.close()
    try:
        await second.start()
        replay = await archived_replay(second.url, f"{room}.1")
        assert [r["name"] for r in verify(replay).results] == ["ann", "bo"]
        async with asyncio.timeout(20):  # and the outbox is emptied
            while await redis.zscore(OUTBOX, room) is not None:
                await asyncio.sleep(0.1)
        assert not await redis.exists(RoomKeys(room).ended)
        url = f"sqlite+aiosqlite:///{database}"
        async with migrated(url) as engine, engine.connect() as conn:
            count = sa.select(sa.func.count())
            assert await conn.scalar(count.select_from(races).where(races.c.room == room)) == 1
            mine = race_results.c.race_id == f"{room}.1"
            assert await conn.scalar(count.select_from(race_results).where(mine)) == 2
    finally:
        await second.stop()
        await redis.aclose()
        print(first.text(), second.text())


async def _bad_race(redis_url: str) -> str:
    """A finished race whose moves no engine accepts (written past the server's checks, as
    only a bug could): its replay cannot be made."""
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    store = RedisRoomStore(redis, batcher)
    try:
        now = time.time()
        room = uuid.uuid4().hex[:8]
        config = RoomConfig(game="shaula", seats=1, countdown=0.0)
        await store.create(Race(room=room, config=config, seed=5, created_at=now))
        await store.transact(room, lambda r: r.join("x", "h", now)[1], now)
        await store.transact(room, lambda r: r.start(0, now), now)
        await store.transact(room, lambda r: r.tick(now), now)
        for seq in (1, 2):  # the same cell filled twice
            event = p.Progress(
                version=0, at=now, seat=0, progress=0, moves=seq, won=False, stuck=False
            )
            write = MoveWrite(room, 1, 0, seq, seq - 1, "t1 c1", now, event, None, "h")
            assert (await store.submit_move(write)).kind is Verdict.OK
        await store.transact(room, lambda r: r.resign(0, now), now)
        return room
    finally:
        await batcher.close()
        await redis.aclose()


async def test_a_race_that_cannot_be_archived_is_kept_and_blocks_no_other(
    make_server: MakeServer, redis_url: str
) -> None:
    bad = await _bad_race(redis_url)
    server = await make_server()
    room = await finish_race(server)
    await archived_replay(server, f"{room}.1")
    redis = Redis.from_url(redis_url)
    try:
        assert await redis.hexists(RoomKeys(bad).ended, "1")  # kept, not lost
        later = await redis.zscore(OUTBOX, bad)
        assert later is not None and later > time.time() + 60  # set aside for a while
        _, metrics = await get_text(f"{server}/metrics")
        assert 'solrace_races_archived_total{result="failed"} 1' in metrics
    finally:
        await redis.zrem(OUTBOX, bad)
        await redis.aclose()


async def test_a_database_lost_while_a_race_is_archived_is_an_outage_tried_again_soon(
    make_server: MakeServer, postgres: OwnPostgres
) -> None:
    """PostgreSQL restarting (the archive's connection dropped in the middle of its write)
    is an outage: the race is archived as soon as the database is back, not set aside as
    a race that cannot be archived."""
    url = await postgres.new_database()
    async with tcp_relay(postgres.port) as relay:
        through = make_url(url).set(port=relay.port).render_as_string(hide_password=False)
        server = await make_server(database_url=through)
        async with table_locked(postgres, url, "races"):
            room = await finish_race(server)
            await lock_waited_on(postgres)
            relay.cut()  # the archive's write dies with its connection
        await archived_replay(server, f"{room}.1", within=10.0)
        _, metrics = await get_text(f"{server}/metrics")
        assert 'solrace_races_archived_total{result="failed"}' not in metrics


async def test_archived_races_are_read_while_another_writer_holds_the_records(
    make_server: MakeServer, sqlite_url: str
) -> None:
    """SQLite lets one writer at a time in, and its readers never wait for it (WAL): a
    replay, its boards and a room's latest archived race are served at once while another
    process writes (an archive, a migration), not after its write lock is let go."""
    server = await make_server()
    room = await finish_race(server)
    await archived_replay(server, f"{room}.1")
    path = make_url(sqlite_url).database
    assert path is not None
    writer = sqlite3.connect(path, isolation_level=None, timeout=30)
    try:
        writer.execute("BEGIN IMMEDIATE")
        async with asyncio.timeout(3):
            for asked in (f"/races/{room}.1/replay", f"/races/{room}.1/replay/boards"):
                status, _ = await get_text(f"{server}{asked}")
                assert status == 200, asked
            status, body = await post_json(f"{server}/rooms", {"ghost": f"{room}.1"})
            assert status == 201, body
        writer.execute("ROLLBACK")
    finally:
        writer.close()
