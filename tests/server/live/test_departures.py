"""Many sockets leaving at once: their departures are written together (server/live/departures.py).

A thousand racers dropping in one second (a proxy or a client process gone) made the server
run a transition per socket, eight in a row per room, and every other room's moves waited
behind them (`python -m bench.load --scenarios exodus`: p99 1.7 -> 101 ms).
"""

import asyncio
import contextlib
from typing import Any, cast

import redis.asyncio as aioredis
from support.http import create_room
from support.wsclient import WsClient

import protocol as p
from protocol import ErrorCode
from server.live.departures import Departures
from server.room.race import Outcome, RaceError
from server.storage.keys import RoomKeys
from server.storage.store import RoomStore

SEATS = 8


async def _rev(redis_url: str, room: str) -> int:
    client = aioredis.from_url(redis_url)
    try:
        return int(await client.hget(RoomKeys(room).meta, "rev") or 0)
    finally:
        await client.aclose()


async def test_a_room_whose_racers_all_drop_at_once_is_written_once_or_twice(
    server_url: str, redis_url: str
) -> None:
    room = (await create_room(server_url, seats=SEATS, seed=7, grace=30, countdown=0.2))["id"]
    async with contextlib.AsyncExitStack() as stack:
        watcher = await stack.enter_async_context(WsClient.connect(server_url))
        racers = [
            await stack.enter_async_context(WsClient.connect(server_url)) for _ in range(SEATS)
        ]
        for i, racer in enumerate(racers):
            await racer.join(room, f"r{i}")
        for racer in racers:
            await racer.send(p.Ready())
        for racer in racers:
            await racer.expect(p.RaceStarted)
        await watcher.send(p.Watch(room=room))
        await watcher.expect(p.Snapshot)
        before = await _rev(redis_url, room)
        # Every racer's TCP connection goes at once, without a close handshake (as when
        # a network or a client process is gone).
        for racer in racers:
            racer.ws.transport.abort()
        gone = set()
        while len(gone) < SEATS:
            presence = await watcher.expect(p.Presence)
            assert not presence.connected and presence.grace_until is not None
            gone.add(presence.seat)
        after = await _rev(redis_url, room)
    # Eight transitions before; now the departures that arrive while a transition waits
    # for the race to load ride along with it.
    assert after - before < SEATS // 2, f"{after - before} transitions for {SEATS} departures"


class _Race:
    """Records the departures it is told of, each one an event."""

    def __init__(self) -> None:
        self.told: list[tuple[int, str]] = []

    def disconnected(self, seat: int, conn: str, now: float) -> Outcome:
        self.told.append((seat, conn))
        return Outcome([p.Presence(version=0, at=now, seat=seat, connected=False)])


class _Store:
    """Just enough of a RoomStore for Departures: one room's transitions take turns, each
    loads the race first (a wait) then applies the action, as RedisRoomStore.transact."""

    def __init__(self, race: _Race | None) -> None:
        self.race = race
        self.outcomes: list[Outcome] = []
        self.turn = asyncio.Lock()

    async def transact(self, room: str, action: Any, now: float) -> None:
        async with self.turn:
            await asyncio.sleep(0.01)  # the load from Redis
            if self.race is None:
                raise RaceError(ErrorCode.UNKNOWN_ROOM, "no room")
            self.outcomes.append(action(self.race))


async def test_departures_that_wait_together_are_one_transition() -> None:
    race = _Race()
    store = _Store(race)
    departures = Departures(cast(RoomStore, store))
    await asyncio.gather(*(departures.left("r", i, f"c{i}", 1.0) for i in range(5)))
    assert len(store.outcomes) == 1
    assert race.told == [(i, f"c{i}") for i in range(5)]
    assert [e.seat for e in store.outcomes[0].events] == [0, 1, 2, 3, 4]


async def test_a_departure_after_the_batch_was_taken_is_written_next() -> None:
    race = _Race()
    store = _Store(race)
    departures = Departures(cast(RoomStore, store))
    first = asyncio.ensure_future(departures.left("r", 0, "c0", 1.0))
    await asyncio.sleep(0.015)  # the first transition has loaded and taken its batch
    await asyncio.gather(first, departures.left("r", 1, "c1", 1.0))
    assert [len(o.events) for o in store.outcomes] == [1, 1]
    assert race.told == [(0, "c0"), (1, "c1")]


async def test_every_caller_hears_that_the_room_is_gone() -> None:
    store = _Store(None)
    departures = Departures(cast(RoomStore, store))
    results = await asyncio.gather(
        *(departures.left("r", i, f"c{i}", 1.0) for i in range(5)), return_exceptions=True
    )
    assert all(isinstance(r, RaceError) for r in results)
    # And the next departure starts afresh.
    store.race = _Race()
    await departures.left("r", 0, "c0", 2.0)
    assert len(store.outcomes) == 1
