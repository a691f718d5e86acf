"""Live standings over WebSocket: `tour_watch` / `tour_unwatch` in, `tournament` out.

Each process keeps the sockets that follow a tournament and subscribes to its channel
(`{tour:ID}:events`, one message per write, from any process). A change is not sent at
once: pushes are coalesced to at most one per `MIN_GAP` per tournament, each the state as
of then (versioned by the tournament's rev), so a field of 64 finishing at once costs a
few frames, not hundreds. Each socket gets its own page (`top` rows from `offset`) and
its own line (`you`) when it gave a player's token.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import protocol as p
from protocol import ErrorCode
from server.identity.accounts import anothers
from server.live.connection import Connection
from server.metrics import REDIS_DOWN, redis_error
from server.redis_io.outage import no_problem
from server.storage.feed import Feed
from server.storage.keys import TourKeys
from server.tournament.machine import Tournament
from server.tournament.model import TourError
from server.tournament.runner import player_of
from server.tournament.store import TourStore
from server.tournament.views import tour_view, you_view

__all__ = ["MAX_TOP", "MIN_GAP", "TourLive"]

log = logging.getLogger(__name__)

MIN_GAP = 0.25  # seconds between two pushes of one tournament: at most 4 a second
MAX_TOP = 200  # most standings rows in one push


@dataclass(slots=True)
class _Follow:
    tournament: str
    player: int | None
    top: int
    offset: int


class TourLive:
    def __init__(
        self,
        store: TourStore,
        feed: Feed,
        away: Callable[[], Awaitable[str | None]] = no_problem,
    ) -> None:
        self.store = store
        self.feed = feed
        # What keeps the process from using Redis (None: nothing): RedisWatch.away, as
        # for a `join` (server/handlers/service.py WAIT_FOR_REDIS).
        self.away = away
        self._follows: dict[Connection, _Follow] = {}
        self._by_tour: dict[str, set[Connection]] = {}
        self._last: dict[str, float] = {}  # when each tournament was last pushed
        self._pushed: dict[str, int] = {}  # the version each tournament was last pushed at
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._handlers: dict[str, Callable[[bytes], None]] = {}  # each followed one's

    async def handle(self, conn: Connection, msg: p.TourWatch | p.TourUnwatch) -> None:
        try:
            if isinstance(msg, p.TourUnwatch):
                await self.closed(conn)
            elif await self.away() is not None:
                # Said at once: reading the tournament would wait out the reply deadline,
                # and the socket's next messages behind it.
                conn.send(p.error_for(msg, ErrorCode.UNAVAILABLE.value, REDIS_DOWN))
            else:
                await self.watch(conn, msg)
        except TourError as err:
            conn.send(p.error_for(msg, err.code.value, err.message))
        except Exception as exc:
            if not redis_error(exc):
                raise
            # An outage, not a bug: the socket stays, and the client asks again later
            # (docs/protocol.md section 7, `unavailable`).
            log.warning("handling %s: Redis unavailable: %s", msg.TYPE, exc)
            conn.send(p.error_for(msg, ErrorCode.UNAVAILABLE.value, REDIS_DOWN))

    async def watch(self, conn: Connection, msg: p.TourWatch) -> None:
        if not 1 <= msg.top <= MAX_TOP or msg.offset < 0:
            raise TourError(ErrorCode.BAD_MESSAGE, f"top must be 1..{MAX_TOP}, offset from 0")
        tour, rev = await self.store.get(msg.tournament)
        player = None
        if msg.token is not None:
            player = player_of(tour, msg.token)
            if player is None:
                raise TourError(ErrorCode.BAD_TOKEN, "that token holds no place here")
            # As for a room's seat (Lobby.join): an identified socket acts for nobody else.
            if anothers(tour.player(player).account, conn.player):
                raise TourError(ErrorCode.NOT_YOUR_SEAT, "that registration is another player's")
        await self.closed(conn)
        follow = _Follow(tour.id, player, msg.top, msg.offset)
        self._follows[conn] = follow
        watchers = self._by_tour.setdefault(tour.id, set())
        watchers.add(conn)
        if len(watchers) == 1:
            handler = self._handlers[tour.id] = lambda _: self._changed(tour.id)
            await self.feed.subscribe(TourKeys(tour.id).channel, handler)
        # The state may have moved between the load and the subscription: read it again.
        tour, rev = await self.store.get(tour.id)
        conn.send(state_for(tour, rev, follow))

    def followers(self, tid: str) -> int:
        """How many of this process's sockets follow tournament `tid`."""
        return len(self._by_tour.get(tid, ()))

    async def closed(self, conn: Connection) -> None:
        follow = self._follows.pop(conn, None)
        if follow is None:
            return
        watchers = self._by_tour.get(follow.tournament, set())
        watchers.discard(conn)
        if not watchers:
            self._by_tour.pop(follow.tournament, None)
            self._pushed.pop(follow.tournament, None)
            self._last.pop(follow.tournament, None)
            handle = self._pending.pop(follow.tournament, None)
            if handle is not None:
                handle.cancel()
            handler = self._handlers.pop(follow.tournament, None)
            if handler is not None:
                await self.feed.unsubscribe(TourKeys(follow.tournament).channel, handler)

    def _changed(self, tid: str) -> None:
        if tid in self._pending or tid not in self._by_tour:
            return
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._last.get(tid, 0.0) + MIN_GAP - time.monotonic())
        self._pending[tid] = loop.call_later(wait, self._push_soon, tid)

    def _push_soon(self, tid: str) -> None:
        task = asyncio.get_running_loop().create_task(self._push(tid))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _push(self, tid: str) -> None:
        # No longer pending before the read: a change published while it is read (and
        # perhaps not in what it reads) gets a push of its own, MIN_GAP later.
        self._pending.pop(tid, None)
        self._last[tid] = time.monotonic()
        try:
            loaded = await self.store.load(tid)
        except Exception:
            log.exception("tournament %s: loading for a push failed", tid)
            loaded = None
        if loaded is None:
            return
        tour, rev = loaded
        if rev < self._pushed.get(tid, 0):
            return  # a later push, read after this one, went out first
        self._pushed[tid] = rev
        rows, view = tour.standings(), tour_view(tour)  # once per push, not per socket
        for conn in list(self._by_tour.get(tid, ())):
            follow = self._follows.get(conn)
            if follow is not None:
                conn.send(state_for(tour, rev, follow, rows, view))

    async def close(self) -> None:
        for handle in self._pending.values():
            handle.cancel()
        for task in list(self._tasks):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def state_for(
    tour: Tournament,
    rev: int,
    follow: _Follow,
    rows: list[p.Standing] | None = None,
    view: p.TourView | None = None,
) -> p.TourState:
    """One socket's `tournament` message; `rows` and `view` when already computed."""
    rows = tour.standings() if rows is None else rows
    return p.TourState(
        version=rev,
        tournament=tour_view(tour) if view is None else view,
        standings=rows[follow.offset : follow.offset + follow.top],
        offset=follow.offset,
        total=len(rows),
        you=None if follow.player is None else you_view(tour, follow.player, rows),
    )
