"""The race as a pure state machine: lobby -> countdown -> running -> finished.

Sans-I/O in the manner of python-websockets: every method takes the event and the current
time (`now`, Unix seconds, passed in) and returns an `Outcome`: the events to append to the
room's log and send. Nothing here awaits, stores or reads a clock: the store
(server/storage/store.py, `RoomStore.transact`) runs a method on the stored race and writes what
it returns (Redis, pub/sub); the handlers (server/handlers/lobby.py, server/live/hub.py's deadlines
and server/edge/sweeper.py) call it.

A refused action raises `RaceError` (with a protocol `ErrorCode`) and changes nothing.

Who holds a seat is decided here: a seat has a token (its hash) and the set of sockets
attached to it, in any process (`Seat.conns`); it is away only when the last of them is
gone, and an away seat loses the race after `grace` seconds (forfeit) or, in the lobby,
loses the seat itself (the host role passes to the lowest seat left). Every action of a
socket names the token it holds (`holder`): a socket whose player gave the seat up holds
nothing, whoever sits there now. Moves are judged by server/room/checklist.py and move.lua.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

import protocol as p
from core import splits
from protocol import ErrorCode
from server.room.ghost import GHOST_OUT

__all__ = [
    "FinishedRound",
    "Outcome",
    "Race",
    "RaceError",
    "RoomConfig",
    "Seat",
    "Status",
    "race_time",
    "rank",
    "ranked",
    "result_line",
]

# The keys a lobby entry keeps of the room view, and of each player's (protocol's types).
_LOBBY_KEYS = tuple(k for k in p.LobbyRoom.__annotations__ if k != "players")
_LOBBY_PLAYER_KEYS = tuple(p.LobbyPlayer.__annotations__)

GHOST_TOKEN = "ghost"  # a ghost seat's token hash: no token hashes to it (SHA-256 hex)
MAX_SOCKETS_PER_SEAT = 32  # recorded sockets of one seat; the oldest record goes first


class Status(enum.StrEnum):
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RUNNING = "running"
    FINISHED = "finished"


class RaceError(Exception):
    """An action the race refuses; nothing changed."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class RoomConfig:
    """What the room's creator chose; fixed for the room's life."""

    game: str
    seats: int = 2
    seed_mode: str = "random"  # "fixed", "random" or "winnable"
    undo: bool = True
    hints: bool = False
    time_limit: float | None = None  # seconds, None: no limit
    spectator_delay: float = 0.0
    grace: float = 30.0
    countdown: float = 3.0
    hidden: bool = False  # the game hides information (Moojub's talon): seed secret, boards sent
    tournament: str | None = None  # a tournament's race: one deal, no rematch
    ghost: str | None = None  # a ghost race: the race whose recorded run the ghost seat replays
    # What kind of race it is: "room" (made by someone), "quick" (a quick match),
    # "tournament" or "ghost"; and whether it moves the players' ratings (records/ratings.py).
    kind: str = "room"
    rated: bool = True
    daily: str | None = None  # a daily deal's ranked attempt: "DATE GAME" (server/daily/)
    # A room on a daily deal that is not its ranked attempt (practice, a ghost race of an
    # attempt or of a practice race): "DATE GAME". Played as any room (not ranked, no
    # `daily` rules); only who may see it follows the attempt's (`deal_line`).
    daily_deal: str | None = None
    # Other rooms race this deal at the same time (a Rounds round's heats): a hidden-card
    # game's seed then stays secret after the end too, since it would give the talon's
    # order away to those still racing it; the tournament publishes it with the round.
    shared_deal: bool = False

    @property
    def seed_secret(self) -> bool:
        """The seed is kept from the racers until the end: a hidden-card game's (it would
        give the talon's order away) and a daily deal's ranked attempt's (nobody looks the
        deal up while it counts, section 13 of docs/protocol.md)."""
        return self.hidden or self.daily is not None

    @property
    def deal_line(self) -> str | None:
        """The daily deal ("DATE GAME") whose line this room's moves show, if any: until
        its day is over, only those whose own attempt at it is over may see them
        (server/edge/daily_routes.py `line_open`)."""
        return self.daily or self.daily_deal


