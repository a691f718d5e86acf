"""Taking, keeping and giving up seats; watching; the lobby and race actions of a seat.

Every action of a player socket runs on the stored race (a compare-and-set transition)
after `Race.holder` has checked that the socket's token still holds its seat: a socket
whose player gave the seat up acts for nobody (server/room/race.py decides who holds a seat).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import Callable

import protocol as p
from protocol import ErrorCode
from server.handlers.context import Context
from server.identity.accounts import anothers
from server.live.connection import Connection, process_of
from server.live.hub import LocalRoom
from server.room.ids import ROOM_ID, clean_name, draw_seed, new_token, room_key
from server.room.race import Outcome, Race, RaceError, Status
from server.storage.store import Applied, hash_token

__all__ = ["Lobby", "find_seat"]

log = logging.getLogger(__name__)

NOT_YET_WATCH = (
    "a room on a daily deal can be watched by those whose own attempt at that deal is over, "
    "and by everyone once the day is (a daily attempt itself, once it is over)"
)
NOT_YET_HEAT = (
    "a finished tournament race can be watched once every race on its deal (every heat of "
    "its round) has finished"
)
NOT_YET_SEAT = (
    "a seat on a daily deal is for those whose own attempt at that deal is over, "
    "and for everyone once the day is"
)


def find_seat(race: Race, token: str) -> int | None:
    wanted = hash_token(token)
    for index, seat in race.seats.items():
        if hmac.compare_digest(seat.token_hash, wanted):
            return index
    return None


class Lobby:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def _room(self, conn: Connection, room: str) -> LocalRoom:
        if conn.room is not None or conn.quick is not None:
            raise RaceError(ErrorCode.ALREADY_JOINED, "this socket is already in a room")
        # Room ids are short hex (new_room_id): anything else is no room, without asking
        # Redis (a lone surrogate from a JSON frame cannot even be encoded for it).
        local = await self.ctx.hub.room(room) if ROOM_ID.fullmatch(room) else None
        if local is None:
            raise RaceError(ErrorCode.UNKNOWN_ROOM, f"no room {room[:40]!r}")
        return local

    async def on_join(self, conn: Connection, msg: p.Join) -> None:
        await self.join(conn, room_key(msg.room), clean_name(msg.name), msg.token, msg.since)

    async def join(
        self,
        conn: Connection,
        room: str,
        name: str,
        token: str | None,
        since: int | None,
        *,
        seated: bool = False,
    ) -> None:
        """Take a free seat (no `token`) or come back to the token's. `seated`: the seat
        was just taken for this socket (a quick match), so its welcome carries the token."""
        local = await self._room(conn, room)
        store = self.ctx.store
        now = time.time()
        conn_id = conn.id
        taken: list[int] = []
        try:
            player = await self.ctx.whose(conn, holding=token is not None)
            player_id = player.id if player is not None else None
            fresh = token is None
            # An anonymous seat does not show a player's name bare (that player's seat
            # does): it is numbered as a name another seat has.
            reserved = fresh and player is None and await self.ctx.players_name(name)
            race = local.race
            if fresh and race is not None and race.seat_of(player_id) is None:
                # A seat shows the whole deal: a room on a daily deal seats only those
                # who may see it (its own players come back by their identity or token).
                deal = race.config.deal_line
                if deal is not None and not await self._line_open(conn, deal):
                    raise RaceError(ErrorCode.NOT_YET, NOT_YET_SEAT)
            if token is None:
                token = new_token()
            token_hash = hash_token(token)
            held: list[str] = []  # the seat's token hash, when the player came back to it

            games: list[str] = []  # the room's game, for the player's best in it

            def take(race: Race) -> Outcome:
                games[:] = [race.config.game]
                # One player, one seat: a player who holds one here comes back to it.
                mine = race.seat_of(player_id)
                if mine is not None:
                    taken[:] = [mine]
                    held[:] = [race.seats[mine].token_hash]
                    return race.connected(mine, conn_id, now)
                seat, outcome = race.join(
                    player.name if player is not None else name,
                    token_hash,
                    now,
                    conn_id,
                    player=player_id,
                    bot=player is not None and player.bot,
                    reserved=reserved,
                )
                taken[:] = [seat]
                return outcome

            def come_back(race: Race) -> Outcome:
                assert token is not None
                games[:] = [race.config.game]
                seat = find_seat(race, token)
                if seat is None:
                    raise RaceError(ErrorCode.BAD_TOKEN, "that token holds no seat here")
                owner = race.seats[seat].player
                if anothers(owner, player_id):
                    raise RaceError(ErrorCode.NOT_YOUR_SEAT, "that seat is another player's")
                mine = race.seat_of(player_id)
                if mine is not None and mine != seat:  # one player, one seat
                    raise RaceError(
                        ErrorCode.NOT_YOUR_SEAT,
                        f"you hold seat {mine} of this room: join without a token to take it",
                    )
                taken[:] = [seat]
                return race.connected(seat, conn_id, now)

            await store.hold(process_of(conn_id), room)  # for the reaper, if we die
            await store.transact(room, take if fresh else come_back, now)
            seat = taken[0]
            if held:
                token_hash, fresh = held[0], False
            last_seq = await store.last_seq(room, seat)  # where its seqs carry on
            best = await self.ctx.best_run(player, games[0])
        except BaseException as exc:
            if taken:  # the seat may list this socket, which the client was told is out
                await self._let_go(room, taken[0], conn_id, exc)
            await self.ctx.hub.abandon(local)
            raise
        conn.room, conn.seat, conn.token_hash, conn.role = room, seat, token_hash, "player"
        conn.send(
            p.Welcome(
                room=room,
                role="player",
                server_time=time.time(),
                seat=seat,
                token=token if fresh or seated else None,
                last_seq=last_seq,
                best=best,
            )
        )
        await self._enter(conn, local, since)

    async def on_watch(self, conn: Connection, msg: p.Watch) -> None:
        room = room_key(msg.room)
        local = await self._room(conn, room)
        race = local.race
        refused = None if race is None else await self._watch_refused(conn, race)
        if refused is not None:
            await self.ctx.hub.abandon(local)  # nobody watches a line being found, or copies it
            raise RaceError(ErrorCode.NOT_YET, refused)
        conn.room, conn.seat, conn.role = room, None, "spectator"
        conn.send(p.Welcome(room=room, role="spectator", server_time=time.time()))
        await self._enter(conn, local, msg.since)

    async def _watch_refused(self, conn: Connection, race: Race) -> str | None:
        """Why this socket may not watch `race` now (None: it may)."""
        if not await self._may_watch(conn, race):
            return NOT_YET_WATCH
        if not await self._may_watch_heat(race):
            return NOT_YET_HEAT
        return None

    async def _may_watch(self, conn: Connection, race: Race) -> bool:
        """A room on a daily deal is watched as its replay is read (a spectator gets every
        move): by a player whose own attempt at that deal is over, or by anyone once the
        day is; a daily attempt itself only once it is over (nobody watches it played)."""
        deal = race.config.deal_line
        if deal is None:
            return True
        if race.config.daily is not None and race.status is not Status.FINISHED:
            return False
        return await self._line_open(conn, deal)

    async def _line_open(self, conn: Connection, deal: str) -> bool:
        """The daily deal's rule (`Context.daily_open`) for this socket's player, as the
        records have them now (RaceError bad_key once its key was signed out)."""
        judge = self.ctx.daily_open
        if judge is None:
            return False
        player = await self.ctx.whose(conn)
        return await judge(deal, None if player is None else player.id)

    async def _may_watch_heat(self, race: Race) -> bool:
        """A tournament's finished race (whose events carry its every move) is watched as
        its replay is read: once no other heat races its deal. One being raced is watched
        as any race, after the room's spectator delay."""
        tournament, judge = race.config.tournament, self.ctx.heat_open
        if tournament is None or judge is None or race.status is not Status.FINISHED:
            return True
        return await judge(tournament, race.room)

    async def _enter(self, conn: Connection, local: LocalRoom, since: int | None) -> None:
        """Attach a welcomed socket: its snapshot or catch-up. If that fails (storage
        down), the socket is in no room again, as docs/protocol.md section 6 says of a
        join or watch answered `error` (the client sends it again on the same socket),
        and its seat no longer counts it."""
        try:
            await local.enter(conn, since)
        except BaseException as exc:
            room, seat = conn.room, conn.seat
            conn.room = conn.seat = conn.token_hash = conn.role = None
            await self.ctx.hub.release(local, conn)
            if room is not None and seat is not None:
                await self._let_go(room, seat, conn.id, exc)
            raise

    async def on_resync(self, conn: Connection, msg: p.Resync) -> None:
        await self.ctx.local(conn).resync(conn, msg.since)

    async def left(self, conn: Connection) -> None:
        """The socket is gone: the seat is held by one socket fewer (server/room/race.py says
        what follows), and this process's room forgets it."""
        if conn.room is None:
            return
        local = self.ctx.hub.rooms.get(conn.room)
        if local is not None:
            await self.ctx.hub.release(local, conn)
        if conn.seat is not None:
            await self._let_go(conn.room, conn.seat, conn.id)

    async def _let_go(
        self, room: str, seat: int, conn_id: str, failed: BaseException | None = None
    ) -> None:
        """Socket `conn_id` no longer holds `seat`. When that cannot be written now (Redis
        down, the room too busy, or a join that failed on its way), the room is left to
        the reaper (`Hub.unreleased`); a room that is gone has nobody to let go."""
        hub = self.ctx.hub
        if isinstance(failed, asyncio.CancelledError):
            hub.unreleased.add(room)  # no waiting on a cancelled task
            return
        try:
            await hub.departures.left(room, seat, conn_id, time.time())
        except RaceError as err:
            if err.code is not ErrorCode.UNKNOWN_ROOM:
                hub.unreleased.add(room)
        except Exception:
            hub.unreleased.add(room)
            if failed is None:
                raise  # the socket's clean-up logs it

    # ------------------------------------------------------------ a seat's actions

    async def _act(
        self, conn: Connection, action: Callable[[Race, int, float], Outcome]
    ) -> Applied:
        """Run `action` on the stored race if this socket's token still holds its seat."""
        local, seat = self.ctx.player(conn)
        token_hash = conn.token_hash
        now = time.time()

        def checked(race: Race) -> Outcome:
            race.holder(seat, token_hash)
            return action(race, seat, now)

        return await self.ctx.store.transact(local.id, checked, now)

    async def on_ready(self, conn: Connection, msg: p.Ready) -> None:
        await self._act(conn, lambda race, seat, now: race.set_ready(seat, msg.ready, now))

    async def on_start(self, conn: Connection, msg: p.Start) -> None:
        await self._act(conn, lambda race, seat, now: race.start(seat, now))

    async def on_resign(self, conn: Connection, msg: p.Resign) -> None:
        await self._act(conn, lambda race, seat, now: race.resign(seat, now))

    async def on_leave(self, conn: Connection, msg: p.Leave) -> None:
        local, _ = self.ctx.player(conn)
        applied = await self._act(conn, lambda race, seat, now: race.leave(seat, now))
        await local.see_out(conn, applied.version)
        await self.ctx.hub.forget(local)

    async def on_rematch(self, conn: Connection, msg: p.Rematch) -> None:
        local, index = self.ctx.player(conn)
        race = local.race
        assert race is not None
        # Refused or repeated votes must not cost a solver run (a "winnable" deal): the
        # mirror is at least as new as the `finished` this socket was sent.
        if race.status is not Status.FINISHED:
            raise RaceError(ErrorCode.NOT_FINISHED, "a rematch comes after the end")
        seat = race.seats.get(index)
        if seat is not None and seat.rematch:
            return
        mode = "winnable" if race.config.seed_mode == "winnable" else "random"
        seed, _ = await draw_seed(race.config.game, mode)
        await self._act(conn, lambda race, seat, now: race.rematch(seat, seed, now))
