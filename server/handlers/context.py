"""What every handler of client messages shares: the store, the rooms, the metrics, and
how a socket's room and seat are found. A connection keeps identity and outbox only."""

from __future__ import annotations

from dataclasses import dataclass

import protocol as p
from protocol import ErrorCode
from server.live.connection import Connection
from server.live.hub import Hub, LocalRoom
from server.metrics import Metrics
from server.room.race import RaceError
from server.settings import Settings
from server.storage.store import RoomStore

__all__ = ["Context"]


@dataclass(slots=True)
class Context:
    settings: Settings
    store: RoomStore
    hub: Hub
    metrics: Metrics

    def local(self, conn: Connection) -> LocalRoom:
        """The room this socket is in (RaceError not_joined if none)."""
        local = self.hub.rooms.get(conn.room) if conn.room is not None else None
        if local is None:
            raise RaceError(ErrorCode.NOT_JOINED, "join or watch a room first")
        return local

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
