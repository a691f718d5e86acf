"""The solrace wire protocol: every WebSocket message, its version, and its codecs.

This is the one place where messages are defined (lila-ws style: `ClientIn` for what
a client sends, `ClientOut` for what the server sends). Everything else uses these types.

Frames:
- a binary frame is a msgpack map, a text frame the same map as JSON;
- every map has `"type"` (the message name) and `"v"` (`PROTOCOL_VERSION`);
- a field whose value is `None` is left out on the wire, and a missing field takes its
  default, so every optional field defaults to `None`;
- unknown extra fields are ignored (room to grow without a version bump).

Decoding never raises: input that does not parse or does not fit a message becomes one
`Unexpected` value carrying an `ErrorCode` and a readable message.

This module imports only the standard library and msgpack: the terminal client uses it.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, Union

import msgpack

__all__ = [
    "CLIENT_IN",
    "CLIENT_OUT",
    "PROTOCOL_VERSION",
    "Accepted",
    "ClientIn",
    "ClientOut",
    "CloseCode",
    "Countdown",
    "Error",
    "ErrorCode",
    "Event",
    "Hint",
    "HintReply",
    "Join",
    "Leave",
    "Matched",
    "Message",
    "Move",
    "NewRound",
    "Ping",
    "PlayerJoined",
    "PlayerLeft",
    "PlayerOut",
    "PlayerReady",
    "Pong",
    "Presence",
    "Progress",
    "Queued",
    "QuickCancel",
    "QuickMatch",
    "RaceFinished",
    "RaceStarted",
    "Ready",
    "Refused",
    "Registry",
    "Rematch",
    "RematchVote",
    "Resign",
    "Resync",
    "Snapshot",
    "Start",
    "Undo",
    "Unexpected",
    "Watch",
    "Welcome",
    "decode_json",
    "decode_msgpack",
    "encode_json",
    "encode_msgpack",
    "error_for",
    "from_wire",
    "to_wire",
]

PROTOCOL_VERSION = 1


class ErrorCode(enum.StrEnum):
    """Why a message was refused. Sent as the string value."""

    BAD_FRAME = "bad_frame"  # not msgpack / not JSON / not a map
    BAD_VERSION = "bad_version"  # "v" missing or not PROTOCOL_VERSION
    UNKNOWN_TYPE = "unknown_type"  # "type" missing or not a known message
    BAD_MESSAGE = "bad_message"  # a field is missing or has the wrong type
    TOO_BIG = "too_big"  # frame over the size cap (the socket is then closed)
    RATE_LIMITED = "rate_limited"  # too many messages; sustained flood closes the socket
    UNKNOWN_ROOM = "unknown_room"
    BAD_TOKEN = "bad_token"  # the seat token is wrong
    ROOM_FULL = "room_full"
    ROOM_CLOSED = "room_closed"  # the race has started or finished: no new seats
    ALREADY_JOINED = "already_joined"  # this socket is already in a room
    NOT_JOINED = "not_joined"  # the socket has no room yet
    NOT_PLAYER = "not_player"  # a spectator tried to play
    NOT_HOST = "not_host"  # only the host (seat 0) may start
    NOT_RUNNING = "not_running"  # before the start or after the end
    NOT_FINISHED = "not_finished"  # rematch before the end
    PLAYER_OUT = "player_out"  # this player has won, is stuck, resigned or forfeited
    STALE_SEQ = "stale_seq"  # seq at or below one already used, and not a re-send
    ILLEGAL_MOVE = "illegal_move"  # the engine refused it; message is its reason
    UNDO_NOT_ALLOWED = "undo_not_allowed"
    HINTS_NOT_ALLOWED = "hints_not_allowed"
    BAD_GAME = "bad_game"  # unknown game name
    BAD_REQUEST = "bad_request"  # HTTP body is wrong
    NOT_FOUND = "not_found"  # HTTP: no such path
    UNKNOWN_TOURNAMENT = "unknown_tournament"
    NOT_ORGANISER = "not_organiser"  # the organiser token is missing or wrong
    REGISTRATION_CLOSED = "registration_closed"  # the tournament has started
    TOURNAMENT_FULL = "tournament_full"  # its maximum number of players registered
    NAME_TAKEN = "name_taken"  # another player of the tournament has that name
    NOT_ENOUGH_PLAYERS = "not_enough_players"  # start with too few active players
    TOURNAMENT_OVER = "tournament_over"  # the tournament finished (or you lost its knockout)
    REMOVED = "removed"  # the organiser removed this player
    INTERNAL = "internal"  # a bug on our side; the socket stays open


class CloseCode(enum.IntEnum):
    """WebSocket close codes the server uses."""

    NORMAL = 1000
    GOING_AWAY = 1001  # server shutdown: reconnect (to another process) with your token
    BAD_DATA = 1007  # a text frame that is not UTF-8 (closed by the WebSocket layer itself)
    POLICY = 1008  # sustained flood beyond the rate limit
    TOO_BIG = 1009  # a frame over the size cap
    INTERNAL = 1011
    SLOW_CONSUMER = 4000  # the client did not read fast enough; reconnect and catch up


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Base class of every message; `TYPE` is its wire name."""

    TYPE: ClassVar[str] = ""


