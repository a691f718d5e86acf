"""This process's view of the rooms its sockets are in, and the fan-out to those sockets.

A `LocalRoom` subscribes to its room's channel, puts events in version order (a gap is
filled from the room's log in Redis), keeps a mirror of the race for quick checks, and
sends each event to each socket in the form that socket may see:

- the player who moved gets their own `progress` with the move; other players get it
  without the move (progress only, never a board);
- spectators get everything, each event `spectator_delay` seconds after it happened, with
  the boards of hidden-information games (Moojub: player view, talon never sent).

Attaching a socket (after join or watch) runs in the same ordered task as deliveries, so
a socket gets exactly the events after the snapshot or catch-up it was sent, no gap, no
repeat. A room also arms a local timer for the race's next deadline (start, time limit,
grace) so that it happens on time; the sweeper in server/app.py is the crash-proof backup.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import core
import protocol as p
from server.connection import Connection, Outgoing
from server.feed import Feed
from server.race import Race, Status
from server.store import RedisRoomStore, RoomKeys, parse_entry, parse_entry_wire

__all__ = ["Hub", "LocalRoom", "replay"]

log = logging.getLogger(__name__)

RECENT = 256  # events kept in memory per room for sockets attaching mid-stream


def replay(game_name: str, seed: int, moves: list[str]) -> core.Game:
    """A board from its seed and its accepted moves (`undo` included)."""
    game = core.new_game(game_name, seed)
    for move in moves:
        if move == "undo":
            game.undo()
        else:
            game.apply(move)
    return game


class LocalRoom:
    def __init__(self, hub: Hub, room: str) -> None:
        self.hub = hub
        self.id = room
        self.keys = RoomKeys(room)
        self.race: Race | None = None
        self.version = 0
        self.conns: set[Connection] = set()
        self.recent: collections.deque[p.Event] = collections.deque(maxlen=RECENT)
        self._queue: asyncio.Queue[bytes | Callable[[], Awaitable[None]]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._busy = False  # the ordered task is in the middle of an item
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at: float | None = None
        self.live_boards: dict[int, core.Game] | None = None  # hidden games, for spectators

    async def open(self) -> bool:
        """Subscribe first, then load: no event can fall between the two."""
        await self.hub.feed.subscribe(self.keys.channel, self._on_entry)
        loaded = await self.hub.store.load(self.id)
        if loaded is None:
            await self.hub.feed.unsubscribe(self.keys.channel)
            return False
        self.race, self.version = loaded.race, loaded.version
        self._task = asyncio.create_task(self._run(), name=f"room-{self.id}")
        self._arm()
        return True

    async def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=2.0)
        with contextlib.suppress(Exception):
            await self.hub.feed.unsubscribe(self.keys.channel)

    def run_in_order(self, job: Callable[[], Awaitable[None]]) -> asyncio.Future[None]:
        """Run `job` between two deliveries; the future tells when it is done."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def wrapped() -> None:
            try:
                await job()
            except BaseException as exc:
                if not done.done():
                    done.set_exception(exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
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
                    self._deliver_progress(event, self.race, wire)
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
        for conn in list(self.conns):
            await self._send_snapshot(conn)

    def _deliver_progress(
        self, event: p.Progress, race: Race, wire: dict[str, Any] | None = None
    ) -> None:
        seat = race.seats.get(event.seat)
        if seat is not None:
            seat.progress, seat.moves = event.progress, event.moves
            seat.won, seat.stuck = event.won, event.stuck
        self.version = event.version
        self.recent.append(event)
        self._fan_out(event, race, wire)

    async def _deliver(self, event: p.Event) -> None:
        race = self.race
        assert race is not None
        if isinstance(event, p.Progress):
            self._deliver_progress(event, race)
            return
        else:
            loaded = await self.hub.store.load(self.id)
            if loaded is not None:
                race = self.race = loaded.race
            if isinstance(event, p.NewRound):
                for conn in self.conns:
                    if conn.seat is not None:
                        conn.game = core.new_game(race.config.game, race.seed)
                        conn.moves = []
                # Spectators of a hidden game follow the new deal from its start.
                self.live_boards = (
                    {seat: core.new_game(race.config.game, race.seed) for seat in race.seats}
                    if race.config.hidden and any(c.seat is None for c in self.conns)
                    else None
                )
        self.version = event.version
        self.recent.append(event)
        self._fan_out(event, race)
        self._arm()

    def _fan_out(self, event: p.Event, race: Race, wire: dict[str, Any] | None = None) -> None:
        """`wire`, when given, is `p.to_wire(event)` (from pub/sub), ours to change."""
        hidden = race.config.hidden
        delay = race.config.spectator_delay
        for_players: Outgoing | None = None
        for_others: Outgoing | None = None
        for_spectators: Outgoing | None = None
        if isinstance(event, p.Progress):
            # Built from the wire map: dataclasses.replace is slow on this hot path.
            if wire is None:
                wire = p.to_wire(event)
            wire.pop("board", None)
            for_players = for_spectators = Outgoing(event, wire)
            others = dict(wire)
            others.pop("move", None)
            for_others = Outgoing(event, others)
            if hidden:
                board = self._advance_live_board(event, race)
                for_spectators = Outgoing(event, {**wire, "board": board} if board else wire)
        elif isinstance(event, p.RaceStarted) and hidden:
            start = core.new_game(race.config.game, race.seed).state(view="player")
            for_players = for_others = for_spectators = Outgoing(
                dataclasses.replace(event, board=start)
            )
        else:
            for_players = for_others = for_spectators = Outgoing(event)
        version = event.version
        mover = event.seat if isinstance(event, p.Progress) else None
        for conn in self.conns:
            if version <= conn.last_version:
                continue
            conn.last_version = version
            seat = conn.seat
            if seat is None:
                conn.send_at(event.at + delay, for_spectators)
            else:
                out = for_others if mover is not None and mover != seat else for_players
                conn.send_frame(out.frame(conn.binary))

    def _advance_live_board(self, event: p.Progress, race: Race) -> dict[str, Any] | None:
        if self.live_boards is None or event.move is None:
            return None
        game = self.live_boards.get(event.seat)
        if game is None:
            return None
        try:
            if game.moves == event.moves - 1:
                if event.move == "undo":
                    game.undo()
                else:
                    game.apply(event.move)
        except ValueError:
            log.warning("room %s: spectator board of seat %s diverged", self.id, event.seat)
            self.live_boards.pop(event.seat, None)
            return None
        return game.state(view="player")

    # ------------------------------------------------------------ attaching sockets

    async def attach(self, conn: Connection, since: int | None) -> None:
        """Add `conn` and send it the events after `since`, or a snapshot."""
        await self.run_in_order(lambda: self._attach(conn, since))

    async def _attach(self, conn: Connection, since: int | None) -> None:
        race = self.race
        assert race is not None
        if conn.seat is not None:
            await self._load_player_board(conn, race)
        elif race.config.hidden and self.live_boards is None:
            self.live_boards = {}
            for seat in race.seats:
                moves = [m for _, m in await self.hub.store.moves(self.id, seat)]
                self.live_boards[seat] = replay(
                    race.config.game, race.seed, moves[: race.seats[seat].moves]
                )
        self.conns.add(conn)
        catch_up = None
        if since is not None and since <= self.version:
            catch_up = await self._events_between(since, self.version)
        # Hidden games: a board after missed deals cannot be rebuilt from events, and
        # catch-up progress carries no board (a spectator's too): send a snapshot.
        if catch_up is None or (race.config.hidden and catch_up):
            await self._send_snapshot(conn)
            return
        conn.last_version = since if since is not None else 0
        for event in catch_up:
            self._fan_out_one(conn, event, race)

    async def _events_between(self, since: int, until: int) -> list[p.Event] | None:
        if since == until:
            return []
        if self.recent and self.recent[0].version <= since + 1:
            return [e for e in self.recent if since < e.version <= until]
        events = await self.hub.store.events_since(self.id, since)
        if events is None:
            return None
        return [e for e in events if e.version <= until]

    def _fan_out_one(self, conn: Connection, event: p.Event, race: Race) -> None:
        conns, self.conns = self.conns, {conn}
        try:
            # Live boards are not advanced twice: catch-up progress events carry no board.
            saved, self.live_boards = self.live_boards, None
            self._fan_out(event, race)
        finally:
            self.conns, self.live_boards = conns, saved

    async def _load_player_board(self, conn: Connection, race: Race) -> None:
        assert conn.seat is not None
        seat = race.seats.get(conn.seat)
        moves = [m for _, m in await self.hub.store.moves(self.id, conn.seat)]
        # The mirror is at self.version; the list may already hold moves still in flight.
        count = seat.moves if seat is not None else 0
        conn.moves = moves[:count]
        conn.game = replay(race.config.game, race.seed, conn.moves)
        conn.last_seq = await self.hub.store.last_seq(self.id, conn.seat)

    async def _send_snapshot(self, conn: Connection) -> None:
        race = self.race
        assert race is not None
        view = race.view()
        if conn.seat is not None:
            shown = race.status in (Status.RUNNING, Status.FINISHED) and conn.game is not None
            conn.last_version = self.version
            conn.send(
                p.Snapshot(
                    version=self.version,
                    room=view,
                    board=conn.game.state(view="player") if shown and conn.game else None,
                    moves=list(conn.moves) if shown else None,
                )
            )
            return
        await self._send_spectator_snapshot(conn, race, view)

    async def _send_spectator_snapshot(
        self, conn: Connection, race: Race, view: dict[str, Any]
    ) -> None:
        delay = race.config.spectator_delay
        cutoff = time.time() - delay
        version = self.version
        pending: list[p.Event] = []
        if delay > 0:
            events = await self._events_between(0, self.version) or list(self.recent)
            pending = [e for e in events if e.at > cutoff]
            if pending:
                version = pending[0].version - 1
        boards: dict[str, Any] = {}
        games: dict[int, core.Game] = {}
        if race.status in (Status.RUNNING, Status.FINISHED):
            for seat, info in race.seats.items():
                moves = await self.hub.store.moves(self.id, seat)
                played = [m for t, m in moves if t <= cutoff][: info.moves]
                game = games[seat] = replay(race.config.game, race.seed, played)
                boards[str(seat)] = game.state(view="player")
                for player in view["players"]:
                    if player["seat"] == seat:
                        player.update(
                            progress=game.progress,
                            moves=game.moves,
                            won=game.won,
                            stuck=game.stuck,
                        )
        conn.last_version = self.version
        conn.send(p.Snapshot(version=version, room=view, boards=boards or None))
        # Hidden games: the delayed progress events carry boards too, advanced from this
        # snapshot's own boards (not the live ones, which are ahead).
        own = games if race.config.hidden else None
        for event in pending:
            conns, self.conns = self.conns, {conn}
            saved, self.live_boards = self.live_boards, own
            conn.last_version = event.version - 1
            try:
                self._fan_out(event, race)
            finally:
                self.conns, self.live_boards = conns, saved
        conn.last_version = self.version

    def detach(self, conn: Connection) -> None:
        self.conns.discard(conn)

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
        self.hub.spawn(self.hub.tick(self.id))


class Hub:
    """Every LocalRoom of this process, by room id."""

    def __init__(self, store: RedisRoomStore, feed: Feed) -> None:
        self.store = store
        self.feed = feed
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
        """The local room, opened (subscribed and loaded) on first use; None if unknown."""
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
        if not local.conns and self.rooms.get(local.id) is local:
            del self.rooms[local.id]
            await local.close()

    def catch_up_all(self) -> None:
        """After a pub/sub drop: every open room reads what it missed from its log."""
        for local in self.rooms.values():
            done = local.run_in_order(local.catch_up)
            done.add_done_callback(lambda f: f.exception())

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
