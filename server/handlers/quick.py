"""Quick match: pair two sockets asking for the same game, in any processes, and seat
them in a new room that counts down at once."""

from __future__ import annotations

import contextlib
import time
import uuid

import msgpack

import core
import protocol as p
from protocol import ErrorCode
from server.handlers.context import Context
from server.handlers.lobby import Lobby
from server.live.connection import Connection
from server.room.ids import clean_name, new_room_id, new_token, random_seed
from server.room.race import Outcome, Race, RaceError, RoomConfig
from server.storage.keys import ticket_channel
from server.storage.store import UNAVAILABLE_ERRORS, hash_token

__all__ = ["QuickMatch"]


class QuickMatch:
    def __init__(self, ctx: Context, lobby: Lobby) -> None:
        self.ctx = ctx
        self.lobby = lobby

    async def on_quick(self, conn: Connection, msg: p.QuickMatch) -> None:
        if conn.room is not None or conn.quick is not None:
            raise RaceError(ErrorCode.ALREADY_JOINED, "this socket is already in a room")
        if msg.game not in core.GAMES:
            raise RaceError(ErrorCode.BAD_GAME, f"no game {msg.game[:40]!r}")
        name = clean_name(msg.name)
        ticket = f"{uuid.uuid4().hex}|{name}"
        conn.quick = (msg.game, ticket)
        hub = self.ctx.hub
        try:
            await hub.feed.subscribe(
                ticket_channel(ticket), lambda data: hub.spawn(self._matched(conn, data))
            )
            other = await self.ctx.store.quick_pair(msg.game, ticket)
        except BaseException:
            # Answered `unavailable` (or failed): nothing changed, the socket may ask
            # again; the ticket goes, as far as storage lets it.
            with contextlib.suppress(*UNAVAILABLE_ERRORS):
                await self.drop_ticket(conn)
            raise
        # Every quick is answered queued, then matched, even when a partner was waiting:
        # a client then has one sequence to follow, not two (docs/protocol.md section 4).
        conn.send(p.Queued(game=msg.game))
        if other is None:
            return
        await self.drop_ticket(conn, requeue=False)
        other_name = other.partition("|")[2]
        room, tokens = await self.create_room(msg.game, [other_name, name])
        await self.ctx.store.tell_ticket(other, {"room": room, "seat": 0, "token": tokens[0]})
        conn.send(p.Matched(room=room, seat=1, token=tokens[1]))
        await self.lobby.join(conn, room, name, tokens[1], None, seated=True)

    async def _matched(self, conn: Connection, data: bytes) -> None:
        if conn.quick is None or conn.closing:
            return
        info = msgpack.unpackb(data)
        await self.drop_ticket(conn, requeue=False)
        conn.send(p.Matched(room=info["room"], seat=info["seat"], token=info["token"]))
        try:
            await self.lobby.join(conn, info["room"], "", info["token"], None, seated=True)
        except RaceError as err:
            self.ctx.error(conn, err.code, err.message)

    async def drop_ticket(self, conn: Connection, requeue: bool = True) -> None:
        if conn.quick is None:
            return
        game, ticket = conn.quick
        conn.quick = None
        await self.ctx.hub.feed.unsubscribe(ticket_channel(ticket))
        if requeue:
            await self.ctx.store.quick_cancel(game, ticket)

    async def on_quick_cancel(self, conn: Connection, msg: p.QuickCancel) -> None:
        await self.drop_ticket(conn)

    async def create_room(self, game: str, names: list[str]) -> tuple[str, list[str]]:
        """A head-to-head room with both seats taken and ready: it counts down at once."""
        now = time.time()
        settings = self.ctx.settings
        config = RoomConfig(
            game=game,
            seats=len(names),
            grace=settings.grace,
            countdown=settings.countdown,
            hidden=core.game_class(game).has_talon,
        )
        race = Race(room=new_room_id(), config=config, seed=random_seed(), created_at=now)
        await self.ctx.store.create(race)
        self.ctx.metrics.rooms_created.inc()
        tokens = [new_token() for _ in names]

        def seat_everyone(race: Race) -> Outcome:
            out = Outcome()
            for name, token in zip(names, tokens, strict=True):
                _, joined = race.join(name, hash_token(token), now)
                out.events += joined.events
            for seat in list(race.seats):
                out.events += race.set_ready(seat, True, now).events
            return out

        await self.ctx.store.transact(race.room, seat_everyone, now)
        return race.room, tokens