M = TypeVar("M", bound=Message)


# ---------------------------------------------------------------- client -> server (ClientIn)


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


ClientIn = Union[  # noqa: UP007 - a runtime alias used in isinstance-free matching
    Join,
    Watch,
    Move,
    Undo,
    Hint,
    Ready,
    Start,
    Resign,
    Rematch,
    Leave,
    QuickMatch,
    QuickCancel,
    Ping,
    Resync,
]


# ---------------------------------------------------------------- server -> client (ClientOut)


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


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot(Message):
    """The whole room as of `version`: replaces everything the client knew.

    `room`: the room view (see docs/protocol.md). Players get `board` (their own board,
    player view) and `moves` (their accepted moves, `undo` included); spectators get
    `boards` (seat as a string -> board) as of `version`, already delayed.
    """

    TYPE: ClassVar[str] = "snapshot"
    version: int
    room: dict[str, Any]
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
    TYPE: ClassVar[str] = "joined"
    seat: int
    name: str


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
    spectators of hidden-information games."""

    TYPE: ClassVar[str] = "progress"
    seat: int
    progress: int
    moves: int
    won: bool
    stuck: bool
    move: str | None = None
    board: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlayerOut(Event):
    """A player stopped racing: `reason` is "resigned" or "forfeit" (grace expired)."""

    TYPE: ClassVar[str] = "player_out"
    seat: int
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RaceFinished(Event):
    """The end. `results` is ranked (see docs/protocol.md); `seed` is now public."""

    TYPE: ClassVar[str] = "finished"
    results: list[dict[str, Any]]
    seed: int
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
class Matched(Message):
    """Quick match found: this socket is now seated in `room` (a welcome follows)."""

    TYPE: ClassVar[str] = "matched"
    room: str
    seat: int
    token: str


ClientOut = Union[  # noqa: UP007
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
    Error,
    Pong,
    Queued,
    Matched,
]


# ---------------------------------------------------------------- unexpected input


@dataclass(frozen=True, slots=True)
class Unexpected:
    """Input that is not a valid message. Not a `Message`: it is never sent as is."""

    code: ErrorCode
    message: str
    type: str | None = None  # the "type" field, when there was one
    seq: int | None = None  # the "seq" and "id" fields, when they were readable integers
    id: int | None = None

    def to_error(self) -> Error:
        return Error(
            code=self.code.value, message=self.message, request=self.type, seq=self.seq, id=self.id
        )


def error_for(request: Message | Unexpected | None, code: str, message: str) -> Error:
    """An `error` that names the request it answers (its type, and its seq or id)."""
    if isinstance(request, Unexpected):
        return dataclasses.replace(request.to_error(), code=code, message=message)
    if request is None:
        return Error(code=code, message=message)
    return Error(
        code=code,
        message=message,
        request=request.TYPE,
        seq=getattr(request, "seq", None),
        id=getattr(request, "id", None),
    )


# ---------------------------------------------------------------- field checking

Check = Callable[[Any], bool]


def _is_int(x: Any) -> bool:
    # 64-bit, as msgpack carries: a bigger one (JSON allows any) could not be stored or
    # answered (a seq of 2**70 failed in the move's Redis write: error internal).
    return isinstance(x, int) and not isinstance(x, bool) and -(2**63) <= x < 2**63


def _checker(annotation: Any) -> Check:
    """A predicate for the annotations used above (kept deliberately small)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is str:
        return lambda x: isinstance(x, str)
    if annotation is bool:
        return lambda x: isinstance(x, bool)
    if annotation is int:
        return _is_int
    if annotation is float:
        return lambda x: isinstance(x, float) or _is_int(x)
    if annotation is Any:
        return lambda x: True
    if origin in (Union, types.UnionType):
        inner = [_checker(a) for a in args if a is not type(None)]
        nullable = type(None) in args
        return lambda x: (nullable and x is None) or any(c(x) for c in inner)
    if origin is list:
        item = _checker(args[0])
        return lambda x: isinstance(x, list) and all(item(i) for i in x)
    if origin is dict:
        key, value = _checker(args[0]), _checker(args[1])
        return lambda x: isinstance(x, dict) and all(key(k) and value(v) for k, v in x.items())
    raise TypeError(f"protocol: unsupported annotation {annotation!r}")


def _unexpected(data: dict[str, Any], code: ErrorCode, message: str) -> Unexpected:
    """An `Unexpected` naming the request it came from: its type, seq and id when they can
    be read (built only on failure: the hot path of every move stays as it was). A type
    that could not be sent back as it came (too long, a lone surrogate) is left out."""
    type_name = data["type"]
    ok = len(type_name) <= 40 and type_name.isprintable()
    seq, id_ = data.get("seq"), data.get("id")
    return Unexpected(
        code,
        message,
        type_name if ok else None,
        seq if _is_int(seq) else None,
        id_ if _is_int(id_) else None,
    )


