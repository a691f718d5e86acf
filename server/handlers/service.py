"""What the server does with each client message: one handler per message type, split by
concern (server/handlers/lobby.py: seats, watching and a seat's actions; server/handlers/moves.py:
moves;
server/handlers/hints.py: hints; server/handlers/quick.py: quick match). Replies go through
`Connection.send`, which never waits; room-wide effects go through the store, whose events
come back to every process by pub/sub (server/live/hub.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from sqlalchemy.exc import DBAPIError

import protocol as p
from protocol import ErrorCode
from server.handlers.context import Context
from server.handlers.hints import Hints
from server.handlers.identity import Identify
from server.handlers.lobby import Lobby
from server.handlers.moves import Moves
from server.handlers.quick import QuickMatch
from server.identity.accounts import Accounts
from server.live.connection import Connection
from server.live.hub import Hub
from server.metrics import RECORDS_DOWN, REDIS_DOWN, Metrics, redis_error
from server.redis_io.outage import no_problem
from server.room.race import RaceError
from server.settings import Settings
from server.storage.store import RoomStore

__all__ = ["RaceService"]

log = logging.getLogger(__name__)

# Requests whose answer waits for Redis: while this process's check of Redis fails, they
# are answered `unavailable` at once. Otherwise each would wait for its calls to run out
# their reply deadlines one after another (a `join` up to 12 s), saying nothing. Not a `move`
# or `undo`: refused by its seq after at most one deadline (the move path's own call),
# as the protocol promises. Not `ping`, `identify` (the records' database), `hint` or
# `legal` (the seat's board, here). `lobby_watch` and `tour_watch` ask the same way where
# they are answered (LobbyLive, TourLive).
WAIT_FOR_REDIS: frozenset[type[p.Message]] = frozenset(
    {
        p.Join,
        p.Watch,
        p.QuickMatch,
        p.QuickCancel,
        p.Ready,
        p.Start,
        p.Resign,
        p.Rematch,
        p.Leave,
        p.Resync,
    }
)


class RaceService:
    def __init__(
        self,
        settings: Settings,
        store: RoomStore,
        hub: Hub,
        metrics: Metrics,
        accounts: Accounts | None = None,
        away: Callable[[], Awaitable[str | None]] = no_problem,
    ) -> None:
        self.ctx = ctx = Context(settings, store, hub, metrics, accounts, away=away)
        self.hub = hub
        self.store = store
        self.lobby = Lobby(ctx)
        self.moves = Moves(ctx)
        self.hints = Hints(ctx)
        self.quick = QuickMatch(ctx, self.lobby)
        self.identify = Identify(ctx)
        self._handlers: dict[type[p.Message], Callable[[Connection, Any], Any]] = {
            p.Identify: self.identify.on_identify,
            p.Join: self.lobby.on_join,
            p.Watch: self.lobby.on_watch,
            p.Move: self.moves.on_move,
            p.Undo: self.moves.on_move,
            p.Hint: self.hints.on_hint,
            p.Legal: self.hints.on_legal,
            p.Ready: self.lobby.on_ready,
            p.Start: self.lobby.on_start,
            p.Resign: self.lobby.on_resign,
            p.Rematch: self.lobby.on_rematch,
            p.Leave: self.lobby.on_leave,
            p.QuickMatch: self.quick.on_quick,
            p.QuickCancel: self.quick.on_quick_cancel,
            p.Ping: self.on_ping,
            p.Resync: self.lobby.on_resync,
        }

    @property
    def answers(self) -> frozenset[type[p.Message]]:
        """The client messages this service answers (the others: server/edge/dispatch.py)."""
        return frozenset(self._handlers)

    async def handle(self, conn: Connection, message: p.Message) -> None:
        if type(message) in WAIT_FOR_REDIS and (problem := await self.ctx.away()) is not None:
            log.warning("handling %s: Redis unavailable: %s", message.TYPE, problem)
            self.error(conn, ErrorCode.UNAVAILABLE, REDIS_DOWN, message)
            return
        try:
            await self._handlers[type(message)](conn, message)
        except RaceError as err:
            self.error(conn, err.code, err.message, message)
        except DBAPIError as exc:  # the records' database: down, or too busy
            self.ctx.metrics.failed(exc)
            log.warning("handling %s: the records database failed: %s", message.TYPE, exc.orig)
            self.error(conn, ErrorCode.UNAVAILABLE, RECORDS_DOWN, message)
        except Exception as exc:
            self.ctx.metrics.failed(exc)
            if redis_error(exc):
                # An outage, not a bug: one line, no traceback.
                log.warning("handling %s: Redis unavailable: %s", message.TYPE, exc)
                self.error(conn, ErrorCode.UNAVAILABLE, REDIS_DOWN, message)
                return
            log.exception("handling %s failed", message.TYPE)
            self.error(conn, ErrorCode.INTERNAL, "the server failed on that message", message)

    def error(
        self,
        conn: Connection,
        code: ErrorCode,
        message: str,
        request: p.Message | p.Unexpected | None = None,
    ) -> None:
        self.ctx.error(conn, code, message, request)

    def refuse(self, conn: Connection, seq: int, code: ErrorCode, reason: str) -> None:
        self.ctx.refuse(conn, seq, code, reason)

    async def closed(self, conn: Connection) -> None:
        """The socket is gone: its quick-match ticket, its seat's presence, its room."""
        if conn.quick is not None:
            await self.quick.drop_ticket(conn)
        await self.lobby.left(conn)

    async def on_ping(self, conn: Connection, msg: p.Ping) -> None:
        conn.send(p.Pong(id=msg.id, server_time=time.time()))
