"""A room's spectators on this process: the crowd, the queue of their frames, and in
hidden-card games their own boards.

Spectators (a crowd of thousands, each event `spectator_delay` seconds late) are served
from one room-wide queue, `CROWD_CHUNK` sockets per event-loop turn, each written as it is
served, so that a racer's own answers never wait behind more than one such slice of a
crowd's fan-out. In hidden-card games (Moojub) the feed keeps each seat's board as the
spectators may see it, and turns the cards not yet dealt to every racer still racing face
down (server/room/view.py's rule). A crowd arriving together shares one snapshot, built and
encoded once while the room has not changed.

The clock is passed in (`clock`, wall-clock seconds as events' `at` are), so the feed is
tested on its own without waiting out a delay.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import core
import protocol as p
from server.live.connection import Connection
from server.live.frames import Outgoing
from server.live.seats import play, replay
from server.room.race import Race, Status
from server.room.view import (
    Viewer,
    deal_order,
    hidden_cards,
    room_as_of,
    shown_board,
    spectator_due,
    view_event,
)

__all__ = ["CROWD_CHUNK", "SpectatorFeed", "TimedMoves"]

log = logging.getLogger(__name__)

# Spectator frames written per event-loop turn before the racers' sockets are read again:
# about 0.25 ms of writes (bench/load.py's crowd: 1,000 spectators are 8-12 ms per event).
CROWD_CHUNK = 24

# A seat's accepted moves with the time each was accepted (the room store's `moves`).
TimedMoves = Callable[[int], Awaitable[list[tuple[float, str]]]]


class SpectatorFeed:
    def __init__(
        self, room: str, moves: TimedMoves, clock: Callable[[], float] = time.time
    ) -> None:
        self.room = room
        self._moves = moves
        self.clock = clock
        self.spectators: set[Connection] = set()
        # Hidden-card games, once a spectator came: each seat's accepted board, and the
        # order the deal's cards are dealt in (to turn undealt ones face down).
        self.boards: dict[int, core.Game] | None = None
        self.order: tuple[str, ...] = ()
        # The queue: (due, version, frame source), released in order.
        self.queue: collections.deque[tuple[float, int, Outgoing]] = collections.deque()
        self._targets: list[Connection] | None = None
        self._next = 0
        self._handle: asyncio.Handle | None = None
        # The last snapshot, while the room has not changed since: a crowd that arrives
        # together is sent one snapshot, built and encoded once (each was 8 reads from
        # Redis and 8 replays of a board; 1,000 spectators held the room's events, racers'
        # included, for seconds). Key, the message, the boards it shows.
        self._shown: tuple[tuple[Any, ...], Outgoing, dict[int, core.Game]] | None = None

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    # ------------------------------------------------------------ the room's events

    def publish(self, event: p.Event, race: Race, wire: dict[str, Any]) -> None:
        """Queue `event` (`wire`: its wire map) for every spectator, due `spectator_delay`
        seconds after it happened; in hidden-card games with the board it shows."""
        if not self.spectators:
            return
        board = self.board_for(event, race, self.boards)
        shown = Outgoing(event, view_event(wire, Viewer.SPECTATOR, board))
        self.queue.append((spectator_due(event, race.config.spectator_delay), event.version, shown))
        self.arm()

    def moved(self, event: p.Progress) -> None:
        """A seat's move: its spectators' board follows."""
        if self.boards is not None:
            self.advance_board(event)

    async def changed(self, race: Race, new_round: bool) -> None:
        """Any event but a move: a new round deals new boards; a seat taken since gets its."""
        if new_round and self.boards is not None:
            self.boards = {}
        if race.config.hidden and self.boards is not None:
            await self.ensure_boards(race)

    async def resync(self, race: Race) -> None:
        """The room was reloaded (too far behind to catch up): what was queued is stale,
        and every socket is sent a snapshot again."""
        self.queue.clear()
        self._targets = None
        if self.boards is not None:
            self.boards = None
            await self.ensure_boards(race)

    # ------------------------------------------------------------ the crowd

    async def prepare(self, race: Race) -> None:
        """Before a spectator's snapshot: in hidden-card games, the boards its events show."""
        if race.config.hidden:
            await self.ensure_boards(race)

    def add(self, conn: Connection) -> None:
        """A spectator, once it has its snapshot or catch-up: the queue's events after it."""
        self.spectators.add(conn)

    def discard(self, conn: Connection) -> None:
        self.spectators.discard(conn)

    def arm(self) -> None:
        """Serve the queue's head when it is due (after this turn's racers if it is now)."""
        if self._handle is not None or not self.queue:
            return
        loop = asyncio.get_running_loop()
        wait = self.queue[0][0] - self.clock()
        if wait <= 0:
            self._handle = loop.call_soon(self._serve_next_round)
        else:
            self._handle = loop.call_later(wait, self.serve)

    def _serve_next_round(self) -> None:
        """One round of callbacks later: the racers' frames of this turn (the move's
        progress and its mover's answer, written by the Flusher at the next round) and the
        racers' frames read meanwhile go before a slice."""
        self._handle = asyncio.get_running_loop().call_soon(self.serve)

    def serve(self) -> None:
        """Release the due frames, to at most CROWD_CHUNK sockets this turn."""
        self._handle = None
        now = self.clock()
        budget = CROWD_CHUNK
        while self.queue and self.queue[0][0] <= now and budget > 0:
            due, version, out = self.queue[0]
            if self._targets is None:
                self._targets, self._next = list(self.spectators), 0
            targets = self._targets
            end = min(len(targets), self._next + budget)
            for conn in targets[self._next : end]:
                if version > conn.last_version:
                    conn.last_version = version
                    if conn.delayed:  # its catch-up is still being released: after it
                        conn.send_at(due, out)
                    else:
                        conn.send_frame_now(out.frame(conn.binary))
            budget -= end - self._next
            self._next = end
            if end < len(targets):
                break
            self.queue.popleft()
            self._targets = None
        self.arm()

    # ------------------------------------------------------------ hidden-card boards

    def board_for(
        self, event: p.Event, race: Race, boards: dict[int, core.Game] | None
    ) -> dict[str, Any] | None:
        """Hidden-card games: the board spectators get with `event` (the mover's after a
        move, the starting one at the start), its undealt cards face down. `boards` are
        the spectators' boards as of this event."""
        if not race.config.hidden:
            return None
        if isinstance(event, p.RaceStarted):
            start = core.new_game(race.config.game, race.seed).state(view="player")
            return shown_board(start, self.hidden(race, boards))
        if not isinstance(event, p.Progress) or boards is None:
            return None
        game = boards.get(event.seat)
        if game is None or game.moves != event.moves:
            return None
        return shown_board(game.state(view="player"), self.hidden(race, boards))

    def advance_board(self, event: p.Progress, boards: dict[int, core.Game] | None = None) -> None:
        """Play a move on the spectators' board of its seat."""
        boards = self.boards if boards is None else boards
        assert boards is not None
        game = boards.get(event.seat)
        if game is None or event.move is None or game.moves != event.moves - 1:
            return
        try:
            play(game, event.move)
        except ValueError:
            log.warning("room %s: spectator board of seat %s diverged", self.room, event.seat)
            boards.pop(event.seat, None)

    def hidden(self, race: Race, boards: dict[int, core.Game] | None = None) -> frozenset[str]:
        """The cards spectators may not see now (server/room/view.py's rule)."""
        if race.status is Status.FINISHED:
            return frozenset()
        boards = self.boards if boards is None else boards
        if not self.order:
            self.order = deal_order(race.config.game, race.seed)
        talons = [
            len(game.talon)
            for seat, game in (boards or {}).items()
            if (info := race.seats.get(seat)) is not None and info.racing
        ]
        return hidden_cards(self.order, talons)

    async def ensure_boards(self, race: Race) -> None:
        """Every seat has its spectator board (a seat taken after the first spectator came
        too): from its accepted moves in the store."""
        if self.boards is None:
            self.boards = {}
        self.order = deal_order(race.config.game, race.seed)
        for seat, info in race.seats.items():
            if seat not in self.boards and not info.ghost:  # a ghost has progress, no board
                moves = [m for _, m in await self._moves(seat)]
                self.boards[seat] = replay(race.config.game, race.seed, moves[: info.moves])

    # ------------------------------------------------------------ snapshots

    async def send_snapshot(
        self,
        conn: Connection,
        race: Race,
        view: p.RoomView,
        version: int,
        history: Callable[[], Awaitable[list[p.Event]]],
    ) -> None:
        """The room as a spectator sees it now: `spectator_delay` seconds ago. The events
        after that (`history`: the room's events up to `version`, the room's own) are
        still in the queue and reach this socket when due."""
        delay = race.config.spectator_delay
        cutoff = self.clock() - delay
        shown_version = version
        pending: list[p.Event] = []
        last_end = None
        if delay > 0:
            events = await history()
            pending = [e for e in events if e.at > cutoff]
            if pending:
                shown_version = pending[0].version - 1
            ends = [
                e for e in events if isinstance(e, p.RaceFinished) and e.version <= shown_version
            ]
            last_end = ends[-1] if ends else None
        # The room as of `shown_version` (the events after it are pending): the same for
        # every spectator who comes before the room changes.
        key = (id(race), version, shown_version)
        shown = self._shown
        if shown is None or shown[0] != key:
            room_as_of(view, pending, race.config.hidden, last_end)
            # A ghost has no board: it is shown after the steps it had made by then.
            ahead = sum(isinstance(e, p.Progress) and _ghost_seat(race, e.seat) for e in pending)
            ghost_played = race.ghost_pos - ahead
            shown = self._shown = (
                key,
                *await self._view(race, view, cutoff, shown_version, ghost_played),
            )
        out, games = shown[1], shown[2]
        conn.send(out)
        # The events after the snapshot, each when due; in hidden games with the boards
        # advanced from this snapshot's own (the live ones are ahead of them).
        fresh = {s: g.copy() for s, g in games.items()} if race.config.hidden and pending else None
        # A pending new round: the events before it are of the last round, whose boards
        # are gone (`games` are the new deal's): they go without one, its start too.
        last_round = any(isinstance(e, p.NewRound) for e in pending)
        own = None if last_round else fresh
        for event in pending:
            if isinstance(event, p.NewRound) and event.round == race.round:
                own, last_round = fresh, False
            if isinstance(event, p.Progress) and own is not None:
                self.advance_board(event, own)
            board = None if last_round else self.board_for(event, race, own)
            out = Outgoing(event, view_event(p.to_wire(event), Viewer.SPECTATOR, board))
            conn.send_at(spectator_due(event, delay), out)
        conn.last_version = version

    async def _view(
        self, race: Race, view: p.RoomView, cutoff: float, version: int, ghost_played: int
    ) -> tuple[Outgoing, dict[int, core.Game]]:
        """The snapshot (as of event `version`, the moves made by `cutoff`, a ghost's first
        `ghost_played` steps; `view` already as of `version`), and the boards it shows."""
        boards: dict[str, Any] = {}
        games: dict[int, core.Game] = {}
        if race.status in (Status.RUNNING, Status.FINISHED):
            for seat, info in race.seats.items():
                if info.ghost:
                    continue  # progress and splits only: its moves are not the room's
                moves = await self._moves(seat)
                played = [m for t, m in moves if t <= cutoff][: info.moves]
                games[seat] = replay(race.config.game, race.seed, played)
        # Boards once the race has started as of `version` (before, the pending `started`
        # brings the deal); `games` all the same, to advance along the pending moves.
        # Not after a round that has since been dealt again: its moves are gone and the
        # new deal is not due yet.
        if view["status"] in (Status.RUNNING, Status.FINISHED) and view["round"] == race.round:
            hidden = self.hidden(race, games) if race.config.hidden else frozenset[str]()
            for seat, game in games.items():
                boards[str(seat)] = shown_board(game.state(view="player"), hidden)
                for player in view["players"]:
                    if player["seat"] == seat:
                        player["progress"], player["moves"] = game.progress, game.moves
                        player["won"], player["stuck"] = game.won, game.stuck
                        player["splits"] = _splits_by(player["splits"], race.start_at, cutoff)
            for player in view["players"]:
                if _ghost_seat(race, player["seat"]):
                    player["progress"], player["moves"], player["won"], player["splits"] = (
                        race.ghost_run(ghost_played)
                    )
        return Outgoing(p.Snapshot(version=version, room=view, boards=boards or None)), games


def _ghost_seat(race: Race, seat: int) -> bool:
    """`seat` is the race's ghost (a recorded run: progress, no board)."""
    info = race.seats.get(seat)
    return info is not None and info.ghost


def _splits_by(
    splits: list[float | None], start_at: float | None, cutoff: float
) -> list[float | None]:
    """The splits reached by `cutoff` (a split, once reached, stays: the earlier ones are
    those of the race as of then)."""
    if start_at is None:
        return splits
    return [s if s is not None and start_at + s <= cutoff else None for s in splits]
