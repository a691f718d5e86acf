"""What every handler of client messages shares: the store, the rooms, the metrics, and
how a socket's room and seat are found. A connection keeps identity and outbox only."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import protocol as p
from protocol import ErrorCode
from records.players import Player
from server.identity.accounts import Accounts, IdentityError
from server.live.connection import Connection
from server.live.hub import Hub, LocalRoom
from server.metrics import Metrics
from server.redis_io.outage import no_problem
from server.room.race import RaceError
from server.settings import Settings
from server.storage.store import RoomStore

__all__ = ["UNIDENTIFIED", "Context"]

UNIDENTIFIED = (
    "this socket's identify could not be checked (the server could not reach its storage):"
    " nothing changed, identify again"
)


@dataclass(slots=True)
class Context:
    settings: Settings
    store: RoomStore
    hub: Hub
    metrics: Metrics
    accounts: Accounts | None = None  # players' identity (records); None: sockets are anonymous
    # Whether a daily deal's line (its "DATE GAME") may be seen by a player (by id, None:
    # anonymous): server/edge/daily_routes.py's rule, the one its replays follow, for
    # watching a room on the deal or taking its seat. Unset (no daily deal served): never.
    daily_open: Callable[[str, str | None], Awaitable[bool]] | None = None
    # Whether a tournament's finished race (its tournament, its room) may be watched from
    # its first move: once no other heat races its deal (TourRunner.line_open, the rule
    # its replays follow). Unset (no tournaments served): always.
    heat_open: Callable[[str, str], Awaitable[bool]] | None = None
    # What keeps this process from using Redis now (None: nothing, or no check runs):
    # RedisWatch.away, server/edge/redis_watch.py. Requests that would wait for Redis are
    # then answered `unavailable` at once (RaceService.handle).
    away: Callable[[], Awaitable[str | None]] = no_problem

    def local(self, conn: Connection) -> LocalRoom:
        """The room this socket is in (RaceError not_joined if none)."""
        local = self.hub.rooms.get(conn.room) if conn.room is not None else None
        if local is None:
            raise RaceError(ErrorCode.NOT_JOINED, "join or watch a room first")
        return local

    async def whose(self, conn: Connection, *, holding: bool = False) -> Player | None:
        """The player this socket acts as (`identify`), as the records have it now (a
        name changed since is the new one); None for an anonymous socket. RaceError
        bad_key once the key it identified with was signed out (on any process);
        unavailable while its latest `identify` could not be checked (an outage), unless
        the request comes back to a seat by its token (`holding`): the token is proof
        enough, and a racer must take their seat back during an outage of the records
        (the socket is then as it was before that `identify`)."""
        if conn.unidentified and not holding:
            raise RaceError(ErrorCode.UNAVAILABLE, UNIDENTIFIED)
        if conn.player is None or conn.key_hash is None or self.accounts is None:
            return None
        try:
            player = await self.accounts.who_by_hash(conn.key_hash, time.time())
        except IdentityError:
            raise RaceError(
                ErrorCode.BAD_KEY,
                "the key this socket identified with was signed out: identify again",
            ) from None
        return player

    async def players_name(self, name: str) -> bool:
        """Whether `name` (as a seat would show it) is a player's name now, in any case:
        an anonymous seat typing it shows it numbered (`ann 2`), so that nobody passes
        for that player."""
        if self.accounts is None:
            return False
        return await self.accounts.someones_name(name.strip()[:32])

    async def names_now(self, player_ids: list[str]) -> dict[str, str]:
        """The names these players have now, those the records answer for in time."""
        if self.accounts is None or not player_ids:
            return {}
        return await self.accounts.names_now(player_ids)

    async def rating(self, player: Player | None, game: str) -> int | None:
        """The player's rating in `game` (the displayed number), if they have one; bots
        and anonymous sockets have none."""
        if player is None or player.bot or self.accounts is None:
            return None
        return await self.accounts.rating(player.id, game)

    async def best_run(self, player: Player | None, game: str) -> dict[str, Any] | None:
        """The player's personal best in `game` (their seat's `welcome.best`); bots and
        anonymous sockets have none."""
        if player is None or player.bot or self.accounts is None:
            return None
        return await self.accounts.best_run(player.id, game)

    def player(self, conn: Connection) -> tuple[LocalRoom, int]:
        """The room and seat of a player socket (RaceError for a spectator)."""
        local = self.local(conn)
        if conn.seat is None:
            raise RaceError(ErrorCode.NOT_PLAYER, "spectators cannot do that")
        return local, conn.seat

    def error(
        self,
        conn: Connection,
        code: ErrorCode,
        message: str,
        request: p.Message | p.Unexpected | None = None,
    ) -> None:
        """Send an `error` naming `request` (its type, and its seq or id) when given."""
        self.metrics.errors.inc(code.value)
        conn.send(p.error_for(request, code.value, message))

    def refuse(self, conn: Connection, seq: int, code: ErrorCode, reason: str) -> None:
        """Answer move `seq` with `refused`: nothing changed."""
        self.metrics.moves_refused.inc(code.value)
        conn.send(p.Refused(seq=seq, code=code.value, reason=reason))