@dataclass(slots=True)
class Seat:
    name: str
    token_hash: str
    ready: bool = False
    # The sockets holding this seat, in any process ("PROCESS-SOCKET" ids): the seat is
    # away only when none is left.
    conns: list[str] = field(default_factory=list)
    # Away: when it forfeits (racing) or is freed (lobby; after the end, when the rematch
    # waits only for it: Race._rematch_graces).
    grace_until: float | None = None
    progress: int = 0
    moves: int = 0
    won: bool = False
    stuck: bool = False
    out: str | None = None  # "resigned" or "forfeit"
    done_at: float | None = None  # when it won, got stuck or went out
    rematch: bool = False
    ghost: bool = False  # a recorded run, replayed by the race itself (server/room/ghost.py)
    # Seconds since the start at each quarter of the cards up (core/splits.py), None
    # where not reached: tracked by the seat's session, stored with each move.
    splits: list[float | None] = field(default_factory=lambda: list(splits.empty()))
    # Whose seat it is: the player's id (None: taken with no identity), and whether that
    # player is a bot (shown as one everywhere, never rated).
    player: str | None = None
    bot: bool = False

    @property
    def connected(self) -> bool:
        return self.ghost or bool(self.conns)

    @property
    def racing(self) -> bool:
        """Still able to change the result: not won, not out (stuck may still undo)."""
        return not self.won and self.out is None

    @property
    def done(self) -> bool:
        return self.won or self.stuck or self.out is not None

    def reset(self) -> None:
        self.progress = self.moves = 0
        self.won = self.stuck = self.rematch = False
        self.out = None
        self.done_at = self.grace_until = None
        self.splits = list(splits.empty())


@dataclass(slots=True)
class Outcome:
    """What an action produced: events to log and send (versions are given on append)."""

    events: list[p.Event] = field(default_factory=list)
    changed: bool = False  # the race changed without an event (a socket recorded)

    def __bool__(self) -> bool:
        return bool(self.events) or self.changed


class FinishedRound(TypedDict):
    """How a round ended, as GET /rooms/{id}/results gives it: `seed` as the finished
    round shows it (None: kept secret, `Race.seed_public`)."""

    round: int
    seed: int | None
    finish_reason: str | None
    results: list[p.Result]


def _unique(name: str, seats: Iterable[Seat], reserved: bool = False) -> str:
    """`name`, numbered (`ann 2`) when another seat has it: two terminals of one account
    (both named after $USER) must not look alike to the players and spectators.
    `reserved`: numbered anyway (an anonymous seat typing a player's name: the bare name
    is that player's alone)."""
    taken = {seat.name for seat in seats}
    if reserved:
        taken.add(name)
    number = 1
    unique = name
    while unique in taken:
        number += 1
        suffix = f" {number}"
        unique = name[: 32 - len(suffix)] + suffix
    return unique


def race_time(at: float, start_at: float) -> float:
    """Seconds since the start of a move made at `at`, as its replay reads it: the store
    keeps a move's time to the millisecond (core/replay.py rounds the difference). The one
    reading of a race's times: a winner's result, its splits, its replay's lines."""
    return round(round(at * 1000) / 1000 - start_at, 3)


def result_line(
    *,
    seat: int,
    name: str,
    won: bool,
    stuck: bool,
    out: str | None,
    progress: int,
    moves: int,
    time: float | None,
    splits: list[float | None],
    player: str | None,
    bot: bool,
) -> p.Result:
    """One seat's RESULT, not ranked yet (`ranked` gives it its rank): the one shape of a
    result line, whether a live race's seats or the archive's rows are read
    (server/room/archived.py)."""
    return {
        "rank": 0,
        "seat": seat,
        "name": name,
        "won": won,
        "stuck": stuck,
        "out": out,
        "progress": progress,
        "moves": moves,
        "time": time,
        "splits": splits,
        "player": player,
        "bot": bot,
    }


