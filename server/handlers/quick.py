"""Quick match: pair two sockets asking for the same game, in any processes, and seat
them in a new room that counts down at once."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any

import msgpack

import core
import protocol as p
from protocol import ErrorCode
from server.handlers.context import Context
from server.handlers.lobby import Lobby
from server.live.connection import Connection, process_of
from server.room.ids import clean_name, new_room_id, new_token, random_seed
from server.room.matching import Ticket
from server.room.race import Outcome, Race, RaceError, RoomConfig, Status
from server.storage.keys import ticket_channel
from server.storage.store import TOLD_TTL, UNAVAILABLE_ERRORS, hash_token

__all__ = ["QuickMatch"]

log = logging.getLogger(__name__)


def _closed(conn: Connection) -> bool:
    """Whether the socket's clean-up has begun: a call, read anew after an await (a checked
    attribute stays narrowed for the type checker across awaits)."""
    return conn.closing


class QuickMatch:
    def __init__(self, ctx: Context, lobby: Lobby) -> None:
        self.ctx = ctx
        self.lobby = lobby
        # ticket -> its socket and its channel's handler
        self._waiting: dict[str, tuple[Connection, Callable[[bytes], None]]] = {}
        # ticket -> its game: tickets given up (their socket closed, or their `quick`
        # failed) whose place in the queue could not be taken away (Redis away). Taken
        # once Redis answers, or the next player asking would be paired with nobody.
        self._left: dict[str, str] = {}

    async def on_quick(self, conn: Connection, msg: p.QuickMatch) -> None:
        if conn.room is not None or conn.quick is not None:
            raise RaceError(ErrorCode.ALREADY_JOINED, "this socket is already in a room")
        if msg.game not in core.GAMES:
            raise RaceError(ErrorCode.BAD_GAME, f"no game {msg.game[:40]!r}")
        player = await self.ctx.whose(conn)
        if player is not None and await self._back_to_seat(conn, player.id, msg.game):
            return
        now = time.time()
        me = Ticket(
            id=f"{process_of(conn.id)}-{uuid.uuid4().hex}",
            name=player.name if player is not None else clean_name(msg.name),
            at=now,
            player=player.id if player is not None else None,
            bot=player is not None and player.bot,
            rating=await self.ctx.rating(player, msg.game),
        )
        ticket = me.encode()
        conn.quick = (msg.game, ticket)
        hub = self.ctx.hub

        def handler(data: bytes) -> None:
            hub.spawn(self._matched(conn, data))

        try:
            self._waiting[ticket] = (conn, handler)
            await hub.feed.subscribe(ticket_channel(ticket), handler)
            other = await self.ctx.store.quick_pair(msg.game, ticket, now)
            while other is not None and not await self._still_waiting(conn, other):
                other = await self.ctx.store.quick_pair(msg.game, ticket, now)
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
        store = self.ctx.store
        try:
            room, tokens = await self.create_room(msg.game, [Ticket.decode(other), me])
        except BaseException:
            # The partner's ticket is out of the queue and no room seats it: it goes back,
            # first in line, or its player would wait for good (this one asks again).
            hub.spawn(self._until_stored(lambda: store.quick_requeue(msg.game, other)))
            raise
        pairing = {"room": room, "seat": 0, "token": tokens[0]}
        for seat, ticket_of in enumerate((Ticket.decode(other), me)):
            if ticket_of.player is None:
                continue
            # Each player's seat is kept for `_back_to_seat`, before anyone is told of it.
            kept = {"room": room, "seat": seat, "token": tokens[seat], "game": msg.game}
            keep = partial(store.keep_quick_seat, ticket_of.player, kept)
            try:
                await keep()
            except UNAVAILABLE_ERRORS:
                hub.spawn(self._until_stored(keep))
        try:
            await store.tell_ticket(other, pairing)
        except UNAVAILABLE_ERRORS:
            # Seated, and not told yet: told once Redis answers, or the partner would
            # forfeit a race they never heard of.
            hub.spawn(self._until_stored(lambda: store.tell_ticket(other, pairing)))
        conn.send(p.Matched(room=room, seat=1, token=tokens[1]))
        await self.lobby.join(conn, room, me.name, tokens[1], None, seated=True)

    async def _back_to_seat(self, conn: Connection, player: str, game: str) -> bool:
        """Send the player back to the seat their latest quick match in `game` gave them,
        if that race is still on and the seat away, and say so (queued, then matched) as
        any pairing is: a player paired as their process died never heard of it, and
        would forfeit it for an outage while queued for another. False: no such seat."""
        kept = await self.ctx.store.quick_seat(player)
        if kept is None or kept.get("game") != game:
            return False
        loaded = await self.ctx.store.load(kept["room"])
        race = loaded.race if loaded is not None else None
        seat = race.seats.get(kept["seat"]) if race is not None else None
        if (
            race is None
            or seat is None
            or race.status not in (Status.COUNTDOWN, Status.RUNNING)
            or seat.player != player
            or seat.connected
            or seat.out is not None
            or seat.done_at is not None
        ):
            return False
        conn.send(p.Queued(game=game))
        conn.send(p.Matched(room=kept["room"], seat=kept["seat"], token=kept["token"]))
        await self.lobby.join(conn, kept["room"], "", kept["token"], None, seated=True)
        return True

    async def _still_waiting(self, conn: Connection, other: str) -> bool:
        """Whether the socket of ticket `other`, just taken off the queue, may still be
        waiting: its process (the ticket's id begins with it) has not died. A process
        killed takes its sockets with it, and its tickets would pair players with
        nobody; such a ticket is left out of the queue for good."""
        process, dash, _ = Ticket.decode(other).id.partition("-")
        if not dash or process == process_of(conn.id):  # a ticket of an older version
            return True
        if await self.ctx.store.process_alive(process):
            return True
        log.info("quick match: a ticket of process %s, which is gone, was dropped", process)
        return False

    async def _until_stored(self, write: Callable[[], Awaitable[None]]) -> None:
        """`write`, tried again while Redis does not answer (for as long as a pairing is
        kept, TOLD_TTL)."""
        waited = 0.0
        for pause in itertools.chain((0.5, 1.0, 2.0), itertools.repeat(5.0)):
            try:
                await write()
                return
            except UNAVAILABLE_ERRORS as exc:
                if waited >= TOLD_TTL:
                    log.error("quick match: a pairing could not be stored: %s", exc)
                    return
            await asyncio.sleep(pause)
            waited += pause

    def reconnected(self) -> None:
        """The feed was made again after a loss: a pairing told meanwhile to a ticket
        waiting here was published to nobody. Each waiting ticket reads whether it was."""
        for ticket, (conn, _) in list(self._waiting.items()):
            self.ctx.hub.spawn(self._told_meanwhile(conn, ticket))
        for ticket in list(self._left):
            self.ctx.hub.spawn(self._leave_queue_now(ticket))

    async def _told_meanwhile(self, conn: Connection, ticket: str) -> None:
        try:
            pairing = await self.ctx.store.told_ticket(ticket)
        except UNAVAILABLE_ERRORS as exc:  # Redis away again: the next reconnection reads
            log.warning("quick match: a pairing could not be read: %s", exc)
            return
        if pairing is not None and conn.quick is not None and conn.quick[1] == ticket:
            await self._matched(conn, pairing)

    async def _matched(self, conn: Connection, data: bytes | dict[str, Any]) -> None:
        if conn.quick is None or conn.closing:
            return
        info = msgpack.unpackb(data) if isinstance(data, bytes) else data
        # The socket's own messages wait until it is seated (Dispatcher.handle): a request
        # sent on reading `matched` is a seated player's.
        seating = conn.seating = asyncio.get_running_loop().create_future()
        try:
            # Sent while the socket still has its ticket: a `quick_cancel` read from now on
            # finds it taken (no `unqueued`), or none after this `matched`.
            conn.send(p.Matched(room=info["room"], seat=info["seat"], token=info["token"]))
            await self.drop_ticket(conn, requeue=False)
            try:
                await self.lobby.join(conn, info["room"], "", info["token"], None, seated=True)
            except RaceError as err:
                self.ctx.error(conn, err.code, err.message)
                return
        finally:
            conn.seating = None
            seating.set_result(None)
        if _closed(conn):
            # The socket closed while it was seated (this runs beside the socket's own
            # task, whose clean-up found no seat yet): it lets the seat go here.
            await self.lobby.left(conn)

    async def drop_ticket(self, conn: Connection, requeue: bool = True) -> None:
        if conn.quick is None:
            return
        game, ticket = conn.quick
        conn.quick = None
        waiting = self._waiting.pop(ticket, None)
        try:
            if waiting is not None:
                await self.ctx.hub.feed.unsubscribe(ticket_channel(ticket), waiting[1])
        finally:
            if requeue:
                await self._leave_queue(game, ticket)

    async def _leave_queue(self, game: str, ticket: str) -> None:
        """Take `ticket` out of `game`'s queue; when Redis is away, again until it answers."""
        try:
            await self.ctx.store.quick_cancel(game, ticket)
        except UNAVAILABLE_ERRORS:
            if ticket not in self._left:
                self._left[ticket] = game
                self.ctx.hub.spawn(self._until_stored(partial(self._leave_queue_left, ticket)))
            raise

    async def _leave_queue_left(self, ticket: str) -> None:
        game = self._left.get(ticket)
        if game is not None:  # (else taken out already)
            await self.ctx.store.quick_cancel(game, ticket)
            self._left.pop(ticket, None)

    async def _leave_queue_now(self, ticket: str) -> None:
        """At once, as the feed is back: the retries may be seconds apart."""
        with contextlib.suppress(*UNAVAILABLE_ERRORS):  # (they go on)
            await self._leave_queue_left(ticket)

    async def on_quick_cancel(self, conn: Connection, msg: p.QuickCancel) -> None:
        """Answered `unqueued` once the socket is out of the queue (or was in none), so
        that a client knows the cancel took; too late, the `matched` answers it."""
        if conn.quick is None:
            if conn.room is None:  # else seated: its `matched` came before this
                conn.send(p.Unqueued())
            return
        game, ticket = conn.quick
        if not await self.ctx.store.quick_cancel(game, ticket):
            # A partner's process has taken the ticket from the queue: too late to leave,
            # the player is seated, and its `matched` is on its way (the listener stays).
            return
        await self.drop_ticket(conn, requeue=False)
        conn.send(p.Unqueued(game=game))

    async def create_room(self, game: str, tickets: list[Ticket]) -> tuple[str, list[str]]:
        """A head-to-head room with both seats taken (by the tickets' players) and ready:
        it counts down at once."""
        # A player's ticket holds their name of when it was queued: a rename since shows.
        names = await self.ctx.names_now([t.player for t in tickets if t.player is not None])
        tickets = [
            t if t.player is None else replace(t, name=names.get(t.player, t.name)) for t in tickets
        ]
        # An anonymous ticket's typed name that is a player's is numbered (Lobby.join).
        reserved = [t.player is None and await self.ctx.players_name(t.name) for t in tickets]
        now = time.time()
        settings = self.ctx.settings
        config = RoomConfig(
            game=game,
            seats=len(tickets),
            grace=settings.grace,
            countdown=settings.countdown,
            hidden=core.game_class(game).has_talon,
            kind="quick",
            rated=True,
        )
        race = Race(room=new_room_id(), config=config, seed=random_seed(), created_at=now)
        await self.ctx.store.create(race)
        self.ctx.metrics.rooms_created.inc()
        tokens = [new_token() for _ in tickets]

        def seat_everyone(race: Race) -> Outcome:
            out = Outcome()
            for ticket, token, mine in zip(tickets, tokens, reserved, strict=True):
                _, joined = race.join(
                    ticket.name,
                    hash_token(token),
                    now,
                    player=ticket.player,
                    bot=ticket.bot,
                    reserved=mine,
                )
                out.events += joined.events
            for seat in list(race.seats):
                out.events += race.set_ready(seat, True, now).events
            for seat in list(race.seats):  # each until its player's socket takes it up
                out.events += race.unheld(seat, now).events
            return out

        await self.ctx.store.transact(race.room, seat_everyone, now)
        return race.room, tokens
