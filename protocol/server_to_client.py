"""Every message the server sends to a client (lila-ws's `ServerToClient`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, TypedDict, Union

from protocol.codes import PROTOCOL_VERSION
from protocol.message import Message
from protocol.tournament import Standing, TourView, YouView

__all__ = [
    "Accepted",
    "Countdown",
    "Error",
    "Event",
    "HintReply",
    "Identified",
    "LegalReply",
    "LobbyChanged",
    "LobbyPlayer",
    "LobbyRoom",
    "LobbyState",
    "Matched",
    "NewRound",
    "PlayerJoined",
    "PlayerLeft",
    "PlayerOut",
    "PlayerReady",
    "PlayerRef",
    "PlayerView",
    "Pong",
    "Presence",
    "Progress",
    "Queued",
    "RaceFinished",
    "RaceStarted",
    "Refused",
    "RematchVote",
    "Result",
    "RoomView",
    "ServerToClient",
    "Snapshot",
    "Unqueued",
    "Welcome",
]


class PlayerView(TypedDict):
    """One seat in a `RoomView` (docs/protocol.md, the ROOM object)."""

    seat: int
    name: str
    ready: bool
    connected: bool
    grace_until: float | None
    progress: int
    moves: int
    won: bool
    stuck: bool
    out: str | None  # "resigned" or "forfeit"
    rematch: bool
    splits: list[float | None]  # seconds at each quarter of the cards up (core/splits.py)
    player: str | None  # the seated player's id (None: a seat taken with no identity)
    bot: bool
    ghost: bool  # a recorded run raced again (a ghost race's last seat)


class Result(TypedDict):
    """One line of the ranked results (docs/protocol.md, the RESULT object)."""

    rank: int
    seat: int
    name: str
    won: bool
    stuck: bool
    out: str | None
    progress: int
    moves: int
    time: float | None  # seconds from the start to the win
    splits: list[float | None]  # seconds at each quarter of the cards up (core/splits.py)
    player: str | None  # whose result it is (None: a seat taken with no identity)
    bot: bool


class RoomView(TypedDict):
    """The public view of a room (docs/protocol.md, the ROOM object): no tokens, no
    secret seed. A map on the wire; typed here so that the server and clients agree."""

    id: str
    game: str
    status: str  # "lobby", "countdown", "running" or "finished"
    round: int
    seed: int | None
    seats: int
    host: int | None
    undo: bool
    hints: bool
    time_limit: float | None
    spectator_delay: float
    grace: float
    countdown: float
    seed_mode: str
    tournament: str | None
    ghost: str | None  # a ghost race: the race whose recorded run the ghost replays
    kind: str  # "room", "quick", "tournament", "ghost" or "daily" (a ranked daily attempt)
    rated: bool
    daily: str | None  # a daily deal's ranked attempt: "DATE GAME"
    daily_deal: str | None  # a room on a daily deal that is not its ranked attempt
    created_at: float
    start_at: float | None
    ends_at: float | None
    finished_at: float | None
    finish_reason: str | None
    players: list[PlayerView]
    results: list[Result] | None


class LobbyPlayer(TypedDict):
    """One seat in a `LobbyRoom`: what changes only when the room does (no progress)."""

    seat: int
    name: str
    ready: bool
    connected: bool
    out: str | None
    player: str | None
    bot: bool


class LobbyRoom(TypedDict):
    """A room as the lobby lists it (docs/protocol.md, the LOBBY_ROOM object): the ROOM
    object without what changes with every move (players' progress) or only at the end
    (results), so that an entry is never stale while the room's seats and status hold."""

    id: str
    game: str
    status: str  # "lobby", "countdown" or "running"
    round: int
    seats: int
    host: int | None
    undo: bool
    hints: bool
    time_limit: float | None
    spectator_delay: float
    grace: float
    countdown: float
    seed_mode: str
    tournament: str | None
    kind: str  # "room", "quick", "tournament" or "ghost" (a daily attempt is never listed)
    rated: bool
    daily_deal: str | None  # a room on a daily deal: listed once its day is over
    created_at: float
    start_at: float | None
    ends_at: float | None
    players: list[LobbyPlayer]


class PlayerRef(TypedDict):
    """Who a socket acts as (docs/protocol.md, the PLAYER object): public, no secret."""

    id: str
    name: str
    bot: bool
    claimed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Identified(Message):
    """The answer to `identify`: this socket now acts as `player`."""

    TYPE: ClassVar[str] = "identified"
    player: PlayerRef


@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome(Message):
    """First answer to join/watch. `token` is sent once, when a seat is taken: keep it."""

    TYPE: ClassVar[str] = "welcome"
    room: str
    role: str  # "player" or "spectator"
    server_time: float
    seat: int | None = None
    token: str | None = None
    protocol: int = PROTOCOL_VERSION
    # Players: the highest seq accepted from this seat so far (0: none); a client that
    # lost its counter (a restart) carries on above it.
    last_seq: int | None = None
    # An identified player's own seat: their best run in the room's game on record (game,
    # race, time and splits in seconds, as the live splits are), for the delta at each
    # split; None when they have none. Never sent to anyone else.
    best: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot(Message):
    """The whole room as of `version`: replaces everything the client knew.

    `room`: the room view (see docs/protocol.md). Players get `board` (their own board,
    player view) and `moves` (their accepted moves, `undo` included); spectators get
    `boards` (seat as a string -> board) as of `version`, already delayed.
    """

    TYPE: ClassVar[str] = "snapshot"
    version: int
    room: RoomView
    board: dict[str, Any] | None = None
    moves: list[str] | None = None
    boards: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Event(Message):
    """Base of the versioned room events: kept in the room's log, replayed on reconnect.

    `version` counts every event of the room from 1 without gaps; `at` is server time
    (Unix seconds) when it happened.
    """

    version: int
    at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerJoined(Event):
    """`player`: the seated player's id (absent for a seat taken with no identity);
    `bot`: the player is a bot."""

    TYPE: ClassVar[str] = "joined"
    seat: int
    name: str
    player: str | None = None
    bot: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerLeft(Event):
    TYPE: ClassVar[str] = "left"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerReady(Event):
    TYPE: ClassVar[str] = "player_ready"
    seat: int
    ready: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Presence(Event):
    """A player's connection dropped (`grace_until`: forfeit time) or came back."""

    TYPE: ClassVar[str] = "presence"
    seat: int
    connected: bool
    grace_until: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Countdown(Event):
    """The race starts at `start_at` (server time)."""

    TYPE: ClassVar[str] = "countdown"
    start_at: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RaceStarted(Event):
    """The race is on. `seed` is given for open games; for hidden-information games
    (Moojub) `seed` stays secret until the end and `board` is the starting player view.
    `ends_at`: the time limit, if any."""

    TYPE: ClassVar[str] = "started"
    game: str
    seed: int | None = None
    board: dict[str, Any] | None = None
    ends_at: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Progress(Event):
    """A player's accepted move. `move` is present for the player themselves and for
    spectators, never for the other players; `board` (player view) is present for
    spectators of hidden-information games; `splits` (the seat's splits so far) only on
    the move that first reached a quarter of the cards up."""

    TYPE: ClassVar[str] = "progress"
    seat: int
    progress: int
    moves: int
    won: bool
    stuck: bool
    move: str | None = None
    board: dict[str, Any] | None = None
    splits: list[float | None] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerOut(Event):
    """A player stopped racing: `reason` is "resigned", "forfeit" (grace expired) or, for
    a ghost whose recorded run ended without a win, "ended"."""

    TYPE: ClassVar[str] = "player_out"
    seat: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RaceFinished(Event):
    """The end. `results` is ranked (see docs/protocol.md); `seed` is now public, but for
    a hidden-card deal that other rooms still race (a tournament round's heats): null."""

    TYPE: ClassVar[str] = "finished"
    results: list[Result]
    seed: int | None = None
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RematchVote(Event):
    TYPE: ClassVar[str] = "rematch_vote"
    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class NewRound(Event):
    """Everyone voted for a rematch: a new deal, same players, back to the lobby with every
    player ready, so a countdown follows at once. Boards and move counters restart."""

    TYPE: ClassVar[str] = "new_round"
    round: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Accepted(Message):
    """Your move `seq` was accepted. `move` is canonical; `version` is its event's version.
    `board` (player view) is present in hidden-information games, where the client cannot
    replay moves itself."""

    TYPE: ClassVar[str] = "accepted"
    seq: int
    move: str
    progress: int
    moves: int
    won: bool
    stuck: bool
    version: int
    board: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Refused(Message):
    """Your move `seq` was refused; nothing changed. `reason` is readable."""

    TYPE: ClassVar[str] = "refused"
    seq: int
    code: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HintReply(Message):
    TYPE: ClassVar[str] = "hint"
    move: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LegalReply(Message):
    """The answer to `legal`: every legal move on your board now (canonical, the engine's
    order) and the safe moves autoplay would play from it, in order (send them as moves)."""

    TYPE: ClassVar[str] = "legal"
    moves: list[str]
    safe: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class Error(Message):
    """A request was not carried out. `request` is the type of the message this answers,
    with its `seq` (move, undo) or `id` (ping) when it had one; all three are absent when
    the frame could not be read that far (bad_frame) or the error answers no request."""

    TYPE: ClassVar[str] = "error"
    code: str
    message: str
    request: str | None = None
    seq: int | None = None
    id: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Pong(Message):
    TYPE: ClassVar[str] = "pong"
    id: int
    server_time: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Queued(Message):
    TYPE: ClassVar[str] = "queued"
    game: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Unqueued(Message):
    """Answers `quick_cancel`: this socket is out of the quick-match queue (`game`: the
    queue it left; absent when it was in none) and may ask again or join a room. A cancel
    that came too late is answered by the partner's `matched` instead."""

    TYPE: ClassVar[str] = "unqueued"
    game: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Matched(Message):
    """Quick match found: this socket is now seated in `room` (a welcome follows)."""

    TYPE: ClassVar[str] = "matched"
    room: str
    seat: int
    token: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TourState(Message):
    """A tournament as of `version` (its count of changes: a lower one than already seen
    is stale and can be dropped). Sent after `tour_watch` and then at most four times a
    second while it changes. `tournament`: the TOURNAMENT object (docs/protocol.md 10);
    `standings`: `top` STANDING rows from `offset` of `total`; `you`: the watching
    player's own line (their standing, and `room`/`seat` while they race), else absent."""

    TYPE: ClassVar[str] = "tournament"
    version: int
    tournament: TourView
    standings: list[Standing]
    offset: int
    total: int
    you: YouView | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LobbyState(Message):
    """The lobby now, answering `lobby_watch`: the open and running rooms (LOBBY_ROOM),
    newest first, at most `limit` of them (the newest). Replaces any list the client had."""

    TYPE: ClassVar[str] = "lobby"
    rooms: list[LobbyRoom]
    limit: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LobbyChanged(Message):
    """What changed in the lobby since the last `lobby` or `lobby_changed`: `rooms` are
    new or changed rooms, each replacing the entry of the same `id`; `gone` the ids of rooms
    that left the list (finished, expired, or pushed out by newer ones past `limit`)."""

    TYPE: ClassVar[str] = "lobby_changed"
    rooms: list[LobbyRoom]
    gone: list[str]


ServerToClient = Union[  # noqa: UP007 - a runtime alias: typing.get_args lists the classes
    Identified,
    Welcome,
    Snapshot,
    PlayerJoined,
    PlayerLeft,
    PlayerReady,
    Presence,
    Countdown,
    RaceStarted,
    Progress,
    PlayerOut,
    RaceFinished,
    RematchVote,
    NewRound,
    Accepted,
    Refused,
    HintReply,
    LegalReply,
    Error,
    Pong,
    Queued,
    Unqueued,
    Matched,
    TourState,
    LobbyState,
    LobbyChanged,
]
