"""Finished races into the archive (records/archive.py), exactly once, by every process.

The transition that ends a race keeps it whole in Redis in the same script (the outbox:
`RoomStore.ended`, the race and its seats' moves) and lists its room (`RoomStore.outbox`).
Every process drains the list: it takes a room's lease, archives each kept race (its one
replay, the same text `/rooms/{room}/replay` serves), and forgets it only once the database
has committed. A process killed at any point loses nothing: the kept race stays until an
archive has committed, and the lease lapses for another process to take. Two processes
archiving one race write it once: the archive's insert on the race id decides.

Why a hash per room and a listing rather than one Redis stream with a consumer group: on a
Redis Cluster a script touches keys of one slot only, and the race's end must be kept in
the very script that ends it; the room's own slot (`{room:ID}:ended`) is the one place that
can be. The global listing is written just before and just after that script, and an entry
the drain finds empty is dropped only once it is `STALE`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from aiohttp import web
from sqlalchemy.exc import InterfaceError, OperationalError

from records.archive import RaceArchive
from server.edge.app_keys import ARCHIVE, METRICS, PROCESS, RECORDS_DB, SETTINGS, STORE
from server.edge.periodic import Periodic
from server.edge.routes import race_replay
from server.metrics import Metrics, redis_error
from server.room.archived import archived_race
from server.storage.store import RoomStore
from server.tournament.rooms import RaceRecord, record_of

__all__ = [
    "ARCHIVE_EVERY",
    "RETRY",
    "STALE",
    "Archiver",
    "archive_away",
    "archiving_ctx",
    "outage",
]

log = logging.getLogger(__name__)

ARCHIVE_EVERY = 1.0  # seconds between looks at the outbox
# Seconds after which an outbox entry with nothing kept is dropped: a transition listed it
# and then lost its compare-and-set, or died before writing (a kept race is never dropped).
STALE = 120.0
# Seconds before a room whose race could not be archived for a reason other than an outage
# (a bug: its moves do not replay, the database refuses a row) is tried again; its race is
# kept meanwhile, and the other rooms go on being archived.
RETRY = 600.0
BATCH = 100  # rooms looked at per drain


class Archiver:
    def __init__(
        self,
        store: RoomStore,
        archive: RaceArchive,
        replay_of: Callable[[RaceRecord], Awaitable[str]],
        owner: str,
        metrics: Metrics,
        lease: float = 30.0,
    ) -> None:
        self.store, self.archive, self.replay_of = store, archive, replay_of
        self.owner, self.metrics, self.lease = owner, metrics, lease

    async def drain(self, now: float) -> int:
        """Archive what the outbox holds; how many races this call wrote. An outage
        (Redis, the database) stops the drain, to be tried again at the next; any other
        failure sets that room aside for `RETRY` seconds, logged, and the drain goes on."""
        written = 0
        for room, score in await self.store.outbox(now, BATCH):
            if not await self.store.claim_ended(room, self.owner, self.lease):
                continue  # another process is at it
            try:
                written += await self._room(room, score, now)
            except Exception as exc:
                if outage(exc):
                    raise
                log.exception("room %s: its finished race could not be archived", room)
                self.metrics.races_archived.inc("failed")
                await self.store.outbox_later(room, now + RETRY)
            finally:
                await self.store.release_ended(room, self.owner)
        return written

    async def _room(self, room: str, score: float, now: float) -> int:
        kept = await self.store.ended(room)
        if not kept and now - score < STALE:
            return 0  # listed by a transition whose write may not have landed yet
        written = 0
        for ended in kept:
            record = record_of(ended.race, ended.moves)
            if record is None:  # kept only when finished: a damaged entry
                log.error("room %s round %d kept unfinished; dropped", room, ended.race.round)
            else:
                replay = await self.replay_of(record)
                race = archived_race(ended.race, ended.moves, replay)
                if await self.archive.archive(race):
                    written += 1
                    self.metrics.races_archived.inc("archived")
                else:
                    self.metrics.races_archived.inc("already")
            await self.store.forget_ended(room, ended)  # only once the archive committed
        await self.store.outbox_done(room, score)
        return written


def outage(error: BaseException) -> bool:
    """Whether `error` says Redis or the database cannot be reached now (try again soon)
    rather than that this race cannot be archived (a bug, to be looked at)."""
    return archive_away(error) is not None


def archive_away(error: BaseException) -> str | None:
    """What `error` says the archive cannot reach now: Redis, or the records' database
    (PostgreSQL down, SQLite locked by another writer); None: not an outage."""
    if redis_error(error):
        return "Redis"
    if isinstance(error, OperationalError | InterfaceError):
        return "the records' database"
    return None


async def archiving_ctx(app: web.Application) -> AsyncIterator[None]:
    archive = RaceArchive(app[RECORDS_DB])
    app[ARCHIVE] = archive

    async def replay_of(record: RaceRecord) -> str:
        return await race_replay(app, record)

    archiver = Archiver(
        app[STORE], archive, replay_of, app[PROCESS], app[METRICS], app[SETTINGS].archive_lease
    )
    drain = Periodic(
        "solrace-archive",
        lambda: archiver.drain(time.time()),
        ARCHIVE_EVERY,
        what="archive of finished races",
        log=log,
        metrics=app[METRICS],
        away=archive_away,
    )
    drain.start()
    yield
    await drain.stop(timeout=5.0)
