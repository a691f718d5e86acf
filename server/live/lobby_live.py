"""The lobby, live over WebSocket: `lobby_watch` / `lobby_unwatch` in, `lobby` and
`lobby_changed` out.

Every room transition, in any process, is published on the `LOBBY` channel by the same
script that writes it (server/storage/lua/transition.lua): the room's lobby entry stamped with its
rev. A process with lobby watchers subscribes to it and keeps a `LobbyPicture` (pure: the
open and running rooms, at most `LIMIT`, the newest); a watcher gets the picture at once,
then what changed, coalesced process-wide to one `lobby_changed` per `MIN_GAP` (the latest
state of each room wins), encoded once for every watcher. A busy server's hundreds of
transitions a second cost each watcher at most four frames a second.

Pub/sub carries no history: what a dropped subscription missed, and rooms that expire
(their keys' TTL, no transition), are found by reading the rooms again from the store
(`live_rooms`), after a reconnect and every `RECONCILE_EVERY` seconds while watched.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from functools import partial

import protocol as p
from protocol import ErrorCode
from server.daily.rule import day_over
from server.live.connection import Connection
from server.live.frames import Outgoing
from server.redis_io.outage import no_problem
from server.storage.feed import Feed
from server.storage.keys import LOBBY
from server.storage.store import Loaded, RoomStore, parse_lobby_entry

__all__ = [
    "LIMIT",
    "LIVE",
    "MIN_GAP",
    "RECONCILE_EVERY",
    "LobbyLive",
    "LobbyPicture",
    "live_rooms",
    "unlisted",
]

log = logging.getLogger(__name__)

LIVE = ("lobby", "countdown", "running")  # the statuses the lobby lists
LIMIT = 100  # rooms in the list at most: the newest (by creation)
MIN_GAP = 0.25  # seconds between two `lobby_changed` frames: at most four a second
RECONCILE_EVERY = 30.0  # seconds between two readings of the rooms from the store
SCANNED = 200  # the most recently created rooms looked at when reading them from the store
WATCH_WAIT = 3.0  # seconds a `lobby_watch` waits for the list before it is `unavailable`


def unlisted(kind: str, deal: str | None, now: float) -> bool:
    """Whether a live room (its `kind` and `daily_deal`) is kept out of the lobby: a daily
    attempt (nobody else's to watch while it runs: server/daily/), and another room on a
    daily deal (practice, a ghost race) until its day is over. The lobby is everyone's:
    it shows what the daily deal's rule (server/edge/daily_routes.py `line_open`) lets
    anyone see."""
    return kind == "daily" or (deal is not None and not day_over(deal, now))


async def live_rooms(
    store: RoomStore, wanted: tuple[str, ...] = LIVE, scanned: int = SCANNED
) -> list[Loaded]:
    """The rooms among the `scanned` most recently created whose status is in `wanted`,
    newest first (GET /rooms, GET /tv/room and the lobby feed's readings)."""
    ids = await store.room_ids(scanned)
    statuses = await store.statuses(ids)
    found = []
    now = time.time()
    for room in ids:
        if statuses.get(room) in wanted:
            loaded = await store.load(room)
            if loaded is None:
                continue
            config = loaded.race.config
            if unlisted(config.kind, config.daily_deal, now):
                continue
            if loaded.race.status.value in wanted:
                found.append(loaded)
    return found


class LobbyPicture:
    """The open and running rooms as this process knows them. Pure: entries in (from
    pub/sub, stamped with their rev, or from a reading of the store), changes out.

    A room's entry is replaced only by one with a higher rev, so two sources in any order
    end on the latest. A reading of the store is slower than pub/sub: while one runs, a
    room that left the list is remembered with its rev (so the reading cannot bring back
    its older state), and a room the reading did not find is dropped only if pub/sub did
    not bring it after the reading began."""

    def __init__(self, limit: int = LIMIT, clock: Callable[[], float] = time.time) -> None:
        self.limit = limit
        self.clock = clock  # for `unlisted`: a room on a daily deal shows once its day is over
        self.rooms: dict[str, p.LobbyRoom] = {}
        self._revs: dict[str, int] = {}
        self._stamps: dict[str, int] = {}  # when (in updates) each listed room last changed
        self._stamp = 0
        self._left: dict[str, int] | None = None  # while a reading runs: rooms that left
        self.changed: set[str] = set()  # ids to tell watchers of at the next flush

    def update(self, rev: int, room: p.LobbyRoom) -> None:
        """A room's entry as of its write `rev`."""
        room_id = room["id"]
        known = self._revs.get(room_id)
        if self._left is not None and room_id in self._left:
            known = max(known or 0, self._left[room_id])
        if known is not None and rev <= known:
            return
        deal = room.get("daily_deal")  # (none in an entry from a process older than it)
        if room["status"] not in LIVE or unlisted(room.get("kind", ""), deal, self.clock()):
            if self._left is not None:
                self._left[room_id] = rev
            self._drop(room_id)
            return
        if room_id not in self.rooms and len(self.rooms) >= self.limit:
            oldest = min(self.rooms.values(), key=lambda r: (r["created_at"], r["id"]))
            if (room["created_at"], room_id) <= (oldest["created_at"], oldest["id"]):
                return  # older than every listed room: past the limit
            self._drop(oldest["id"])
        self._stamp += 1
        self.rooms[room_id], self._revs[room_id] = room, rev
        self._stamps[room_id] = self._stamp
        self.changed.add(room_id)

    def _drop(self, room_id: str) -> None:
        if self.rooms.pop(room_id, None) is not None:
            del self._revs[room_id], self._stamps[room_id]
            self.changed.add(room_id)

    def begin_reading(self) -> int:
        """A reading of the store begins; pass what this returns to `finish_reading`."""
        self._left = {}
        return self._stamp

    def finish_reading(self, began: int, found: list[tuple[int, p.LobbyRoom]]) -> None:
        """The reading's rooms (all that are live, as of some moment after `began`)."""
        for rev, room in found:
            self.update(rev, room)
        present = {room["id"] for _, room in found}
        for room_id in [r for r in self.rooms if r not in present]:
            if self._stamps[room_id] <= began:  # not heard of since the reading began
                self._drop(room_id)
        self._left = None

    def state(self) -> p.LobbyState:
        return p.LobbyState(rooms=self._newest_first(self.rooms), limit=self.limit)

    def take_changes(self) -> p.LobbyChanged | None:
        """What changed since the last call (None: nothing), each room's latest state."""
        if not self.changed:
            return None
        changed, self.changed = self.changed, set()
        rooms = {r: self.rooms[r] for r in changed if r in self.rooms}
        gone = sorted(r for r in changed if r not in self.rooms)
        return p.LobbyChanged(rooms=self._newest_first(rooms), gone=gone)

    @staticmethod
    def _newest_first(rooms: dict[str, p.LobbyRoom]) -> list[p.LobbyRoom]:
        return sorted(rooms.values(), key=lambda r: (r["created_at"], r["id"]), reverse=True)


class LobbyLive:
    """This process's lobby watchers and the picture they share (only while any watch)."""

    def __init__(
        self,
        store: RoomStore,
        feed: Feed,
        away: Callable[[], Awaitable[str | None]] = no_problem,
    ) -> None:
        self.store = store
        self.feed = feed
        # What keeps the process from using Redis (None: nothing), as its checks of Redis
        # find it: RedisWatch.away, server/edge/redis_watch.py.
        self.away = away
        self.watchers: set[Connection] = set()
        self.picture: LobbyPicture | None = None
        self._starting: asyncio.Task[LobbyPicture] | None = None
        self._handler: Callable[[bytes], None] | None = None  # the lobby channel's, when started
        self._flush: asyncio.TimerHandle | None = None
        self._last_flush = 0.0
        self._reader: asyncio.Task[None] | None = None
        self._read_now = asyncio.Event()

    async def handle(self, conn: Connection, msg: p.LobbyWatch | p.LobbyUnwatch) -> None:
        if isinstance(msg, p.LobbyUnwatch):
            await self.closed(conn)
            return
        if self._starting is None and (self.feed.problem() or await self.away()) is not None:
            # Pub/sub is down, or Redis does not answer (down, or frozen with the pub/sub
            # connection still open): the list could not be followed, and reading it would
            # wait for the reconnect or WATCH_WAIT. Said at once, as a `join` is.
            conn.send(p.error_for(msg, ErrorCode.UNAVAILABLE.value, "the lobby cannot be read now"))
            return
        self.watchers.add(conn)
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        starting = self._starting
        try:
            # Bounded: the socket's next messages wait behind this one (a frozen Redis
            # answers nothing, and the subscription alone may wait seconds more).
            picture = await asyncio.wait_for(asyncio.shield(starting), WATCH_WAIT)
        except asyncio.CancelledError:
            if not starting.cancelled():
                raise  # this handler itself was cancelled
            return  # every watcher left while the list was being read
        except Exception as exc:
            log.warning("lobby: reading the rooms failed: %s", exc or "no answer in time")
            self.watchers.discard(conn)
            conn.send(p.error_for(msg, ErrorCode.UNAVAILABLE.value, "the lobby cannot be read now"))
            if not self.watchers:
                await self._stop()
            return
        if conn in self.watchers:
            conn.send(picture.state())

    async def closed(self, conn: Connection) -> None:
        if conn not in self.watchers:
            return
        self.watchers.discard(conn)
        if not self.watchers:
            await self._stop()

    def reconnected(self) -> None:
        """Pub/sub was down: what it carried meanwhile is lost; read the rooms again."""
        self._read_now.set()

    async def _start(self) -> LobbyPicture:
        """Subscribe first, then read: no transition can fall between the two."""
        picture = LobbyPicture()
        handler = self._handler = partial(self._on_entry, picture)
        try:
            await self.feed.subscribe(LOBBY, handler)
            await self._read(picture)
        except BaseException:
            # Failed (Redis): undo it, so the next watcher starts again. Cancelled by a
            # stop: the stop undoes it, and a later start (a watcher who came meanwhile)
            # is no longer ours to touch.
            if self._starting is asyncio.current_task():
                self._starting = None
                with contextlib.suppress(Exception):
                    await self.feed.unsubscribe(LOBBY, handler)
            raise
        picture.changed.clear()  # the first watchers get it all in `lobby`
        self.picture = picture
        self._reader = asyncio.ensure_future(self._read_again(picture))
        return picture

    async def _stop(self) -> None:
        starting, self._starting, self.picture = self._starting, None, None
        handler = self._handler
        reader, self._reader = self._reader, None
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        for task in (starting, reader):
            if task is not None and not task.done():
                task.cancel()
                await asyncio.wait({task})
        # Not if a watcher came meanwhile and subscribed again (its handler replaced ours).
        if starting is not None and self._starting is None and handler is not None:
            with contextlib.suppress(Exception):
                await self.feed.unsubscribe(LOBBY, handler)

    async def _read(self, picture: LobbyPicture) -> None:
        began = picture.begin_reading()
        try:
            found = await live_rooms(self.store)
        except BaseException:
            picture.finish_reading(began, [(0, room) for room in picture.rooms.values()])
            raise
        picture.finish_reading(began, [(f.rev, f.race.lobby_view()) for f in found])
        self._changed(picture)

    async def _read_again(self, picture: LobbyPicture) -> None:
        failing = False
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._read_now.wait(), RECONCILE_EVERY)
            self._read_now.clear()
            try:
                await self._read(picture)
            except Exception as exc:
                if not failing:  # one line per outage
                    log.warning("lobby: reading the rooms failed: %s; retrying", exc)
                failing = True
            else:
                failing = False

    def _on_entry(self, picture: LobbyPicture, data: bytes) -> None:
        parsed = parse_lobby_entry(data)
        if parsed is not None:
            picture.update(*parsed)
            self._changed(picture)

    def _changed(self, picture: LobbyPicture) -> None:
        if not picture.changed or self._flush is not None or picture is not self.picture:
            return
        wait = max(0.0, self._last_flush + MIN_GAP - time.monotonic())
        self._flush = asyncio.get_running_loop().call_later(wait, self._send_changes)

    def _send_changes(self) -> None:
        self._flush = None
        picture = self.picture
        changes = picture.take_changes() if picture is not None else None
        if changes is None:
            return
        self._last_flush = time.monotonic()
        out = Outgoing(changes)  # framed once per format for every watcher
        for conn in self.watchers:
            conn.send(out)

    async def close(self) -> None:
        self.watchers.clear()
        await self._stop()
