"""The daily deal's state in Redis: each day's deals (computed once, kept), every ranked
attempt of a day and game (player -> attempt), and each player's days.

Every process computes the same deals from the same secret (server/daily/rule.py is
deterministic); they are kept so that the solver runs once a day per game. The secret is
given: the operator's `--daily-secret`, else the one kept in the records
(`records.site_secrets`), so a wiped Redis changes no day's deals.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Awaitable, Callable
from typing import Any

import core
from server.daily.board import Attempt
from server.daily.rule import daily_seed, day_key
from server.redis_io.connect import AnyRedis

__all__ = ["RECENT_DAYS", "DailyStore"]

OPEN = "daily:open"  # attempts not yet over: "DATE GAME PLAYER"
# Days back whose deals are worked out when asked for and not kept: any date may be asked
# for, and each day worked out costs the solver's work and a key kept for good.
RECENT_DAYS = 30


def _deals(day: dt.date) -> str:
    return f"daily:deals:{day.isoformat()}"


def _attempts(day: dt.date, game: str) -> str:
    return f"daily:attempts:{day.isoformat()}:{game}"


def _days(player: str) -> str:
    return f"daily:days:{player}"


def _opening(day: dt.date, game: str, player: str) -> str:
    return f"daily:opening:{day.isoformat()}:{game}:{player}"


class DailyStore:
    def __init__(self, redis: AnyRedis, secret: bytes | Callable[[], Awaitable[bytes]]) -> None:
        """`secret`, or how to read it: the records' is read when first needed, since a
        process may start before the records can be reached."""
        self.redis: Any = redis
        self._secret = secret
        self._computing: dict[str, asyncio.Future[tuple[int, int]]] = {}

    async def key(self, day: dt.date) -> bytes:
        if not isinstance(self._secret, bytes):
            self._secret = await self._secret()
        return day_key(self._secret, day)

    async def deals(self, day: dt.date) -> dict[str, tuple[int, int]]:
        """Each game's deal of `day` and its candidate number (computed if not kept yet)."""
        stored = {
            k.decode(): v.decode() for k, v in (await self.redis.hgetall(_deals(day))).items()
        }
        found: dict[str, tuple[int, int]] = {}
        for game in core.GAMES:
            if game in stored:
                seed, n = stored[game].split()
                found[game] = (int(seed), int(n))
                continue
            found[game] = await self._compute(day, game)
            await self.redis.hsetnx(_deals(day), game, "{} {}".format(*found[game]))
        return found

    async def dealt(self, day: dt.date) -> bool:
        """Whether `day`'s deals are kept: the site dealt that day (or was asked for it)."""
        return bool(await self.redis.exists(_deals(day)))

    async def _compute(self, day: dt.date, game: str) -> tuple[int, int]:
        """The solver's work, off the event loop, once per day and game in this process."""
        name = f"{day.isoformat()} {game}"
        future = self._computing.get(name)
        if future is None:
            key = await self.key(day)
            future = asyncio.ensure_future(asyncio.to_thread(daily_seed, key, game))
            self._computing[name] = future
            future.add_done_callback(lambda _: self._computing.pop(name, None))
        return await asyncio.shield(future)

    # ------------------------------------------------------------ attempts

    async def claim(self, day: dt.date, game: str, attempt: Attempt) -> Attempt:
        """`attempt` as the player's ranked one, unless they have one already: that one."""
        key = _attempts(day, game)
        if await self.redis.hsetnx(key, attempt.player, json.dumps(attempt.to_dict())):
            await self.redis.sadd(OPEN, f"{day.isoformat()} {game} {attempt.player}")
            # Played that day: unless already won (another game's attempt), not yet won.
            await self.redis.hsetnx(_days(attempt.player), day.isoformat(), "0")
            return attempt
        existing = await self.attempt(day, game, attempt.player)
        assert existing is not None
        return existing

    async def take_turn(self, day: dt.date, game: str, player: str, seconds: float) -> bool:
        """Whether this request may open the player's attempt now (their other requests,
        on any process, wait for it): held for at most `seconds`, lest a process that dies
        while opening it hold it for ever."""
        key = _opening(day, game, player)
        return bool(await self.redis.set(key, "1", px=round(seconds * 1000), nx=True))

    async def end_turn(self, day: dt.date, game: str, player: str) -> None:
        await self.redis.delete(_opening(day, game, player))

    async def attempt(self, day: dt.date, game: str, player: str) -> Attempt | None:
        raw = await self.redis.hget(_attempts(day, game), player)
        return Attempt.from_dict(json.loads(raw)) if raw else None

    async def attempts(self, day: dt.date, game: str) -> list[Attempt]:
        raw = await self.redis.hgetall(_attempts(day, game))
        return [Attempt.from_dict(json.loads(v)) for v in raw.values()]

    async def finish(self, day: dt.date, game: str, attempt: Attempt) -> None:
        """The attempt is over: its result is kept, and the player's day marked."""
        await self.redis.hset(_attempts(day, game), attempt.player, json.dumps(attempt.to_dict()))
        if attempt.won:
            await self.redis.hset(_days(attempt.player), day.isoformat(), "1")
        await self.redis.srem(OPEN, f"{day.isoformat()} {game} {attempt.player}")

    async def open_attempts(self) -> list[tuple[dt.date, str, str]]:
        found = []
        for raw in await self.redis.smembers(OPEN):
            day, game, player = raw.decode().split(" ")
            found.append((dt.date.fromisoformat(day), game, player))
        return found

    async def days(self, player: str) -> dict[dt.date, bool]:
        raw = await self.redis.hgetall(_days(player))
        return {dt.date.fromisoformat(k.decode()): v == b"1" for k, v in raw.items()}
