"""A room that this process closes (its last socket gone) and opens again at once (a racer
coming back on a new socket) must hear its events on the new opening.

Closing takes a loop turn or more (its task is cancelled and waited for), and the new
opening subscribes to the same channel meanwhile. The closing's unsubscribe then took the
new subscription away: the racer got the answers to its moves and no event any more, its
opponent's moves and the race's end included, for good. Seen after a Redis freeze, when
the old sockets were closed late, beside the racers' new ones.
"""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from redis.asyncio import Redis
from support.waiting import until

from server.live.hub import Hub
from server.redis_io.batcher import ScriptBatcher
from server.room.race import Race, RoomConfig
from server.storage.feed import Feed, RedisFeed, make_feed
from server.storage.store import RedisRoomStore


@pytest.mark.parametrize("lean", [True, False], ids=["lean feed", "redis-py feed"])
async def test_a_room_opened_again_while_it_closes_hears_its_events(
    redis_url: str, lean: bool
) -> None:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    feed: Feed = make_feed(redis) if lean else RedisFeed(redis)
    await feed.start()
    hub = Hub(RedisRoomStore(redis, batcher), feed)
    try:
        now = time.time()
        room = f"reopen{uuid.uuid4().hex[:8]}"
        race = Race(room=room, config=RoomConfig("shaula", countdown=0.0), seed=4, created_at=now)
        await hub.store.create(race)
        old = await hub.room(room)
        assert old is not None
        closing = asyncio.create_task(hub.abandon(old))  # its last socket did not stay
        await asyncio.sleep(0)  # the closing has begun
        new = await hub.room(room)  # a socket comes for the room meanwhile
        await closing
        assert new is not None and new is not old and hub.rooms[room] is new
        version = new.version
        await hub.store.transact(room, lambda r: r.join("ann", "h", now, "c1")[1], now)
        await until(lambda: new.version > version)
        await hub.abandon(new)
    finally:
        await hub.close()
        await feed.stop()
        await batcher.close()
        await redis.aclose()
