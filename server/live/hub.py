"""This process's side of the rooms its sockets are in: seat sessions and the fan-out.

A `LocalRoom` subscribes to its room's channel, puts events in version order (a gap is
filled from the room's log in Redis), keeps a mirror of the race for quick checks, holds
one `SeatSession` per seat with sockets here (server/live/seats.py: the seat's true board, last
seq, sockets), and sends each event to each socket as server/room/view.py says that socket may
see it. Each view of an event is built and encoded once, however many sockets get it.

Racers first: the players' frames are written as the event arrives; spectators get theirs
from the room's `SpectatorFeed` (server/live/spectators.py: the crowd, its queue, delayed
and masked boards), a slice of the crowd per event-loop turn.

Attaching a socket (after join or watch) runs in the same ordered task as deliveries, so
a socket gets exactly the events after the snapshot or catch-up it was sent, no gap, no
repeat. A room also arms a local timer for the race's next deadline (start, time limit,
grace) so that it happens on time; the sweeper (server/edge/sweeper.py) is the crash-proof backup.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import core
import protocol as p
from server.live.connection import Connection
from server.live.departures import Departures
from server.live.frames import Outgoing
from server.live.recent import RecentEvents, entry_of
from server.live.seats import SeatSession, replay, timed_splits
from server.live.spectators import SpectatorFeed
from server.room.race import Race, Status
from server.room.view import (
    Viewer,
    spectator_due,
    view_event,
    viewer_of,
)
from server.storage.codec import parse_entry, parse_entry_wire
from server.storage.feed import Feed
from server.storage.keys import RoomKeys
from server.storage.store import UNAVAILABLE_ERRORS, RoomStore

__all__ = ["Hub", "LocalRoom"]

log = logging.getLogger(__name__)

RECENT = 256  # events kept in memory per room for sockets attaching mid-stream
TICK_RETRY = 1.0  # seconds before a deadline whose transition found Redis out of reach is retried


class LocalRoom:
    def __init__(self, hub: Hub, room: str) -> None:
        self.hub = hub
        self.id = room
        self.keys = RoomKeys(room)
        self.race: Race | None = None
        self.version = 0
        self.conns: set[Connection] = set()  # every socket attached, players and spectators
        # Sockets between `Hub.room` and their attach (a join waiting for its write): the
        # room stays open for them although no socket is attached yet (closed, their
        # attach would wait for ever on its stopped task).
        self.entering = 0
        self.players: set[Connection] = set()
        self.sessions: dict[int, SeatSession] = {}
        self.recent = RecentEvents(RECENT)
        self._queue: asyncio.Queue[bytes | Callable[[], Awaitable[None]]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._busy = False  # the ordered task is in the middle of an item
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self._deadline_waits = False  # a due deadline found Redis out of reach: said once
        self._following_ghost = False  # a reading of the race after a ghost's step is queued
        self.feed = SpectatorFeed(room, lambda seat: hub.store.moves(room, seat))

    async def open(self) -> bool:
        """Subscribe first, then load: no event can fall between the two."""
        await self.hub.feed.subscribe(self.keys.channel, self._on_entry)
        loaded = await self.hub.store.load(self.id)
        if loaded is None:
            await self.hub.feed.unsubscribe(self.keys.channel, self._on_entry)
            return False
        self.race, self.version = loaded.race, loaded.version
        self._task = asyncio.create_task(self._run(), name=f"room-{self.id}")
        self._arm()
        return True

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self.feed.close()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=2.0)
        with contextlib.suppress(Exception):  # (a new opening of the room keeps its own)
            await self.hub.feed.unsubscribe(self.keys.channel, self._on_entry)

    def run_in_order(self, job: Callable[[], Awaitable[None]]) -> asyncio.Future[None]:
        """Run `job` between two deliveries; the future tells when it is done."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def wrapped() -> None:
            try:
                await job()
            except asyncio.CancelledError:
                done.cancel()  # (an exception nobody may wait for would be logged)
                raise
            except BaseException as exc:
                if not done.done():
                    done.set_exception(exc)
            else:
                if not done.done():
                    done.set_result(None)

        self._queue.put_nowait(wrapped)
        return done

    def _on_entry(self, entry: bytes) -> None:
        """An event from pub/sub. The next progress event in order, with nothing queued
        before it, is delivered at once (the hot path: no task switch, nothing to await);
        anything else goes through the ordered task."""
        if not self._busy and self._queue.empty() and self.race is not None:
            parsed = parse_entry_wire(entry)
            if parsed is None or parsed[0].version <= self.version:
                return
            event, wire = parsed
            if isinstance(event, p.Progress) and event.version == self.version + 1:
                try:
                    self._deliver_progress(event, self.race, wire, entry)
                except Exception:
                    log.exception("room %s: delivery failed", self.id)
                return
        self._queue.put_nowait(entry)

    async def _run(self) -> None:
        while True:
            self._busy = False
            item = await self._queue.get()
            self._busy = True
            try:
                if isinstance(item, bytes):
                    event = parse_entry(item)
                    if event is not None:
                        await self._accept(event)
                else:
                    await item()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("room %s: delivery failed", self.id)

    async def _accept(self, event: p.Event) -> None:
        if event.version <= self.version:
            return  # already delivered (e.g. fetched to fill a gap)
        if event.version > self.version + 1:
            await self.catch_up()  # the gap, from the log (or a resync)
            if event.version != self.version + 1:
                return
        await self._deliver(event)

    async def catch_up(self) -> None:
        """Deliver whatever the log holds after our version (pub/sub may have lost it)."""
        missing = await self.hub.store.events_since(self.id, self.version)
        if missing is None:
            await self._resync_everyone()
            return
        for event in missing:
            if event.version == self.version + 1:
                await self._deliver(event)

    async def _resync_everyone(self) -> None:
        """Too far behind to catch up event by event: reload and re-snapshot every socket."""
        loaded = await self.hub.store.load(self.id)
        if loaded is None:
            return
        self.race, self.version = loaded.race, loaded.version
        self.recent.clear()
        for session in self.sessions.values():
            session.stale = True
        await self.feed.resync(self.race)
        for conn in list(self.conns):
            await self._send_snapshot(conn)

    def _deliver_progress(
        self,
        event: p.Progress,
        race: Race,
        wire: dict[str, Any] | None = None,
        entry: bytes | None = None,
    ) -> None:
        """`wire` and `entry`, when given, are the event's wire map and logged bytes (as
        pub/sub delivered it), so neither is built again."""
        seat = race.seats.get(event.seat)
        done = False
        if seat is not None:
            done = seat.done
            seat.progress, seat.moves = event.progress, event.moves
            seat.won, seat.stuck = event.won, event.stuck
            if event.splits is not None:
                seat.splits = list(event.splits)
            if not seat.ghost:  # as the store keeps it (a ghost's is its recorded time)
                seat.done_at = event.at if seat.won or seat.stuck else None
            done = seat.done != done
        session = self.sessions.get(event.seat)
        if session is not None:
            session.follow(event)
        self.feed.moved(event)
        self.version = event.version
        self.recent.append(entry if entry is not None else entry_of(event))
        self._fan_out(event, race, wire)
        if seat is not None and seat.ghost:
            if not self._following_ghost:  # one reading serves every step before it
                self._following_ghost = True
                self.run_in_order(self._follow_ghost)
        elif done:  # the finish may be due now (Race.next_deadline), or no longer
            self._arm()

    async def _follow_ghost(self) -> None:
        """The ghost moved (the race's own step): its next step is the room's next
        deadline, which the mirror learns from the stored race."""
        self._following_ghost = False  # a step delivered from now on reads it again
        loaded = await self.hub.store.load(self.id)
        if loaded is not None:
            self.race = loaded.race
            self._arm()

    async def _deliver(self, event: p.Event) -> None:
        race = self.race
        assert race is not None
        if isinstance(event, p.Progress):
            self._deliver_progress(event, race)
            return
        loaded = await self.hub.store.load(self.id)
        if loaded is not None:
            race = self.race = loaded.race
        new_round = isinstance(event, p.NewRound)
        if new_round:
            for session in self.sessions.values():
                session.reset([], session.last_seq, seed=race.seed)
        await self.feed.changed(race, new_round)
        self.version = event.version
        self.recent.append(entry_of(event))
        self._fan_out(event, race)
        self._check_holders(race)
        self._arm()

    def _check_holders(self, race: Race) -> None:
        """A socket holds a seat only while its token does: after a seat was given up
        (left, or freed by the lobby rule), the sockets that held it here hold nothing,
        whoever takes the seat next. They were sent the event that said so."""
        gone = [
            conn
            for conn in self.players
            if (seat := race.seats.get(conn.seat) if conn.seat is not None else None) is None
            or seat.token_hash != conn.token_hash
        ]
        for conn in gone:
            conn.room = conn.seat = conn.token_hash = conn.role = None
            self.detach(conn)
        if gone and not self.conns:
            self.hub.spawn(self.hub.forget(self))

    # ------------------------------------------------------------ the fan-out

    def _fan_out(self, event: p.Event, race: Race, wire: dict[str, Any] | None = None) -> None:
        """Send `event` to every socket here, as server/room/view.py says each may see it.
        `wire`, when given, is `p.to_wire(event)` (from pub/sub), ours to change."""
        if wire is None:
            wire = p.to_wire(event)
        version = event.version
        mover = event.seat if isinstance(event, p.Progress) else None
        start = None  # hidden-card games: the starting board, the same for everyone
        if isinstance(event, p.RaceStarted) and race.config.hidden:
            start = core.new_game(race.config.game, race.seed).state(view="player")
        if self.players:
            as_mover = Outgoing(event, view_event(wire, Viewer.MOVER, start))
            as_opponent = as_mover
            if mover is not None:
                as_opponent = Outgoing(event, view_event(wire, Viewer.OPPONENT))
            for conn in self.players:
                if version <= conn.last_version:
                    continue
                conn.last_version = version
                out = as_opponent if mover is not None and mover != conn.seat else as_mover
                conn.send_frame(out.frame(conn.binary))
        self.feed.publish(event, race, wire)

    # ------------------------------------------------------------ attaching sockets

    async def enter(self, conn: Connection, since: int | None) -> None:
        """`attach`, for a socket that `Hub.room` gave this room to."""
        try:
            await self.attach(conn, since)
        finally:
            self.entering -= 1

    async def attach(self, conn: Connection, since: int | None) -> None:
        """Add `conn` and send it the events after `since`, or a snapshot."""
        await self.run_in_order(lambda: self._attach(conn, since))

    async def _attach(self, conn: Connection, since: int | None) -> None:
        race = self.race
        assert race is not None
        conn.drop_delayed()  # a resync: what it still waited for comes again below
        if conn.seat is not None:
            session = await self.session(conn.seat)
            session.conns.add(conn)
            self.players.add(conn)
        else:
            await self.feed.prepare(race)
        self.conns.add(conn)
        try:
            await self._bring_up_to_date(conn, since)
        finally:
            if conn.seat is None:
                # Only now: the crowd's queue may hold events already published, due while
                # the snapshot was read from Redis; the socket had them before its snapshot.
                self.feed.add(conn)

    async def resync(self, conn: Connection, since: int | None) -> None:
        """Send `conn` (attached) the events after `since` again, or a snapshot."""
        await self.run_in_order(lambda: self._resync(conn, since))

    async def _resync(self, conn: Connection, since: int | None) -> None:
        if conn not in self.conns:  # its attaching failed (an outage): attached now
            await self._attach(conn, since)
            return
        # Attached throughout, between two deliveries: when the catch-up cannot be read
        # (Redis away, answered `unavailable`), the socket still hears the room's next
        # events, and its client sees the gap and asks again (let go of and attached
        # again, a socket whose read failed was left out of the room, hearing nothing).
        conn.drop_delayed()  # what it still waited for comes again below
        if conn.seat is not None:
            # Held while the socket is (`detach`): read from Redis only if it was not.
            (await self.session(conn.seat)).conns.add(conn)
        else:
            self.feed.discard(conn)
        try:
            await self._bring_up_to_date(conn, since)
        finally:
            if conn.seat is None:
                self.feed.add(conn)  # as in _attach: after its catch-up or snapshot

    async def _bring_up_to_date(self, conn: Connection, since: int | None) -> None:
        """Send `conn` the events after `since`, or a snapshot."""
        race = self.race
        assert race is not None
        catch_up = None
        # Hidden games: a board after missed deals cannot be rebuilt from events, and
        # catch-up progress carries no board (a spectator's too): always a snapshot, also
        # when nothing was missed (the client may hold no board: an `accepted` lost).
        if since is not None and since <= self.version and not race.config.hidden:
            catch_up = await self._events_between(since, self.version)
        if catch_up is None:
            await self._send_snapshot(conn)
            return
        assert since is not None
        conn.last_version = since
        delay = race.config.spectator_delay
        for event in catch_up:
            mover = event.seat if isinstance(event, p.Progress) else None
            viewer = viewer_of(conn.seat, mover)
            out = Outgoing(event, view_event(p.to_wire(event), viewer))
            conn.last_version = event.version
            if viewer is Viewer.SPECTATOR:
                conn.send_at(spectator_due(event, delay), out)
            else:
                conn.send(out)

    async def see_out(self, conn: Connection, version: int) -> None:
        """`conn` gave its seat up by event `version` (`leave`): send it the events up to
        that one, its own `left` included (every player gets every event, and the leaver
        is answered by it), then it is out of the room, whatever comes next."""
        await self.run_in_order(lambda: self._see_out(conn, version))

    async def _see_out(self, conn: Connection, version: int) -> None:
        since = conn.last_version
        if conn in self.conns and since < version:
            # This process may not have read them yet (pub/sub): then the log has them.
            events = await self._events_between(since, version)
            if not events or events[-1].version < version:
                events = await self.hub.store.events_since(self.id, since)
            for event in events or []:
                if since < event.version <= version:
                    mover = event.seat if isinstance(event, p.Progress) else None
                    wire = view_event(p.to_wire(event), viewer_of(conn.seat, mover))
                    conn.send(Outgoing(event, wire))
                    conn.last_version = event.version
        conn.room = conn.seat = conn.token_hash = conn.role = None
        self.detach(conn)

    async def session(self, index: int) -> SeatSession:
        """This process's session of seat `index` (opened from the store on first use)."""
        session = self.sessions.get(index)
        if session is not None:
            return session
        race = self.race
        assert race is not None
        timed = await self.hub.store.moves(self.id, index)
        seat = race.seats.get(index)
        # The mirror is at self.version; the list may already hold moves still in flight.
        count = seat.moves if seat is not None else 0
        last_seq = await self.hub.store.last_seq(self.id, index)
        session = self.sessions.get(index)  # another socket may have opened it meanwhile
        if session is None:
            game, seed = race.config.game, race.seed
            splits = timed_splits(game, seed, timed[:count], race.start_at)
            moves = [m for _, m in timed[:count]]
            session = SeatSession(index, game, seed, moves, last_seq, splits)
            self.sessions[index] = session
        return session

    async def _events_between(self, since: int, until: int) -> list[p.Event] | None:
        if since == until:
            return []
        first = self.recent.first_version()
        if first is not None and first <= since + 1:
            return self.recent.between(since, until)
        events = await self.hub.store.events_since(self.id, since)
        if events is None:
            return None
        return [e for e in events if e.version <= until]

    def told_moves(self, session: SeatSession) -> int:
        """How many moves of the seat the room's events have told of: its board's count
        when they told of none."""
        race = self.race
        seat = race.seats.get(session.index) if race is not None else None
        return seat.moves if seat is not None else len(session.moves)

    def board_behind(self, session: SeatSession) -> bool:
        """The seat's board is not the truth: marked stale, or it has not followed every
        move the room's events told of (one made on another process while this one held
        the seat's turn: no event is followed while a turn is held)."""
        return session.stale or self.told_moves(session) > len(session.moves)

    async def _send_snapshot(self, conn: Connection) -> None:
        race = self.race
        assert race is not None
        view = race.view()
        if conn.seat is not None:
            session = self.sessions.get(conn.seat)
            shown = race.status in (Status.RUNNING, Status.FINISHED) and session is not None
            board = moves = None
            if shown and session is not None:
                if self.board_behind(session):
                    # The seat's moves as Redis has them, up to the count the events told.
                    timed = await self.hub.store.moves(self.id, conn.seat)
                    moves = [m for _, m in timed[: self.told_moves(session)]]
                    game = replay(race.config.game, session.seed, moves)
                elif session.turn.locked():
                    # Not the board itself while a move is in flight: it may not be accepted.
                    moves = list(session.moves)
                    game = replay(race.config.game, session.seed, moves)
                else:
                    moves, game = list(session.moves), session.game
                board = game.state(view="player")
                if not race.seed_public():  # the board names its deal too
                    board["seed"] = None
            conn.last_version = self.version
            conn.send(p.Snapshot(version=self.version, room=view, board=board, moves=moves))
            return
        await self.feed.send_snapshot(conn, race, view, self.version, self._history)

    async def _history(self) -> list[p.Event]:
        """The room's events up to now, as far as the log (or this process) has them."""
        return await self._events_between(0, self.version) or self.recent.events()

    def detach(self, conn: Connection) -> None:
        self.conns.discard(conn)
        self.feed.discard(conn)
        if conn in self.players:
            self.players.discard(conn)
            for index, session in list(self.sessions.items()):
                session.conns.discard(conn)
                if not session.conns and not session.turn.locked():
                    del self.sessions[index]

    # ------------------------------------------------------------ deadlines

    def _arm(self) -> None:
        race = self.race
        at = race.next_deadline() if race is not None else None
        if at == self._timer_at:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timer_at = at
        if at is None:
            return
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(max(0.0, at - time.time()), self._due)

    def _due(self) -> None:
        self._timer = None
        self._timer_at = None
        self.hub.spawn(self._tick())

    async def _tick(self) -> None:
        try:
            await self.hub.tick(self.id)
        except UNAVAILABLE_ERRORS as exc:
            # Redis out of reach (a restart, a failover): the deadline is still due, so it
            # is tried again here, soon, for as long as the room is open here (the sweeper
            # is the backup). A finish not retried would leave the race running for ever.
            if not self._deadline_waits:  # one line per outage, not one per retry
                log.warning("room %s: its deadline waits for Redis: %s", self.id, exc)
            self._deadline_waits = True
            if self._task is not None and not self._task.done() and self._timer is None:
                loop = asyncio.get_running_loop()
                self._timer_at = None
                self._timer = loop.call_later(TICK_RETRY, self._due)
        else:
            self._deadline_waits = False


