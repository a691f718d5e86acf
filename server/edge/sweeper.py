"""The deadline sweeper and the reaper of dead processes' seats, one periodic step of this
process (`sweeper_ctx`, in the app's `cleanup_ctx`): it beats this process's heartbeat,
handles every room whose deadline is due (countdown, time limit, grace: `sweep_once`, which
asks `Race.tick`), and lets go of the sockets of processes that died (`reap_dead_seats`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable, Collection, Container
from functools import partial

from aiohttp import web

from protocol import CloseCode, ErrorCode
from server.edge.app_keys import HUB, METRICS, PROCESS, SETTINGS, SOCKETS
from server.edge.periodic import Periodic
from server.live.connection import Connection, process_of
from server.live.hub import Hub
from server.room.race import RaceError

__all__ = [
    "HEARTBEAT_EVERY",
    "MISSING_FOR",
    "PROCESS_TTL",
    "REAP_EVERY",
    "OpenSockets",
    "reap_dead_seats",
    "sweep_once",
    "sweeper_ctx",
]

log = logging.getLogger(__name__)


async def sweep_once(hub: Hub, now: float) -> int:
    """Handle every room whose deadline is due; returns how many. Idempotent."""
    store = hub.store
    due = await store.due(now)
    for room, score in due:
        try:
            applied = await store.transact(room, lambda race: race.tick(now), now)
        except RaceError as err:
            if err.code is ErrorCode.UNKNOWN_ROOM:
                await store.unschedule(room, score)  # the room is gone
            # else nothing was written (a room too busy for now): still due, next sweep
            continue
        next_at = applied.race.next_deadline()
        if next_at is None or next_at > score:
            if next_at is not None:
                await store.reschedule(room, next_at)
            else:
                await store.unschedule(room, score)
    return len(due)


PROCESS_TTL = 10.0  # the default of `Settings.process_ttl`: the periods below are its


def heartbeat_every(ttl: float) -> float:
    """Seconds between two heartbeats of a process thought alive `ttl` after each."""
    return ttl / 5


def missing_for(ttl: float) -> float:
    """Seconds a process must be seen without a heartbeat before it is reaped: after a
    Redis outage live processes beat again within a heartbeat period."""
    return 2 * heartbeat_every(ttl)


def reap_every(ttl: float) -> float:
    """Seconds between two looks for dead processes."""
    return ttl / 2


HEARTBEAT_EVERY = heartbeat_every(PROCESS_TTL)
MISSING_FOR = missing_for(PROCESS_TTL)
REAP_EVERY = reap_every(PROCESS_TTL)


async def reap_dead_seats(
    hub: Hub,
    now: float,
    here: str | None = None,
    open_here: Container[str] = (),
    missing: dict[str, float] | None = None,
    missing_period: float = MISSING_FOR,
) -> int:
    """Sockets that lived in a process that died (no heartbeat) no longer hold their
    seats: each is let go as if it had closed (server/room/race.py decides what follows: a seat
    with another socket stays connected, one with none starts its grace clock). Lobby
    seats too: a dead client must not hold a seat forever. The rooms looked at are the
    ones the dead process registered (`RoomStore.hold`, at each join), however many
    others there are. With `missing` (this reaper's memory: process -> when it was first
    seen without a heartbeat), a process is reaped only once seen missing for
    `missing_period`: right after a Redis outage a live process may not have beaten again
    yet. So are sockets of this process (`here`) that are no longer open (`open_here`) in
    the rooms of `hub.unreleased`: their departure could not be written (Redis was down
    then), and the seat would otherwise wait for them forever. Returns how many sockets."""
    store = hub.store
    reaped = 0
    for process in await store.processes():
        if process == here:
            continue
        if await store.process_alive(process):
            if missing is not None:
                missing.pop(process, None)
            continue
        if missing is not None and now - missing.setdefault(process, now) < missing_period:
            continue
        await store.declare_dead(process)  # first: if it only stalled, it will know
        rooms = await store.rooms_held(process)
        reaped += await _let_go(hub, rooms, now, partial(_of_process, process))
        await store.drop_process(process)  # only once all its rooms are done
        if missing is not None:
            missing.pop(process, None)
    unreleased = hub.unreleased
    if here is not None and unreleased:
        rooms = sorted(unreleased)
        unreleased.clear()  # a room failing again meanwhile is added back, not lost
        try:
            reaped += await _let_go(
                hub, rooms, now, lambda conn: process_of(conn) == here and conn not in open_here
            )
        except BaseException:
            unreleased.update(rooms)
            raise
    return reaped


def _of_process(process: str, conn: str) -> bool:
    return process_of(conn) == process


async def _let_go(hub: Hub, rooms: list[str], now: float, gone: Callable[[str], bool]) -> int:
    """Let go of the sockets `gone` says are gone, in `rooms` still open; how many."""
    statuses = await hub.store.statuses(rooms)
    count = 0
    for room in rooms:
        if statuses.get(room) not in ("lobby", "countdown", "running"):
            continue
        loaded = await hub.store.load(room)
        if loaded is None:
            continue
        seats = loaded.race.seats.items()
        leaving = [(index, conn) for index, seat in seats for conn in seat.conns if gone(conn)]
        # Together: one transition for the room (server/live/departures.py). A room gone in
        # between has nobody left to let go; any other refusal (too busy) is raised, and
        # the whole sweep is tried again.
        try:
            await asyncio.gather(*(hub.departures.left(room, i, c, now) for i, c in leaving))
        except RaceError as err:
            if err.code is not ErrorCode.UNKNOWN_ROOM:
                raise
        count += len(leaving)
    return count


def _close_taken_for_dead(sockets: Collection[Connection], ttl: float) -> None:
    """The others took this process for dead (it stalled past `ttl`: a paused host,
    a swap storm) and let go of its sockets: their seats are away, grace clocks running,
    while the sockets are still open here. Close them (1001, as when stopping): each client
    comes back with its token, and its seat is held again (docs/protocol.md, section 6)."""
    log.warning(
        "this process was taken for dead (no heartbeat for over %g s) and its sockets let "
        "go: closing its %d sockets (1001) so that their clients come back",
        ttl,
        len(sockets),
    )
    for conn in list(sockets):
        conn.close_soon(CloseCode.GOING_AWAY, "this server stalled: reconnect")


class OpenSockets:
    """The ids of this process's open sockets, read again when one is not found: a
    socket opened since the last reading must not be taken for a closed one."""

    def __init__(self, sockets: Collection[Connection]) -> None:
        self.sockets = sockets
        self.ids = {conn.id for conn in sockets}

    def __contains__(self, conn_id: object) -> bool:
        if conn_id not in self.ids:
            self.ids = {conn.id for conn in self.sockets}
        return conn_id in self.ids


async def sweeper_ctx(app: web.Application) -> AsyncIterator[None]:
    hub = app[HUB]
    process = app[PROCESS]
    sockets = app[SOCKETS]
    beat = reap = 0.0
    missing: dict[str, float] = {}  # processes seen without a heartbeat, since when
    ttl = app[SETTINGS].process_ttl

    async def step() -> None:
        nonlocal beat, reap
        now = time.time()
        try:
            if now >= beat:
                beat = now + heartbeat_every(ttl)
                if not await hub.store.heartbeat(process, ttl):
                    _close_taken_for_dead(sockets, ttl)
            await sweep_once(hub, now)
            if now >= reap:
                reap = now + reap_every(ttl)
                await reap_dead_seats(
                    hub, now, process, OpenSockets(sockets), missing, missing_for(ttl)
                )
        except Exception:
            missing.clear()  # Redis trouble: every process gets its missing period afresh
            raise

    sweeper = Periodic(
        "solrace-sweeper",
        step,
        app[SETTINGS].sweep_interval,
        what="deadline sweep",
        log=log,
        metrics=app[METRICS],
    )
    sweeper.start()
    yield
    await sweeper.stop()
    with contextlib.suppress(Exception):
        await hub.store.forget_process(process)
