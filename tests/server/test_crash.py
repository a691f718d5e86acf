"""A server process that dies: its deadlines and its racers are handled by the others."""

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from support.own_redis import OwnRedis
from support.servers import MakeServer

import protocol as p
from server.edge.sweeper import reap_dead_seats, sweep_once
from server.live.hub import Hub
from server.redis_io.batcher import ScriptBatcher
from server.room.checklist import Verdict
from server.room.race import Race, RoomConfig, Status
from server.storage.codec import MoveWrite
from server.storage.feed import RedisFeed
from server.storage.keys import ROOMS, RoomKeys, process_key
from server.storage.store import RedisRoomStore, RoomStore


@pytest.fixture
async def running_hub(own_redis: OwnRedis) -> AsyncIterator[tuple[Redis, Hub]]:
    """A hub over its own Redis, as a process has it (no server around it), and that Redis."""
    redis = Redis.from_url(own_redis.url)
    batcher = ScriptBatcher(redis)
    yield redis, Hub(RedisRoomStore(redis, batcher), RedisFeed(redis))
    await batcher.close()
    await redis.aclose()


async def _dead_process(store: RoomStore) -> str:
    """A process that beat once and whose heartbeat lapsed."""
    dead = f"dead{uuid.uuid4().hex[:6]}"
    await store.heartbeat(dead, 10.0)
    await store.forget_process(dead)
    return dead


async def test_racers_of_a_dead_process_get_the_grace_clock(
    running_hub: tuple[Redis, Hub],
) -> None:
    redis, hub = running_hub
    store = hub.store
    now = time.time()
    room = f"crash{uuid.uuid4().hex[:8]}"
    race = Race(
        room=room, config=RoomConfig("shaula", grace=7.0, countdown=0.0), seed=4, created_at=now
    )
    await store.create(race)
    dead, alive = await _dead_process(store), f"alive{uuid.uuid4().hex[:6]}"
    await store.heartbeat(alive, 10.0)
    for process in (dead, alive):  # as Lobby.join does
        await store.hold(process, room)
    await store.transact(room, lambda r: r.join("gone", "h", now, f"{dead}-1")[1], now)
    await store.transact(room, lambda r: r.join("here", "h", now, f"{alive}-1")[1], now)
    await store.transact(room, lambda r: r.start(0, now), now)
    await store.transact(room, lambda r: r.tick(now), now)

    assert await reap_dead_seats(hub, now + 1) == 1
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.status is Status.RUNNING
    gone, here = loaded.race.seats[0], loaded.race.seats[1]
    assert not gone.connected and gone.grace_until == now + 1 + 7.0
    assert here.connected and here.grace_until is None
    assert await reap_dead_seats(hub, now + 2) == 0  # idempotent
    assert dead not in await store.processes()  # reaped, forgotten
    assert alive in await store.processes()
    await store.drop_process(alive)
    await redis.delete(process_key(alive))


async def test_a_race_won_on_a_process_that_died_before_finishing_it_is_finished(
    running_hub: tuple[Redis, Hub],
) -> None:
    # The last racer's winning move is stored by the move script, which writes no
    # deadline; its process died before the transition that ends the race. Letting go of
    # its seats writes the finish as the room's deadline, and the sweep finishes it.
    _, hub = running_hub
    store = hub.store
    now = time.time()
    room = f"crash{uuid.uuid4().hex[:8]}"
    config = RoomConfig("shaula", seats=1, countdown=0.0)
    await store.create(Race(room=room, config=config, seed=4, created_at=now))
    dead = await _dead_process(store)
    await store.hold(dead, room)
    await store.transact(room, lambda r: r.join("gone", "h", now, f"{dead}-1")[1], now)
    await store.transact(room, lambda r: r.start(0, now), now)
    await store.transact(room, lambda r: r.tick(now), now)
    await sweep_once(hub, now + 0.5)  # the deadlines passed are dropped
    won = p.Progress(version=0, at=now, seat=0, progress=52, moves=1, won=True, stuck=False)
    write = MoveWrite(room, 1, 0, 1, 0, "t1 f1", now + 1, won, now + 1, "h")
    assert (await store.submit_move(write)).kind is Verdict.OK
    await sweep_once(hub, now + 2)
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.status is Status.RUNNING  # nothing due yet

    assert await reap_dead_seats(hub, now + 3) == 1
    await sweep_once(hub, now + 4)
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.status is Status.FINISHED
    assert loaded.race.finish_reason == "all_done"


