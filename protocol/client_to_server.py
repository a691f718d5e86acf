"""Every message a client sends to the server (lila-ws's `ClientToServer`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Union

from protocol.message import Message

__all__ = [
    "ClientToServer",
    "Hint",
    "Identify",
    "Join",
    "Leave",
    "Legal",
    "LobbyUnwatch",
    "LobbyWatch",
    "Move",
    "Ping",
    "QuickCancel",
    "QuickMatch",
    "Ready",
    "Rematch",
    "Resign",
    "Resync",
    "Start",
    "Undo",
    "Watch",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Identify(Message):
    """Act as the player whose secret key this is, from now on on this socket (send it
    first): seats, quick matches and registrations then belong to that player. Answered
    by `identified`, or `error` bad_key (the socket stays anonymous)."""

    TYPE: ClassVar[str] = "identify"
    key: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Join(Message):
    """Take a seat (no token, lobby only) or come back to one (token, any time).

    `since`: the last event version seen; the server sends what was missed after it,
    or a snapshot when it is too far behind or `since` is absent.
    """

    TYPE: ClassVar[str] = "join"
    room: str
    name: str = ""
    token: str | None = None
    since: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Watch(Message):
    """Watch a room as a spectator (every board, after the room's spectator delay)."""

    TYPE: ClassVar[str] = "watch"
    room: str
    since: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Move(Message):
    """A move in the engine's notation (`t5 t2 3`, `r2 f`, `deal`); `seq` counts up from 1."""

    TYPE: ClassVar[str] = "move"
    seq: int
    move: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Undo(Message):
    TYPE: ClassVar[str] = "undo"
    seq: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Hint(Message):
    TYPE: ClassVar[str] = "hint"


@dataclass(frozen=True, slots=True, kw_only=True)
class Legal(Message):
    """Ask for the legal moves on your board and the safe moves autoplay would play: a
    client that carries no rules (the web client) highlights targets and autoplays with
    them. Changes nothing."""

    TYPE: ClassVar[str] = "legal"


@dataclass(frozen=True, slots=True, kw_only=True)
class Ready(Message):
    TYPE: ClassVar[str] = "ready"
    ready: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class Start(Message):
    """The host (seat 0) starts the countdown without waiting for everyone to be ready."""

    TYPE: ClassVar[str] = "start"


@dataclass(frozen=True, slots=True, kw_only=True)
class Resign(Message):
    TYPE: ClassVar[str] = "resign"


@dataclass(frozen=True, slots=True, kw_only=True)
class Rematch(Message):
    """Vote for a rematch after the end; when every player voted, a new deal starts."""

    TYPE: ClassVar[str] = "rematch"


@dataclass(frozen=True, slots=True, kw_only=True)
class Leave(Message):
    """Give up the seat in the lobby (during a race, use resign)."""

    TYPE: ClassVar[str] = "leave"


@dataclass(frozen=True, slots=True, kw_only=True)
class QuickMatch(Message):
    """Ask for a head-to-head race in `game`; answered by `queued`, then `matched`."""

    TYPE: ClassVar[str] = "quick"
    game: str
    name: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class QuickCancel(Message):
    TYPE: ClassVar[str] = "quick_cancel"


@dataclass(frozen=True, slots=True, kw_only=True)
class Ping(Message):
    TYPE: ClassVar[str] = "ping"
    id: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Resync(Message):
    """Ask for the events after `since` again (or a snapshot), e.g. after a version gap."""

    TYPE: ClassVar[str] = "resync"
    since: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TourWatch(Message):
    """Follow a tournament's standings (players, spectators and organiser alike): answered
    by `tournament` at once and again whenever it changes. `token`: a player's token, to
    get their own line (`you`) with their room during a race. `top` rows from `offset`
    (0-based) of the standings; a later `tour_watch` on the same socket replaces it."""

    TYPE: ClassVar[str] = "tour_watch"
    tournament: str
    token: str | None = None
    top: int = 20
    offset: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class TourUnwatch(Message):
    """Stop following the tournament this socket follows."""

    TYPE: ClassVar[str] = "tour_unwatch"


@dataclass(frozen=True, slots=True, kw_only=True)
class LobbyWatch(Message):
    """Follow the lobby: the open and running rooms. Answered by `lobby` (the list now) at
    once, then `lobby_changed` (only what changed) while anything changes, at most four
    times a second, the latest state of each room."""

    TYPE: ClassVar[str] = "lobby_watch"


@dataclass(frozen=True, slots=True, kw_only=True)
class LobbyUnwatch(Message):
    """Stop following the lobby."""

    TYPE: ClassVar[str] = "lobby_unwatch"


ClientToServer = Union[  # noqa: UP007 - a runtime alias: typing.get_args lists the classes
    Identify,
    Join,
    Watch,
    Move,
    Undo,
    Hint,
    Legal,
    Ready,
    Start,
    Resign,
    Rematch,
    Leave,
    QuickMatch,
    QuickCancel,
    Ping,
    Resync,
    TourWatch,
    TourUnwatch,
    LobbyWatch,
    LobbyUnwatch,
]
