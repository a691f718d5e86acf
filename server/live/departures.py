"""Sockets that left a room, written to the race together: one transition per room and turn.

When many sockets go at once (a proxy, a network or a client process gone: a thousand
racers in a second), each departure was a transition of its own: a load of the race and
a compare-and-set, eight in a row for a room of eight, a hundred rooms at once. That
burst kept every other room's moves waiting 60-160 ms (`python -m bench.load --scenarios
exodus`). Here the departures of one room that arrive while its transition waits for its
turn or for the race to load are applied in one transition (server/room/race.py decides what
each means: `Race.disconnected`), and their callers all return when it is written.

A departure counts from when it is written, not from when the socket went: the wait for
the race may be a wait for Redis (frozen, restarting, cut off), and a grace clock started
at the close would have run during the outage (docs/protocol.md section 6: the grace runs
from when the departure is seen, once the storage answers again).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from server.room.race import Outcome, Race
from server.storage.store import RoomStore

__all__ = ["Departures"]


@dataclass(slots=True)
class _Departure:
    seat: int
    conn: str  # the socket's id, as the seat lists it
    at: float  # when it left (or, written later, when it is written)
    done: asyncio.Future[None] | None  # None: the caller that writes the batch


class Departures:
    def __init__(self, store: RoomStore) -> None:
        self.store = store
        self._waiting: dict[str, list[_Departure]] = {}  # room -> not yet taken by a writer

    async def left(self, room: str, seat: int, conn: str, now: float) -> None:
        """Socket `conn` no longer holds `seat` of `room`; returns once the race says so
        (raises what the transition raised, e.g. RaceError for a room that is gone)."""
        waiting = self._waiting.get(room)
        if waiting is not None:  # a writer has not taken its batch yet: join it
            done = asyncio.get_running_loop().create_future()
            waiting.append(_Departure(seat, conn, now, done))
            await done
            return
        batch = self._waiting[room] = [_Departure(seat, conn, now, None)]
        taken: list[_Departure] | None = None

        def take() -> list[_Departure]:
            nonlocal taken
            if taken is None:  # from now on, departures start a batch of their own
                taken = self._waiting.pop(room, batch)
            return taken

        def action(race: Race) -> Outcome:
            # Called again on a compare-and-set retry, with the same departures. Called
            # once the race is loaded: Redis answers now, whenever the sockets left.
            outcome = Outcome()
            written = time.time()
            for d in take():
                step = race.disconnected(d.seat, d.conn, max(d.at, written))
                outcome.events += step.events
                outcome.changed = outcome.changed or step.changed
            return outcome

        try:
            await self.store.transact(room, action, now)
        except BaseException as exc:
            for d in take():
                if d.done is None or d.done.done():
                    continue
                if isinstance(exc, asyncio.CancelledError):  # the writer's, not theirs
                    exc = RuntimeError(f"the departures of room {room} were not written")
                d.done.set_exception(exc)
                d.done.exception()  # retrieved: a joiner may have been cancelled
            raise
        for d in take():
            if d.done is not None and not d.done.done():
                d.done.set_result(None)
