"""Timers fire once whichever process sees them: many runners (as many server processes)
advance the same tournament at the same moment on a real Redis, and each round begins
once, each heat opens one room and is scored once."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis
from support.servers import MakeServer

from server.redis_io.batcher import ScriptBatcher
from server.room.race import Outcome, Race
from server.storage.store import RedisRoomStore
from server.tournament.model import TourConfig
from server.tournament.rooms import StoreRooms, heat_room
from server.tournament.runner import TourRunner
from server.tournament.store import TourStore


async def test_many_processes_advancing_at_once_begin_each_round_once(redis_url: str) -> None:
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    rooms = RedisRoomStore(redis, batcher)
    await rooms.load_scripts()
    tours = TourStore(redis, batcher)
    runners = [TourRunner(tours, StoreRooms(rooms), f"p{i}") for i in range(6)]
    config = TourConfig(name="timers", rounds=2, winnable=False, pause=0.0, countdown=0.0)
    tour, _ = await runners[0].create(config, time.time())
    for name in ("ann", "bo", "cy"):
        await runners[1].register(tour.id, name, time.time())
    await tours.transact(tour.id, lambda t: t.start(time.time()) or True)

    async def everyone_at_once() -> None:
        now = time.time()
        await asyncio.gather(*(r.advance(tour.id, now) for r in runners))
        await asyncio.gather(*(r.sweep(now) for r in runners))

    for _ in range(3):
        await everyone_at_once()
    state, _ = await tours.get(tour.id)
    assert state.round == 1 and [h.round for h in state.heats] == [1]
    assert state.heats[0].opened
    room = heat_room(tour.id, 0)
    loaded = await rooms.load(room)
    assert loaded is not None and len(loaded.race.seats) == 3

    # Everyone resigns: the race ends; every runner sees it at once; it is scored once,
    # and the next round (no break) begins once.
    def resign_all(race: Race) -> Outcome:
        out = Outcome()
        now = time.time()
        out.events += race.tick(now).events
        for seat in list(race.seats):
            if race.seats[seat].racing:
                out.events += race.resign(seat, now).events
        return out

    await asyncio.sleep(0.05)
    await rooms.transact(room, resign_all, time.time())
    for _ in range(3):
        await everyone_at_once()
    state, _ = await tours.get(tour.id)
    assert [h.round for h in state.heats] == [1, 2]
    assert state.heats[0].results is not None and len(state.heats[0].results) == 3
    assert len(await tours.replays(tour.id)) == 1
    assert state.round_seeds[1] != state.round_seeds[2]
    await batcher.close()
    await redis.aclose()


async def test_creating_tournaments_counts_against_the_creation_limit(
    make_server: MakeServer,
) -> None:
    import random

    from support.http import post_json

    url = await make_server(room_rate=2.0)
    client = {"X-Forwarded-For": f"198.51.{random.randrange(256)}.{random.randrange(1, 255)}"}
    body = {"name": "spam", "winnable": False}
    statuses = [(await post_json(f"{url}/tournaments", body, client))[0] for _ in range(2)]
    status, answer = await post_json(f"{url}/rooms", {"game": "shaula"}, client)
    assert statuses == [201, 201] and status == 429  # one budget for rooms and tournaments
    status, answer = await post_json(f"{url}/tournaments", body, client)
    assert status == 429 and answer["error"]["code"] == "rate_limited"


async def test_the_index_of_tournaments_keeps_only_the_newest(redis_url: str) -> None:
    """A tournament's own keys expire 30 days after its last change; its id in the index
    that `GET /tournaments` reads would stay for ever: the index keeps the newest only."""
    redis = Redis.from_url(redis_url)
    batcher = ScriptBatcher(redis)
    tours = TourStore(redis, batcher, indexed=3)
    runner = TourRunner(tours, StoreRooms(RedisRoomStore(redis, batcher)), "p0")
    made = []
    for i in range(5):
        tour, _ = await runner.create(TourConfig(name=f"cup {i}"), time.time() + i)
        made.append(tour.id)
    assert await redis.zcard("solrace:tours") == 3
    assert await tours.ids() == made[:1:-1]  # the newest three, newest first
    await batcher.close()
    await redis.aclose()
