"""The solrace wire protocol: every WebSocket message, its version, and its codecs.

The one place where messages are defined, imported alike by the server and by clients.
By direction (lila-ws style): `protocol.client_to_server` holds what a client sends
(`ClientToServer`, decoded by the server with `CLIENT_TO_SERVER`), `protocol.server_to_client`
what the server sends (`ServerToClient`, decoded by clients with `SERVER_TO_CLIENT`).
`protocol.codes` holds the version and the error and close codes, `protocol.codec` the
field checks and the msgpack/JSON codecs, `protocol.paths` the WebSocket path (with its
`?room=` routing hint). Everything is re-exported here, so
`import protocol as p` then `p.Move`, `p.ErrorCode` is the usual way in.

Frames:
- a binary frame is a msgpack map, a text frame the same map as JSON;
- every map has `"type"` (the message name) and `"v"` (`PROTOCOL_VERSION`);
- a field whose value is `None` is left out on the wire, and a missing field takes its
  default, so every optional field defaults to `None`;
- unknown extra fields are ignored (room to grow without a version bump).

This package imports only the standard library and msgpack (the layering test checks it).
"""

from __future__ import annotations

# First: importing it chooses the build of protocol.codec (core/build.py).
from core import build as _build  # noqa: F401
from protocol.client_to_server import (
    ClientToServer,
    Hint,
    Identify,
    Join,
    Leave,
    Legal,
    LobbyUnwatch,
    LobbyWatch,
    Move,
    Ping,
    QuickCancel,
    QuickMatch,
    Ready,
    Rematch,
    Resign,
    Resync,
    Start,
    TourUnwatch,
    TourWatch,
    Undo,
    Watch,
)
from protocol.codec import (
    CLIENT_TO_SERVER,
    SERVER_TO_CLIENT,
    Registry,
    Unexpected,
    decode_json,
    decode_msgpack,
    encode_json,
    encode_msgpack,
    error_for,
    from_wire,
    pack_map,
    to_wire,
)
from protocol.codes import (
    PROTOCOL_VERSION,
    CloseCode,
    ErrorCode,
)
from protocol.message import (
    Message,
)
from protocol.paths import ROOM_PARAM, WS_PATH, socket_path
from protocol.server_to_client import (
    Accepted,
    Countdown,
    Error,
    Event,
    HintReply,
    Identified,
    LegalReply,
    LobbyChanged,
    LobbyPlayer,
    LobbyRoom,
    LobbyState,
    Matched,
    NewRound,
    PlayerJoined,
    PlayerLeft,
    PlayerOut,
    PlayerReady,
    PlayerRef,
    PlayerView,
    Pong,
    Presence,
    Progress,
    Queued,
    RaceFinished,
    RaceStarted,
    Refused,
    RematchVote,
    Result,
    RoomView,
    ServerToClient,
    Snapshot,
    TourState,
    Welcome,
)
from protocol.tournament import (
    FORMATS,
    ArenaStanding,
    DealView,
    KnockoutStanding,
    MatchView,
    RaceResultView,
    RaceView,
    RoundsStanding,
    Standing,
    StandingBase,
    TourView,
    YouView,
)

__all__ = [
    "CLIENT_TO_SERVER",
    "FORMATS",
    "PROTOCOL_VERSION",
    "ROOM_PARAM",
    "SERVER_TO_CLIENT",
    "WS_PATH",
    "Accepted",
    "ArenaStanding",
    "ClientToServer",
    "CloseCode",
    "Countdown",
    "DealView",
    "Error",
    "ErrorCode",
    "Event",
    "Hint",
    "HintReply",
    "Identified",
    "Identify",
    "Join",
    "KnockoutStanding",
    "Leave",
    "Legal",
    "LegalReply",
    "LobbyChanged",
    "LobbyPlayer",
    "LobbyRoom",
    "LobbyState",
    "LobbyUnwatch",
    "LobbyWatch",
    "MatchView",
    "Matched",
    "Message",
    "Move",
    "NewRound",
    "Ping",
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
    "QuickCancel",
    "QuickMatch",
    "RaceFinished",
    "RaceResultView",
    "RaceStarted",
    "RaceView",
    "Ready",
    "Refused",
    "Registry",
    "Rematch",
    "RematchVote",
    "Resign",
    "Result",
    "Resync",
    "RoomView",
    "RoundsStanding",
    "ServerToClient",
    "Snapshot",
    "Standing",
    "StandingBase",
    "Start",
    "TourState",
    "TourUnwatch",
    "TourView",
    "TourWatch",
    "Undo",
    "Unexpected",
    "Watch",
    "Welcome",
    "YouView",
    "decode_json",
    "decode_msgpack",
    "encode_json",
    "encode_msgpack",
    "error_for",
    "from_wire",
    "pack_map",
    "socket_path",
    "to_wire",
]