async def test_events_lost_by_pub_sub_are_read_from_the_log(redis_url: str) -> None:
    from support.http import create_room
    from support.servers import served_app
    from support.wsclient import WsClient

    import protocol as p
    from server.edge.app_keys import HUB, STORE

    async with served_app(redis_url) as (app, url):
        room = (await create_room(url))["id"]
        async with WsClient.connect(url) as spy:
            await spy.send(p.Watch(room=room))
            await spy.expect(p.Snapshot)
            hub, store = app[HUB], app[STORE]
            local = hub.rooms[room]
            await hub.feed.unsubscribe(local.keys.channel, local._on_entry)  # as if it dropped
            now = time.time()
            await store.transact(room, lambda r: r.join("late", "h", now)[1], now)
            assert await spy.quiet(0.3) == []  # lost to pub/sub
            await hub.feed.subscribe(local.keys.channel, local._on_entry)
            hub.catch_up_all()
            joined = await spy.expect(p.PlayerJoined)
            assert joined.name == "late" and joined.version == 1


async def test_reaping_asks_about_each_process_once_not_once_per_seat(
    running_hub: tuple[Redis, Hub],
) -> None:
    """The reaper runs every few seconds over every running room: an EXISTS per held seat
    (1,000 racers: 1,000 round trips, 176 ms of CPU per sweep) was most of an idle
    server's background work."""
    redis, hub = running_hub
    store = hub.store
    now = time.time()
    process = f"p{uuid.uuid4().hex[:8]}"
    await store.heartbeat(process, 10.0)
    for _ in range(3):
        room = f"crash{uuid.uuid4().hex[:8]}"
        config = RoomConfig("shaula", seats=4, countdown=0.0)
        await store.create(Race(room=room, config=config, seed=4, created_at=now))
        await store.hold(process, room)
        for seat in range(4):
            await store.transact(
                room, lambda r, s=seat: r.join(f"n{s}", "h", now, f"{process}-{s}")[1], now
            )
        await store.transact(room, lambda r: r.start(0, now), now)
        await store.transact(room, lambda r: r.tick(now), now)
    registered = await store.processes()
    await redis.config_resetstat()
    assert await reap_dead_seats(hub, now + 1) == 0
    stats = await redis.info("commandstats")
    # One EXISTS per known process, however many seats they hold;
    # and no room of a live process is even loaded.
    assert stats["cmdstat_exists"]["calls"] <= len(registered)
    assert process in registered
    await store.drop_process(process)
    await redis.delete(process_key(process))


async def test_a_dead_process_racer_is_let_go_however_many_rooms_are_newer(
    redis_url: str, make_server: MakeServer, tmp_path: Path
) -> None:
    """The reaper looked at the 200 newest rooms only: on a busy server a racer of a
    process that died in an older room kept its seat "connected" for ever (never
    forfeited: a race without a time limit never ended). Here the room is older than
    200 others, and the process is killed while its socket holds the seat."""
    from support.http import create_room
    from support.ports import free_port
    from support.server_processes import ServerProcess, environment
    from support.wsclient import WsClient, race_alone

    # Processes taken for dead after 4 s of silence (process_ttl; the default is 10 s).
    await make_server(process_ttl=4.0)  # alive, the reaper
    env = environment(REDIS_URL=redis_url, SOLRACE_ROOM_RATE="0", SOLRACE_PROCESS_TTL="4")
    doomed = ServerProcess(free_port(), env, log=tmp_path / "doomed.log")
    await doomed.start()
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    store = RedisRoomStore(redis, batcher)
    newer: list[str] = []
    try:
        room = (await create_room(doomed.url, grace=60, countdown=0))["id"]
        async with WsClient.connect(doomed.url) as ann:
            await race_alone(ann, room)
            now = time.time()
            for _ in range(210):  # newer rooms, as on a busy server
                newer.append(f"newer{uuid.uuid4().hex[:8]}")
                config = RoomConfig("shaula")
                await store.create(Race(room=newer[-1], config=config, seed=1, created_at=now))
            doomed.kill()
            assert doomed.process is not None
            await doomed.process.wait()
        # The live server (its reaper every two seconds) lets the seat
        # go once the dead process's heartbeat has lapsed.
        deadline = time.monotonic() + 45  # heartbeat lapse, seen missing twice, a sweep
        while True:
            loaded = await store.load(room)
            assert loaded is not None
            seat = loaded.race.seats[0]
            if not seat.connected:
                break
            assert time.monotonic() < deadline, f"never let go:\n{doomed.text()[-2000:]}"
            await asyncio.sleep(0.5)
        assert seat.grace_until is not None and loaded.race.status is Status.RUNNING
    finally:
        doomed.kill()
        if newer:  # other tests list the 200 newest rooms of this Redis
            await redis.zrem(ROOMS, *newer)
            await redis.delete(*(k for r in newer for k in (RoomKeys(r).race, RoomKeys(r).meta)))
        await batcher.close()
        await redis.aclose()