def ranked(lines: Iterable[p.Result]) -> list[p.Result]:
    """Results: winners by finishing time, then everyone by progress, then fewer moves;
    lines of equal keys in seat order.

    Equal keys share a rank (1, 2, 2, 4).
    """

    def key(line: p.Result) -> tuple[int, float, int, int]:
        time = line["time"] if line["won"] and line["time"] is not None else 0.0
        return (0 if line["won"] else 1, time, -line["progress"], line["moves"])

    results: list[p.Result] = []
    previous: tuple[int, float, int, int] | None = None
    for position, line in enumerate(sorted(lines, key=lambda x: (key(x), x["seat"])), start=1):
        k = key(line)
        place = results[-1]["rank"] if k == previous else position
        previous = k
        results.append({**line, "rank": place})
    return results


def rank(seats: dict[int, Seat], started_at: float) -> list[p.Result]:
    """The seats' ranked results (`ranked`)."""
    return ranked(
        result_line(
            seat=index,
            name=seat.name,
            won=seat.won,
            stuck=seat.stuck,
            out=seat.out,
            progress=seat.progress,
            moves=seat.moves,
            time=race_time(seat.done_at, started_at)
            if seat.won and seat.done_at is not None
            else None,
            splits=list(seat.splits),
            player=seat.player,
            bot=seat.bot,
        )
        for index, seat in seats.items()
    )


