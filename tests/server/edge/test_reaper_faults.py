"""Seats left holding a socket that is gone: each fault on the memory store, injected where
it happens (server/edge/sweeper.py's reaper,
server/handlers/lobby.py's join, server/live/departures.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from support.in_memory import connection, settled, world

import protocol as p
from protocol import ErrorCode
from server.edge.sweeper import MISSING_FOR, reap_dead_seats
from server.live.departures import Departures
from server.room.race import Race, RaceError, RoomConfig
from server.storage.memory_store import MemoryRoomStore


async def _room(store: MemoryRoomStore, room: str = "mem1") -> str:
    config = RoomConfig(game="shaula", seats=2, countdown=0.0, grace=5.0)
    await store.create(Race(room=room, config=config, seed=31, created_at=time.time()))
    return room


async def _seat_of_a_silent_process(store: MemoryRoomStore, process: str) -> tuple[str, float]:
    """A room whose seat 0 is held by a socket of `process`, which no longer beats."""
    room = await _room(store)
    await store.heartbeat(process, 10.0)
    await store.hold(process, room)
    now = time.time()
    await store.transact(room, lambda r: r.join("ann", "h", now, f"{process}-1")[1], now)
    await store.forget_process(process)
    return room, now


async def test_a_join_that_fails_after_its_seat_was_written_does_not_hold_it() -> None:
    """The join's transition is written, then its next Redis call fails: the client is
    told the join failed, so the socket is not in the room, yet the seat listed it."""
    store, hub, service = world()
    await store.heartbeat("proc", 10.0)
    room = await _room(store)
    ann, _ = connection("ann")
    real = store.last_seq

    async def blip(room: str, seat: int) -> int:
        raise ConnectionError("Redis blip")

    store.last_seq = blip  # type: ignore[method-assign]
    await service.handle(ann, p.Join(room=room, name="ann"))  # answered with an error
    store.last_seq = real  # type: ignore[method-assign]
    assert ann.room is None  # not joined, as far as the client knows
    await service.closed(ann)
    await reap_dead_seats(hub, time.time(), "proc", ())
    loaded = await store.load(room)
    assert loaded is not None
    assert loaded.race.seats[0].conns == []  # nobody holds it
    await hub.close()


async def test_a_room_that_fails_again_while_it_is_reaped_stays_to_be_reaped() -> None:
    store, hub, service = world()
    room = await _room(store)
    (ann, _), (bo, _) = connection("ann"), connection("bo")
    await service.handle(ann, p.Join(room=room, name="ann"))
    await service.handle(bo, p.Join(room=room, name="bo"))
    await settled()
    real = store.transact
    again = 0

    async def transact(room: str, action: Any, now: float) -> Any:
        nonlocal again
        again += 1
        if again == 1:  # another socket's clean-up failed meanwhile: the room again
            hub.unreleased.add(room)
        return await real(room, action, now)

    store.transact = transact  # type: ignore[method-assign]
    hub.unreleased.add(room)
    await reap_dead_seats(hub, time.time(), "proc", {"proc-bo"})
    assert room in hub.unreleased
    await hub.close()


async def test_a_dead_process_is_kept_until_every_room_of_it_was_written() -> None:
    store, hub, _ = world()
    _, now = await _seat_of_a_silent_process(store, "dead")
    real = store.transact

    async def busy(room: str, action: Any, now: float) -> Any:
        raise RaceError(ErrorCode.UNAVAILABLE, "the room is too busy, try again")

    store.transact = busy  # type: ignore[method-assign]
    with pytest.raises(RaceError):
        await reap_dead_seats(hub, now + 1)
    assert "dead" in await store.processes()  # tried again next sweep
    store.transact = real  # type: ignore[method-assign]
    assert await reap_dead_seats(hub, now + 2) == 1
    assert "dead" not in await store.processes()
    await hub.close()


async def test_a_process_seen_missing_is_reaped_only_once_missing_for_a_while() -> None:
    """Right after a Redis outage every process's heartbeat may be gone: a live one beats
    again within seconds, and must not have its players let go meanwhile."""
    store, hub, _ = world()
    _, now = await _seat_of_a_silent_process(store, "quiet")  # as after an outage
    missing: dict[str, float] = {}
    assert await reap_dead_seats(hub, now, missing=missing) == 0
    assert await reap_dead_seats(hub, now + MISSING_FOR / 2, missing=missing) == 0
    assert await reap_dead_seats(hub, now + MISSING_FOR + 0.1, missing=missing) == 1
    await hub.close()


async def test_joiners_of_a_cancelled_writer_hear_an_error_not_a_cancellation() -> None:
    class Slow:
        async def transact(self, room: str, action: Any, now: float) -> None:
            await asyncio.sleep(10)

    departures = Departures(Slow())  # type: ignore[arg-type]
    writer = asyncio.ensure_future(departures.left("r", 0, "c0", 1.0))
    await asyncio.sleep(0)
    joiner = asyncio.ensure_future(departures.left("r", 1, "c1", 1.0))
    await asyncio.sleep(0)
    writer.cancel()
    results = await asyncio.gather(writer, joiner, return_exceptions=True)
    assert isinstance(results[0], asyncio.CancelledError)
    assert isinstance(results[1], Exception)  # caught by a socket's clean-up
