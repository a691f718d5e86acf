"""Where tournaments live: Redis, under their own keys (Cluster hash tag `{tour:ID}`,
named in server/storage/keys.py with the race server's). `TourStore` is the only way the
tournament code reaches them (the live standings hear of writes through the pub/sub feed,
server/storage/feed.py, as rooms do).

A write is a compare-and-set on `rev` (one Lua script), so a transition (a round that
begins, a heat's results) happens once whichever process sees its time first. The
deadline is stored before the write: a crash between the two leaves one harmless extra
sweep, never a tournament that nobody looks at again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol import ErrorCode
from server.redis_io.batcher import LuaScript, ScriptBatcher
from server.redis_io.connect import AnyRedis
from server.storage.keyed_locks import KeyedLocks
from server.storage.keys import TOUR_DEADLINES, TOURS, TourKeys
from server.storage.store import UNSCHEDULE, step_aside
from server.tournament.machine import Tournament
from server.tournament.model import TourError

__all__ = ["TourStore", "Written"]

KEEP = 30 * 86400.0  # seconds a tournament is kept after its last change

# The compare-and-set of a tournament's state: a Redis Function, as every script of ours.
CAS = LuaScript(
    "tour_cas",
    """
local rev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '0')
if rev ~= tonumber(ARGV[1]) then return {'conflict', rev} end
rev = rev + 1
redis.call('HSET', KEYS[1], 'rev', rev, 'state', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PUBLISH', ARGV[3], rev)
return {'ok', rev}
""",
)


@dataclass(slots=True)
class Written:
    tour: Tournament
    rev: int
    changed: bool


# Tournament ids kept in the index `GET /tournaments` lists the newest 100 of: enough to
# list them whatever expires, and bounded (a tournament's own keys expire; its id would stay).
INDEXED = 1000


class TourStore:
    def __init__(self, redis: AnyRedis, batcher: ScriptBatcher, indexed: int = INDEXED) -> None:
        self.redis: Any = redis
        self.batcher = batcher
        self.indexed = indexed
        # One writer at a time per tournament in this process: a crowd of requests at once
        # (64 registrations) would otherwise race each other through the compare-and-set
        # and run out of retries. Between processes the retries, spread by a random wait,
        # settle it.
        self._turns = KeyedLocks()

    async def create(self, tour: Tournament) -> None:
        written = await self._write(tour, 0)
        if written is None:
            raise TourError(ErrorCode.INTERNAL, "a tournament with that id exists")
        await self.redis.zadd(TOURS, {tour.id: tour.created_at})
        await self.redis.zremrangebyrank(TOURS, 0, -self.indexed - 1)  # the oldest beyond

    async def load(self, tid: str) -> tuple[Tournament, int] | None:
        raw = await self.redis.hmget(TourKeys(tid).state, "state", "rev")
        if raw[0] is None:
            return None
        return Tournament.from_dict(json.loads(raw[0])), int(raw[1] or 0)

    async def get(self, tid: str) -> tuple[Tournament, int]:
        """The tournament an id names, in whatever case it was typed (ids are lower case)."""
        tid = tid.lower()
        loaded = await self.load(tid) if _valid_id(tid) else None
        if loaded is None:
            raise TourError(ErrorCode.UNKNOWN_TOURNAMENT, f"no tournament {tid[:40]!r}")
        return loaded

    async def transact(self, tid: str, action: Callable[[Tournament], Any]) -> Written:
        """Load, apply `action` (pure; may raise TourError), write if it returned a true
        value and nobody wrote first (else load again and retry)."""
        tid = tid.lower()
        async with self._turns.hold(tid):
            return await self._transact(tid, action)

    async def _transact(self, tid: str, action: Callable[[Tournament], Any]) -> Written:
        for attempt in range(50):
            tour, rev = await self.get(tid)
            if not action(tour):
                return Written(tour, rev, False)
            new_rev = await self._write(tour, rev)
            if new_rev is not None:
                return Written(tour, new_rev, True)
            # Another process wrote first: step aside a little longer each time.
            await step_aside(attempt + 1, 0.002)
        raise TourError(ErrorCode.UNAVAILABLE, "the tournament is too busy, try again")

    async def _write(self, tour: Tournament, rev: int) -> int | None:
        deadline = tour.next_deadline()
        if deadline is not None or tour.live_heats():
            await self.schedule(tour.id, deadline if deadline is not None else 0.0)
        keys = TourKeys(tour.id)
        result = await self.batcher.call(
            CAS,
            (keys.state, keys.replays),
            (
                rev,
                json.dumps(tour.to_dict(), separators=(",", ":")),
                keys.channel,
                round(KEEP * 1000),
            ),
        )
        return int(result[1]) if result[0] == b"ok" else None

    # ------------------------------------------------------------ the sweep

    async def schedule(self, tid: str, at: float) -> None:
        """Look at `tid` again at `at` (replacing the time set before)."""
        await self.redis.zadd(TOUR_DEADLINES, {tid: at})

    async def due(self, now: float, limit: int = 100) -> list[tuple[str, float]]:
        raw = await self.redis.zrangebyscore(
            TOUR_DEADLINES, 0, now, start=0, num=limit, withscores=True
        )
        return [(tid.decode(), score) for tid, score in raw]

    async def unschedule(self, tid: str, score: float) -> None:
        await self.batcher.call(UNSCHEDULE, (TOUR_DEADLINES,), (tid, repr(score)))

    async def claim(self, tid: str, owner: str, seconds: float) -> bool:
        """A short lease: one process advances a tournament at a time (the writes are
        compare-and-set anyway; this only saves the others the work)."""
        got = await self.redis.set(TourKeys(tid).lock, owner, px=round(seconds * 1000), nx=True)
        return bool(got)

    async def release(self, tid: str, owner: str) -> None:
        key = TourKeys(tid).lock
        if (await self.redis.get(key)) == owner.encode():
            await self.redis.delete(key)

    # ------------------------------------------------------------ replays and listing

    async def save_replay(self, tid: str, heat: int, text: str) -> None:
        await self.redis.hsetnx(TourKeys(tid).replays, str(heat), text)

    async def replay(self, tid: str, heat: int) -> str | None:
        raw = await self.redis.hget(TourKeys(tid).replays, str(heat))
        return None if raw is None else raw.decode()

    async def replays(self, tid: str) -> dict[int, str]:
        raw = await self.redis.hgetall(TourKeys(tid).replays)
        return {int(k): v.decode() for k, v in raw.items()}

    async def ids(self, limit: int = 100) -> list[str]:
        return [t.decode() for t in await self.redis.zrevrange(TOURS, 0, limit - 1)]


def _valid_id(tid: str) -> bool:
    return 0 < len(tid) <= 32 and tid.isascii() and tid.isalnum()
