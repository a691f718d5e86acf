"""Where every client message goes: one table from message type to the part that answers
it. The race service answers rooms, seats, moves, hints and quick match (and turns its
refusals and outages into error replies); the live lobby answers `lobby_watch`; the
tournaments' live standings answer `tour_watch`. A socket that closes is told to each of
them, the lobby first (it needs no Redis), the tournaments even when the race service
could not write the close (Redis away)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import protocol as p
from server.handlers.service import RaceService
from server.live.connection import Connection
from server.live.lobby_live import LobbyLive
from server.tournament.live import TourLive

__all__ = ["Dispatcher"]

Route = Callable[[Connection, Any], Awaitable[None]]


class Dispatcher:
    def __init__(self, service: RaceService, lobby: LobbyLive, tours: TourLive) -> None:
        self.service, self.lobby, self.tours = service, lobby, tours
        self.routes: dict[type[p.Message], Route] = {
            kind: service.handle for kind in service.answers
        } | {
            p.LobbyWatch: lobby.handle,
            p.LobbyUnwatch: lobby.handle,
            p.TourWatch: tours.handle,
            p.TourUnwatch: tours.handle,
        }

    async def handle(self, conn: Connection, message: p.Message | p.Unexpected) -> None:
        """Answer one decoded message (or say why it could not be decoded)."""
        if conn.seating is not None:
            await asyncio.shield(conn.seating)  # `matched` was sent: seated first
        if isinstance(message, p.Unexpected):
            self.service.error(conn, message.code, message.message, message)
            return
        await self.routes[type(message)](conn, message)

    def now(self, conn: Connection, message: p.Move | p.Undo) -> bool:
        """Judge a move as its frame is read, if it can be (server/edge/move_lane.py)."""
        return self.service.moves.now(conn, message)

    async def closed(self, conn: Connection) -> None:
        """The socket is gone: what each part kept for it."""
        await self.lobby.closed(conn)  # first: it needs no Redis
        try:
            await self.service.closed(conn)  # may fail in an outage (the reaper follows up)
        finally:
            await self.tours.closed(conn)  # needs no Redis either: forgotten whatever failed