@dataclass(slots=True)
class Race:
    """One room's race. Seats are keyed by a stable index; the host is the lowest index."""

    room: str
    config: RoomConfig
    seed: int
    created_at: float
    status: Status = Status.LOBBY
    round: int = 1
    seats: dict[int, Seat] = field(default_factory=dict)
    start_at: float | None = None
    ends_at: float | None = None
    finished_at: float | None = None
    finish_reason: str | None = None
    results: list[p.Result] | None = None
    # A ghost race: the ghost seat's recorded steps ([t, progress, moves, won, move], t
    # seconds since the start; a room stored before the move was kept has no `move`) and
    # how many of them have been played.
    ghost_steps: list[list[Any]] = field(default_factory=list)
    ghost_pos: int = 0
    # The round before this one, as it ended: the room's latest results while a rematch's
    # round counts down and runs (`finished_round`).
    last_round: FinishedRound | None = None
    # The rematch's deal, drawn with the first vote: the round a `tick` starts (the away
    # players who did not vote freed) has no vote to bring one.
    rematch_seed: int | None = None

    # ------------------------------------------------------------ views

    @property
    def host(self) -> int | None:
        return min(self.seats) if self.seats else None

    def seed_public(self) -> bool:
        """Open games show the seed from the start; one whose seed is secret
        (`RoomConfig.seed_secret`) only after the end, unless other rooms race the same deal
        (`RoomConfig.shared_deal`)."""
        if not self.config.seed_secret:
            return self.status in (Status.RUNNING, Status.FINISHED)
        return self.status is Status.FINISHED and not self.config.shared_deal

    def finished_round(self) -> FinishedRound | None:
        """The latest round that has finished: this one once it has, else the one before
        (a rematch's round counting down or running); None before the first has."""
        if self.results is None:
            return self.last_round
        return {
            "round": self.round,
            "seed": self.seed if self.seed_public() else None,
            "finish_reason": self.finish_reason,
            "results": self.results,
        }

    def next_deadline(self) -> float | None:
        """When `tick` next has something to do, if ever."""
        if self.status is Status.LOBBY:
            times = [s.grace_until for s in self.seats.values() if s.grace_until]
            return min(times) if times else None
        if self.status is Status.COUNTDOWN:
            return self.start_at
        if self.status is Status.RUNNING:
            live = [s for s in self.seats.values() if not s.ghost]
            if all(s.done for s in live):
                # The finish is due (a ghost runs to its end first, `tick`): the last seat
                # got done by a move (move.lua), which writes no transition. A deadline like
                # any other, it is tried again when its write fails (Redis out of reach
                # then), by any process holding the room open: a race that nobody finished
                # would stay running for ever.
                return max((s.done_at or 0.0 for s in live), default=0.0)
            times = [s.grace_until for s in self.seats.values() if s.grace_until and s.racing]
            if self.ends_at is not None:
                times.append(self.ends_at)
            if self.start_at is not None and self.ghost_pos < len(self.ghost_steps):
                times.append(self.start_at + self.ghost_steps[self.ghost_pos][0])
            return min(times) if times else None
        times = [s.grace_until for s in self.seats.values() if s.grace_until is not None]
        return min(times) if times else None

    def view(self) -> p.RoomView:
        """The public room view (docs/protocol.md "room"): no tokens, no secret seed."""
        return {
            "id": self.room,
            "game": self.config.game,
            "status": self.status.value,
            "round": self.round,
            "seed": self.seed if self.seed_public() else None,
            "seats": self.config.seats,
            "host": self.host,
            "undo": self.config.undo,
            "hints": self.config.hints,
            "time_limit": self.config.time_limit,
            "spectator_delay": self.config.spectator_delay,
            "grace": self.config.grace,
            "countdown": self.config.countdown,
            "seed_mode": self.config.seed_mode,
            "tournament": self.config.tournament,
            "ghost": self.config.ghost,
            "kind": self.config.kind,
            "rated": self.config.rated,
            "daily": self.config.daily,
            "daily_deal": self.config.daily_deal,
            "created_at": self.created_at,
            "start_at": self.start_at,
            "ends_at": self.ends_at,
            "finished_at": self.finished_at,
            "finish_reason": self.finish_reason,
            "players": [
                {
                    "seat": i,
                    "name": s.name,
                    "ready": s.ready,
                    "connected": s.connected,
                    "grace_until": s.grace_until,
                    "progress": s.progress,
                    "moves": s.moves,
                    "won": s.won,
                    "stuck": s.stuck,
                    "out": s.out,
                    "rematch": s.rematch,
                    "splits": list(s.splits),
                    "player": s.player,
                    "bot": s.bot,
                    "ghost": s.ghost,
                }
                for i, s in sorted(self.seats.items())
            ],
            "results": self.results,
        }

    def lobby_view(self) -> p.LobbyRoom:
        """The room as the lobby lists it (docs/protocol.md LOBBY_ROOM): the keys of
        `p.LobbyRoom`, only what changes with a transition (seats, readiness, presence,
        status), so that the copy published with each transition stays true until the next."""
        view = self.view()
        entry = {key: view[key] for key in _LOBBY_KEYS}  # type: ignore[literal-required]
        entry["players"] = [
            {key: player[key] for key in _LOBBY_PLAYER_KEYS}  # type: ignore[literal-required]
            for player in view["players"]
        ]
        return cast(p.LobbyRoom, entry)

    # ------------------------------------------------------------ lobby

    def seat_of(self, player: str | None) -> int | None:
        """The seat `player` holds here, if any: one player holds at most one seat."""
        if player is None:
            return None
        return next((i for i, s in self.seats.items() if s.player == player), None)

    def join(
        self,
        name: str,
        token_hash: str,
        now: float,
        conn: str | None = None,
        *,
        player: str | None = None,
        bot: bool = False,
        reserved: bool = False,
    ) -> tuple[int, Outcome]:
        """A new seat for `name` (numbered when another seat has it, or when `reserved`:
        another player's name), held by `token_hash`; `player`, when the joiner has an
        identity, owns it (bot: a bot player)."""
        if self.seat_of(player) is not None:
            raise RaceError(ErrorCode.ALREADY_JOINED, "you already hold a seat in this room")
        if self.status is Status.FINISHED:
            raise RaceError(
                ErrorCode.ROOM_CLOSED,
                "the race is over: no new seats (watch the room for its results)",
            )
        if self.status is not Status.LOBBY:
            raise RaceError(ErrorCode.ROOM_CLOSED, "the race has started: watch it instead")
        out = self.tick(now)  # a seat whose lobby grace is over is free again
        if len(self.seats) >= self.config.seats:
            raise RaceError(ErrorCode.ROOM_FULL, "every seat is taken")
        index = next(i for i in range(self.config.seats + 1) if i not in self.seats)
        name = _unique(name.strip()[:32] or f"player {index + 1}", self.seats.values(), reserved)
        self.seats[index] = Seat(
            name=name,
            token_hash=token_hash,
            conns=[conn] if conn is not None else [],
            player=player,
            bot=bot,
        )
        out.events.append(
            p.PlayerJoined(version=0, at=now, seat=index, name=name, player=player, bot=bot)
        )
        return index, out

    def add_ghost(self, name: str, steps: list[list[Any]], now: float) -> Outcome:
        """Seat the ghost (the last seat; nobody can hold it) with its recorded steps."""
        if self.config.ghost is None or self.status is not Status.LOBBY or self.ghost_steps:
            raise RaceError(ErrorCode.BAD_REQUEST, "this room has no ghost to seat")
        index = self.config.seats - 1
        self.seats[index] = Seat(name=name, token_hash=GHOST_TOKEN, ready=True, ghost=True)
        self.ghost_steps = steps
        return Outcome(
            [
                p.PlayerJoined(version=0, at=now, seat=index, name=name),
                p.PlayerReady(version=0, at=now, seat=index, ready=True),
            ]
        )

    def rekey(self, index: int, token_hash: str, now: float) -> Outcome:
        """The seat is held by a new token from now on (its owner opened it again on
        another device: server/daily/); sockets holding the old one hold nothing: the seat
        is away until one joins again (the `presence` lets every process let them go)."""
        seat = self._seat(index)
        seat.token_hash = token_hash
        if not seat.conns:
            return Outcome(changed=True)
        seat.conns.clear()
        return self._away(index, seat, now)

    def holder(self, index: int | None, token_hash: str | None) -> Seat:
        """The seat `index` if `token_hash` holds it: asked before every action of a
        socket, so that a socket whose player gave the seat up acts for nobody."""
        seat = self.seats.get(index) if index is not None else None
        if seat is None or seat.ghost or token_hash is None or seat.token_hash != token_hash:
            raise RaceError(ErrorCode.NOT_JOINED, "this socket holds no seat here: join again")
        return seat

    def leave(self, index: int, now: float) -> Outcome:
        self._seat(index)
        if self.status is Status.FINISHED:
            raise RaceError(
                ErrorCode.NOT_RUNNING,
                "the race is over: the seat stays with its results (close the socket to go)",
            )
        if self.status is not Status.LOBBY:
            raise RaceError(ErrorCode.NOT_RUNNING, "the race has started: resign instead")
        del self.seats[index]
        return Outcome([p.PlayerLeft(version=0, at=now, seat=index)])

    def set_ready(self, index: int, ready: bool, now: float) -> Outcome:
        seat = self._seat(index)
        if self.status is not Status.LOBBY:
            raise RaceError(ErrorCode.NOT_RUNNING, "ready only counts in the lobby")
        seat.ready = ready
        out = Outcome([p.PlayerReady(version=0, at=now, seat=index, ready=ready)])
        if len(self.seats) == self.config.seats and all(s.ready for s in self.seats.values()):
            out.events += self._countdown(now).events
        return out

    def start(self, index: int, now: float) -> Outcome:
        self._seat(index)
        if index != self.host:
            raise RaceError(ErrorCode.NOT_HOST, "only the host starts the race")
        if self.status is not Status.LOBBY:
            raise RaceError(ErrorCode.NOT_RUNNING, "the race is not in its lobby")
        return self._countdown(now)

    def _countdown(self, now: float) -> Outcome:
        self.status = Status.COUNTDOWN
        self.start_at = now + self.config.countdown
        return Outcome([p.Countdown(version=0, at=now, start_at=self.start_at)])

    # ------------------------------------------------------------ presence

    def connected(self, index: int, conn: str, now: float) -> Outcome:
        """Socket `conn` holds this seat too (a reconnect, a second socket)."""
        seat = self._seat(index)
        if conn in seat.conns:
            return Outcome()
        was_connected = seat.connected
        seat.conns.append(conn)
        del seat.conns[:-MAX_SOCKETS_PER_SEAT]
        if was_connected:
            return Outcome(changed=True)
        seat.grace_until = None
        out = Outcome([p.Presence(version=0, at=now, seat=index, connected=True)])
        if self.status is Status.FINISHED and self._rematch_due():
            out.events += self._new_round(now).events  # it waited for a voter to be here
        return out

    def disconnected(self, index: int, conn: str, now: float) -> Outcome:
        """Socket `conn` is gone (closed, or its process died); the seat is away when it
        was the last one: the grace clock runs (racing), or the lobby grace (lobby)."""
        seat = self.seats.get(index)
        if seat is None or conn not in seat.conns:
            return Outcome()
        seat.conns.remove(conn)
        if seat.conns:
            return Outcome(changed=True)
        return self._away(index, seat, now)

    def unheld(self, index: int, now: float) -> Outcome:
        """Seat `index` was taken for a socket still on its way (a quick match's players,
        seated together by whichever process paired them): away until a socket holds it,
        so that a player who never comes forfeits after the grace as one who left does."""
        seat = self._seat(index)
        if seat.connected:
            return Outcome()
        return self._away(index, seat, now)

    def _away(self, index: int, seat: Seat, now: float) -> Outcome:
        if self.status is Status.FINISHED:
            graces = self._rematch_graces(now)  # the rematch may now wait only for the away
            if any(e.seat == index for e in graces):
                return Outcome([*graces])
            gone = p.Presence(version=0, at=now, seat=index, connected=False, grace_until=None)
            return Outcome([gone, *graces])
        racing = self.status in (Status.COUNTDOWN, Status.RUNNING) and seat.racing
        # Forfeit, or the seat freed, after the grace; a tournament's seats are the
        # organiser's to give, never freed.
        freed = self.status is Status.LOBBY and self.config.tournament is None
        if racing or freed:
            seat.grace_until = now + self.config.grace
        return Outcome(
            [
                p.Presence(
                    version=0, at=now, seat=index, connected=False, grace_until=seat.grace_until
                )
            ]
        )

    # ------------------------------------------------------------ racing

    def resign(self, index: int, now: float) -> Outcome:
        seat = self._seat(index)
        if self.status not in (Status.COUNTDOWN, Status.RUNNING):
            raise RaceError(ErrorCode.NOT_RUNNING, "there is no race to resign from")
        if not seat.racing:
            raise RaceError(ErrorCode.PLAYER_OUT, "you are no longer racing")
        return self._out(index, "resigned", now)

    def _out(self, index: int, reason: str, now: float) -> Outcome:
        seat = self.seats[index]
        seat.out = reason
        seat.grace_until = None
        seat.done_at = seat.done_at or now
        out = Outcome([p.PlayerOut(version=0, at=now, seat=index, reason=reason)])
        out.events += self.tick(now).events
        return out

    def tick(self, now: float) -> Outcome:
        """Do whatever is due at `now`: free lobby seats whose player stayed away past the
        grace, start, forfeits, time up, everyone done. Idempotent."""
        out = Outcome()
        if self.status in (Status.LOBBY, Status.FINISHED):
            for index, seat in sorted(self.seats.items()):
                if not seat.connected and seat.grace_until is not None and now >= seat.grace_until:
                    del self.seats[index]
                    out.events.append(p.PlayerLeft(version=0, at=now, seat=index))
            if self.status is Status.FINISHED and out.events and self._rematch_due():
                out.events += self._new_round(now).events
            return out
        if self.status is Status.COUNTDOWN and self.start_at is not None and now >= self.start_at:
            self.status = Status.RUNNING
            limit = self.config.time_limit
            self.ends_at = self.start_at + limit if limit else None
            for seat in self.seats.values():
                if not seat.connected and seat.grace_until is None:
                    seat.grace_until = self.start_at + self.config.grace
            out.events.append(
                p.RaceStarted(
                    version=0,
                    at=now,
                    game=self.config.game,
                    seed=None if self.config.seed_secret else self.seed,
                    ends_at=self.ends_at,
                )
            )
        if self.status is not Status.RUNNING:
            return out
        # The ghost makes no move after the time limit, as no racer can.
        limit = math.inf if self.ends_at is None else self.ends_at
        out.events += self._ghost(min(now, limit), now)
        for index, seat in sorted(self.seats.items()):
            if seat.racing and seat.grace_until is not None and now >= seat.grace_until:
                seat.out = "forfeit"
                seat.grace_until = None
                seat.done_at = seat.done_at or now
                out.events.append(p.PlayerOut(version=0, at=now, seat=index, reason="forfeit"))
        cut = False  # the ghost's run goes on past the limit: its race is over now
        if self.ghost_steps and all(s.done for s in self.seats.values() if not s.ghost):
            # Nobody left to race the ghost: it runs to its end (its recorded times).
            out.events += self._ghost(limit, now)
            cut = self.ghost_pos < len(self.ghost_steps)
        if self.ends_at is not None and (now >= self.ends_at or cut):
            out.events.append(self._finish(now, "time_up"))
        elif all(s.done for s in self.seats.values()):
            out.events.append(self._finish(now, "all_done"))
        return out

    def _ghost(self, until: float, now: float) -> list[p.Event]:
        """The ghost's steps due by `until` (server time), one `progress` each, at its
        recorded time (or now, for a step played ahead of it: the ghost running to its
        end), and its `player_out` when its run ends without a win."""
        index = next((i for i, s in self.seats.items() if s.ghost), None)
        if index is None or self.start_at is None:
            return []
        seat, steps, start = self.seats[index], self.ghost_steps, self.start_at
        marks = splits.marks(self.config.game)
        events: list[p.Event] = []
        while self.ghost_pos < len(steps) and start + steps[self.ghost_pos][0] <= until:
            t, progress, moves, won = steps[self.ghost_pos][:4]
            self.ghost_pos += 1
            after = list(splits.advance(tuple(seat.splits), marks, progress, t))
            reached = after != seat.splits
            seat.splits, seat.progress, seat.moves = after, progress, moves
            if won:
                seat.won, seat.done_at = True, start + t
            events.append(
                p.Progress(
                    version=0,
                    at=min(now, start + t),
                    seat=index,
                    progress=progress,
                    moves=moves,
                    won=seat.won,
                    stuck=False,
                    splits=list(after) if reached else None,
                )
            )
        if self.ghost_pos >= len(steps) and seat.racing:
            seat.out = GHOST_OUT
            seat.done_at = start + (steps[-1][0] if steps else 0.0)
            # At its last move's time, as that move's progress (never later than now).
            at = min(now, seat.done_at)
            events.append(p.PlayerOut(version=0, at=at, seat=index, reason=GHOST_OUT))
        return events

    def ghost_run(self, played: int) -> tuple[int, int, bool, list[float | None]]:
        """The ghost as it was after its first `played` steps: progress, moves, won and
        splits (a delayed spectator is shown the race as of a past version)."""
        steps = self.ghost_steps[:played]
        reached = splits.empty()
        marks = splits.marks(self.config.game)
        for step in steps:
            reached = splits.advance(reached, marks, step[1], step[0])
        _, progress, moves, won = steps[-1][:4] if steps else (0.0, 0, 0, False)
        return progress, moves, bool(won), list(reached)

    def ghost_moves(self) -> list[tuple[float, str]]:
        """The ghost's moves played so far, (seconds since the start, move), as a seat's
        stored moves are read (its own are not stored: they are its recorded steps)."""
        return [(step[0], step[4]) for step in self.ghost_steps[: self.ghost_pos] if len(step) > 4]

    def _finish(self, now: float, reason: str) -> p.RaceFinished:
        self.status = Status.FINISHED
        self.finished_at = now
        self.finish_reason = reason
        for seat in self.seats.values():
            seat.grace_until = None
        self.results = rank(self.seats, self.start_at or now)
        seed = self.seed if self.seed_public() else None
        return p.RaceFinished(version=0, at=now, results=self.results, seed=seed, reason=reason)

    # ------------------------------------------------------------ after the end

    def rematch(self, index: int, next_seed: int, now: float) -> Outcome:
        """Vote; the last vote deals `next_seed` to the same players and counts down: a
        room on a daily deal (practice) deals that deal again."""
        seat = self._seat(index)
        if self.status is not Status.FINISHED:
            raise RaceError(ErrorCode.NOT_FINISHED, "a rematch comes after the end")
        if self.config.tournament is not None:
            raise RaceError(ErrorCode.NOT_RUNNING, "a tournament's race has no rematch")
        if self.config.ghost is not None:
            raise RaceError(ErrorCode.NOT_RUNNING, "a ghost race has no rematch: race it anew")
        if self.config.daily is not None:  # one ranked attempt a day: practice has its rooms
            raise RaceError(ErrorCode.NOT_RUNNING, "a daily attempt has no rematch: practise")
        out = Outcome()
        if self.rematch_seed is None:
            self.rematch_seed = next_seed
        if not seat.rematch:
            seat.rematch = True
            out.events.append(p.RematchVote(version=0, at=now, seat=index))
        if all(s.rematch for s in self.seats.values()):
            out.events += self._new_round(now).events
        else:
            out.events += self._rematch_graces(now)
        return out

    def _rematch_due(self) -> bool:
        """Every seat left voted for the rematch since an away player's seat was freed
        (`tick`), and one of them is here: a round dealt with every racer away would be
        forfeited by all. Otherwise it waits for a voter to come back (`connected`)."""
        seats = self.seats.values()
        return (
            self.rematch_seed is not None
            and any(s.connected for s in seats)
            and all(s.rematch for s in seats)
        )

    def _rematch_graces(self, now: float) -> list[p.Presence]:
        """After the end, once every player here has voted for the rematch, a player away
        who has not is waited for only for the room's grace (a `presence` says until when):
        then their seat is freed (`tick`) and the rematch deals to those who voted. Without
        it one player gone for good would hold the others' rematch up for ever."""
        here = [s for s in self.seats.values() if s.connected]
        if self.rematch_seed is None or not here or not all(s.rematch for s in here):
            return []
        events = []
        for index, seat in sorted(self.seats.items()):
            if not seat.connected and not seat.rematch and seat.grace_until is None:
                seat.grace_until = now + self.config.grace
                events.append(
                    p.Presence(
                        version=0, at=now, seat=index, connected=False, grace_until=seat.grace_until
                    )
                )
        return events

    def _new_round(self, now: float) -> Outcome:
        """Every seat voted: deal the rematch's seed to the same players and count down."""
        out = Outcome()
        next_seed, self.rematch_seed = self.rematch_seed, None
        assert next_seed is not None  # drawn with the first vote
        self.last_round = self.finished_round()
        self.round += 1
        self.seed = next_seed if self.config.daily_deal is None else self.seed
        self.status = Status.LOBBY
        self.start_at = self.ends_at = self.finished_at = None
        self.finish_reason = None
        self.results = None
        for s in self.seats.values():
            s.reset()
            s.ready = True
        out.events.append(p.NewRound(version=0, at=now, round=self.round))
        out.events += self._countdown(now).events
        # A player away since the end races again: their grace runs from now, and
        # the room says so, as for a racer who drops during a countdown.
        for index, s in sorted(self.seats.items()):
            if not s.connected:
                out.events += self._away(index, s, now).events
        return out

    def _seat(self, index: int) -> Seat:
        seat = self.seats.get(index)
        if seat is None:
            raise RaceError(ErrorCode.NOT_PLAYER, f"there is no player in seat {index}")
        return seat

    # ------------------------------------------------------------ storage form

    def to_dict(self) -> dict[str, Any]:
        # By hand: dataclasses.asdict deep-copies everything and cost ~1 ms per write.
        data = {name: getattr(self, name) for name in _RACE_FIELDS}
        data["config"] = {name: getattr(self.config, name) for name in _CONFIG_FIELDS}
        data["status"] = self.status.value
        data["seats"] = {
            str(i): {name: getattr(s, name) for name in _SEAT_FIELDS} for i, s in self.seats.items()
        }
        if self.rematch_seed is None:
            # Written only when set: a process of the version before it (a rolling deploy)
            # refuses a field it does not know, and most rooms never have one.
            del data["rematch_seed"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Race:
        """A race as `to_dict` wrote it, here or in a later version: a field this version
        does not know (one added since, by a process of the next version during a rolling
        deploy) is left out rather than refused."""
        values = _known(data, _RACE_FIELDS)
        values["config"] = RoomConfig(**_known(data["config"], _CONFIG_FIELDS))
        values["status"] = Status(data["status"])
        values["seats"] = {
            int(i): Seat(**_known(s, _SEAT_FIELDS)) for i, s in data["seats"].items()
        }
        return cls(**values)


def _known(data: dict[str, Any], fields: tuple[str, ...]) -> dict[str, Any]:
    return {name: data[name] for name in fields if name in data}


_RACE_FIELDS = tuple(f.name for f in dataclasses.fields(Race))
_CONFIG_FIELDS = tuple(f.name for f in dataclasses.fields(RoomConfig))
_SEAT_FIELDS = tuple(f.name for f in dataclasses.fields(Seat))
