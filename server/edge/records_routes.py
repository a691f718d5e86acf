"""The records over HTTP: archived races' replays (`GET /races/{id}/replay`) and the
leaderboards (`GET /leaderboard/{game}`). docs/protocol.md section 11."""

from __future__ import annotations

from aiohttp import web

from protocol import ErrorCode
from server.edge.app_keys import ARCHIVE
from server.edge.routes import _error

__all__ = ["records_routes"]

records_routes = web.RouteTableDef()

NDJSON = "application/x-ndjson"


@records_routes.get("/races/{race}/replay")
async def race_replay(request: web.Request) -> web.Response:
    """An archived race's replay (core/replay.py), by its id ("ROOM.ROUND")."""
    race = request.match_info["race"]
    text = await request.app[ARCHIVE].replay(race[:100])
    if text is None:
        return _error(404, ErrorCode.UNKNOWN_RACE, "no archived race has that id")
    return web.Response(text=text, content_type=NDJSON, charset="utf-8")
