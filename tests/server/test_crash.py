"""A server process that dies: its deadlines and its racers are handled by the others."""

import time
import uuid

from redis.asyncio import Redis

from server.app import reap_dead_seats
from server.batcher import ScriptBatcher
from server.feed import RedisFeed
from server.hub import Hub
from server.keys import process_key
from server.race import Race, RoomConfig, Status
from server.store import RedisRoomStore


async def test_racers_of_a_dead_process_get_the_grace_clock(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    store = RedisRoomStore(redis, batcher)
    hub = Hub(store, RedisFeed(redis))
    now = time.time()
    room = f"crash{uuid.uuid4().hex[:8]}"
    race = Race(
        room=room, config=RoomConfig("shaula", grace=7.0, countdown=0.0), seed=4, created_at=now
    )
    await store.create(race)
    await redis.set(process_key("alive"), 1, px=10_000)
    await store.transact(room, lambda r: r.join("gone", "h", now, "dead-1")[1], now)
    await store.transact(room, lambda r: r.join("here", "h", now, "alive-1")[1], now)
    await store.transact(room, lambda r: r.start(0, now), now)
    await store.transact(room, lambda r: r.tick(now), now)

    assert await reap_dead_seats(hub, now + 1) == 1
    loaded = await store.load(room)
    assert loaded is not None and loaded.race.status is Status.RUNNING
    gone, here = loaded.race.seats[0], loaded.race.seats[1]
    assert not gone.connected and gone.grace_until == now + 1 + 7.0
    assert here.connected and here.grace_until is None
    assert await reap_dead_seats(hub, now + 2) == 0  # idempotent
    await redis.delete(process_key("alive"))
    await batcher.close()
    await redis.aclose()


async def test_events_lost_by_pub_sub_are_read_from_the_log(redis_url: str) -> None:
    from aiohttp import web
    from tests_support import free_port
    from wsclient import WsClient, create_room

    import protocol as p
    from server.app import create_app
    from server.app_keys import HUB, STORE
    from server.settings import Settings

    port = free_port()
    app = create_app(Settings(port=port, redis_url=redis_url))
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    url = f"http://127.0.0.1:{port}"
    try:
        room = (await create_room(url))["id"]
        async with WsClient.connect(url) as spy:
            await spy.send(p.Watch(room=room))
            await spy.expect(p.Snapshot)
            hub, store = app[HUB], app[STORE]
            local = hub.rooms[room]
            await hub.feed.unsubscribe(local.keys.channel)  # as if the connection dropped
            now = time.time()
            await store.transact(room, lambda r: r.join("late", "h", now)[1], now)
            assert await spy.quiet(0.3) == []  # lost to pub/sub
            await hub.feed.subscribe(local.keys.channel, local._on_entry)
            hub.catch_up_all()
            joined = await spy.expect(p.PlayerJoined)
            assert joined.name == "late" and joined.version == 1
    finally:
        await runner.cleanup()


async def test_reaping_asks_about_each_process_once_not_once_per_seat(redis_url: str) -> None:
    """The reaper runs every few seconds over every running room: an EXISTS per held seat
    (1,000 racers: 1,000 round trips, 176 ms of CPU per sweep) was most of an idle
    server's background work (issue 13)."""
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    store = RedisRoomStore(redis, batcher)
    hub = Hub(store, RedisFeed(redis))
    now = time.time()
    process = f"p{uuid.uuid4().hex[:8]}"
    await redis.set(process_key(process), 1, px=10_000)
    for _ in range(3):
        room = f"crash{uuid.uuid4().hex[:8]}"
        config = RoomConfig("shaula", seats=4, countdown=0.0)
        await store.create(Race(room=room, config=config, seed=4, created_at=now))
        for seat in range(4):
            await store.transact(
                room, lambda r, s=seat: r.join(f"n{s}", "h", now, f"{process}-{s}")[1], now
            )
        await store.transact(room, lambda r: r.start(0, now), now)
        await store.transact(room, lambda r: r.tick(now), now)
    await redis.config_resetstat()
    assert await reap_dead_seats(hub, now + 1) == 0
    stats = await redis.info("commandstats")
    # Other tests' processes may hold seats in rooms of the same Redis: at most one each.
    held, seats = {process}, 0
    for room in await store.room_ids():
        loaded = await store.load(room)
        if loaded is not None:
            conns = [conn for s in loaded.race.seats.values() for conn in s.conns]
            held |= {conn.split("-")[0] for conn in conns}
            seats += len(conns)
    assert stats["cmdstat_exists"]["calls"] <= len(held) < seats
    await redis.delete(process_key(process))
    await batcher.close()
    await redis.aclose()