@dataclass(frozen=True, slots=True)
class _Spec:
    cls: type[Message]
    fields: tuple[tuple[str, Check, bool], ...]  # name, check, required


class Registry:
    """The messages of one direction, by wire name."""

    def __init__(self, name: str, classes: tuple[type[Message], ...]) -> None:
        self.name = name
        self._specs: dict[str, _Spec] = {}
        for cls in classes:
            hints = typing.get_type_hints(cls)
            specs = []
            for f in dataclasses.fields(cls):
                required = (
                    f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
                )
                specs.append((f.name, _checker(hints[f.name]), required))
            assert cls.TYPE and cls.TYPE not in self._specs, cls
            self._specs[cls.TYPE] = _Spec(cls, tuple(specs))

    def __contains__(self, type_name: str) -> bool:
        return type_name in self._specs

    def build_trusted(self, data: dict[str, Any]) -> Message | Unexpected:
        """A message from a map this server wrote itself (e.g. read back from Redis):
        fields are not type-checked (the hot path of every event); never raises."""
        spec = self._specs.get(data.get("type", ""))
        if spec is not None and data.get("v") == PROTOCOL_VERSION:
            try:
                return spec.cls(**{k: v for k, v in data.items() if k != "type" and k != "v"})
            except TypeError:
                pass
        return self.build(data)

    def build(self, data: Any) -> Message | Unexpected:
        """A message from a decoded map; never raises."""
        if not isinstance(data, dict):
            return Unexpected(ErrorCode.BAD_FRAME, "a message must be a map")
        type_name = data.get("type")
        if not isinstance(type_name, str):
            return Unexpected(ErrorCode.UNKNOWN_TYPE, 'missing "type"')
        if data.get("v") != PROTOCOL_VERSION or isinstance(data.get("v"), bool):
            return _unexpected(
                data,
                ErrorCode.BAD_VERSION,
                f'"v" must be {PROTOCOL_VERSION}, got {data.get("v")!r}'[:200],
            )
        spec = self._specs.get(type_name)
        if spec is None:
            return _unexpected(
                data, ErrorCode.UNKNOWN_TYPE, f"unknown message type {type_name[:40]!r}"
            )
        kwargs: dict[str, Any] = {}
        for name, check, required in spec.fields:
            if name not in data or data[name] is None:
                if required:
                    return _unexpected(
                        data, ErrorCode.BAD_MESSAGE, f"{type_name}: missing field {name!r}"
                    )
                continue
            value = data[name]
            if not check(value):
                return _unexpected(
                    data, ErrorCode.BAD_MESSAGE, f"{type_name}: field {name!r} has the wrong type"
                )
            kwargs[name] = value
        try:
            return spec.cls(**kwargs)
        except Exception as exc:  # a dataclass refusing its input must not kill a socket
            return _unexpected(data, ErrorCode.BAD_MESSAGE, f"{type_name}: {exc}")


CLIENT_IN = Registry("client_in", typing.get_args(ClientIn))
CLIENT_OUT = Registry("client_out", typing.get_args(ClientOut))


# ---------------------------------------------------------------- codecs

_FIELD_NAMES: dict[type[Message], tuple[str, ...]] = {}


def to_wire(msg: Message) -> dict[str, Any]:
    """The map sent on the wire: `type`, `v`, then every field that is not None."""
    cls = type(msg)
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    out: dict[str, Any] = {"type": cls.TYPE, "v": PROTOCOL_VERSION}
    for name in names:
        value = getattr(msg, name)
        if value is not None:
            out[name] = value
    return out


def from_wire(data: Any, registry: Registry = CLIENT_IN) -> Message | Unexpected:
    return registry.build(data)


def encode_msgpack(msg: Message) -> bytes:
    return msgpack.packb(to_wire(msg), use_bin_type=True)  # type: ignore[no-any-return]


def encode_json(msg: Message) -> str:
    return json.dumps(to_wire(msg), separators=(",", ":"), ensure_ascii=False)


def decode_msgpack(data: bytes, registry: Registry = CLIENT_IN) -> Message | Unexpected:
    """Decode a binary frame; `registry` is CLIENT_IN on the server, CLIENT_OUT in clients."""
    try:
        obj = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception:  # msgpack raises many kinds (ExtraData, ValueError, ...)
        return Unexpected(ErrorCode.BAD_FRAME, "not a msgpack map")
    return registry.build(obj)


def decode_json(text: str | bytes, registry: Registry = CLIENT_IN) -> Message | Unexpected:
    """Decode a text frame (the same maps as JSON)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return Unexpected(ErrorCode.BAD_FRAME, "not a JSON object")
    return registry.build(obj)
