"""Where a client opens its WebSocket: `/ws`, or `/ws?room=ROOM` when it knows the room.

The `room` parameter is a routing hint for the balancer in front of several server
processes (deploy/haproxy.cfg, deploy/nginx.conf hash it, so that every socket of a room
reaches one process, which then alone parses and fans out that room's events). The server
accepts and ignores it: the `join` or `watch` sent on the socket decides the room, and any
process serves any room.
"""

from __future__ import annotations

from urllib.parse import quote

__all__ = ["ROOM_PARAM", "WS_PATH", "socket_path"]

WS_PATH = "/ws"
ROOM_PARAM = "room"


def socket_path(room: str | None = None) -> str:
    """`/ws?room=ROOM` (URL-encoded), or `/ws` without a room. Lower case: room codes are
    case-blind (docs/protocol.md 3), and a code typed in capitals must reach the same
    process as the id the server answers."""
    if not room:
        return WS_PATH
    return f"{WS_PATH}?{ROOM_PARAM}={quote(room.lower(), safe='')}"