class Hub:
    """Every LocalRoom of this process, by room id."""

    def __init__(self, store: RoomStore, feed: Feed) -> None:
        self.store = store
        self.feed = feed
        self.departures = Departures(store)  # sockets gone: one transition per room and turn
        # Rooms where a socket of this process may still be listed in a seat although it
        # is gone (its departure could not be written): the reaper lets it go later.
        self.unreleased: set[str] = set()
        self.rooms: dict[str, LocalRoom] = {}
        self._opening: dict[str, asyncio.Future[LocalRoom | None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Awaitable[Any]) -> None:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed", exc_info=task.exception())

    async def room(self, room: str) -> LocalRoom | None:
        """The local room, opened (subscribed and loaded) on first use; None if unknown.
        The caller then brings a socket in (`LocalRoom.enter`) or gives it up
        (`abandon`): the room is kept open until then."""
        local = await self._open(room)
        if local is not None:
            local.entering += 1
        return local

    async def _open(self, room: str) -> LocalRoom | None:
        local = self.rooms.get(room)
        if local is not None:
            return local
        opening = self._opening.get(room)
        if opening is not None:
            return await asyncio.shield(opening)
        future: asyncio.Future[LocalRoom | None] = asyncio.get_running_loop().create_future()
        self._opening[room] = future
        try:
            local = LocalRoom(self, room)
            ok = await local.open()
            result = local if ok else None
            if result is not None:
                self.rooms[room] = result
            future.set_result(result)
            return result
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved
            raise
        finally:
            del self._opening[room]

    async def release(self, local: LocalRoom, conn: Connection) -> None:
        local.detach(conn)
        await self.forget(local)

    async def abandon(self, local: LocalRoom) -> None:
        """A socket given `local` by `room` will not attach (its join failed)."""
        local.entering -= 1
        await self.forget(local)

    async def forget(self, local: LocalRoom) -> None:
        """Close `local` if no socket here is in it, or on its way in, any more."""
        if not local.conns and not local.entering and self.rooms.get(local.id) is local:
            del self.rooms[local.id]
            await local.close()

    def catch_up_all(self) -> None:
        """After a pub/sub drop: every open room reads what it missed from its log."""
        for local in self.rooms.values():
            done = local.run_in_order(local.catch_up)
            done.add_done_callback(lambda f: f.cancelled() or f.exception())

    async def tick(self, room: str) -> None:
        """Do whatever is due in `room` now (start, forfeits, time up, finish)."""
        now = time.time()
        await self.store.transact(room, lambda race: race.tick(now), now)

    async def close(self) -> None:
        for local in list(self.rooms.values()):
            await local.close()
        self.rooms.clear()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=2.0)
