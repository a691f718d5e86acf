"""A finished race's boards, step by step, for the replay page (docs/protocol.md "Replays").

The web client has no rules engine (the server referees), so it cannot play a replay's
moves on a deal itself: the engine does it here (core/replay_boards.py) and the page
applies what each move changed. The page checks the replay's own text (its hash chain,
with Web Crypto) and that this answer was computed from that very text (`replay_hash`).
"""

from __future__ import annotations

import functools
from typing import Any

from aiohttp import web

from core.replay import ReplayError, line_hash, verify
from core.replay_boards import board_steps
from protocol import ErrorCode
from server.edge.app_keys import ARCHIVE
from server.edge.redis_first import needs_redis
from server.edge.routes import _error, archived_line_held, room_replay
from server.room.ids import race_key, room_key

__all__ = ["replay_boards", "replay_routes"]

replay_routes = web.RouteTableDef()


@functools.lru_cache(maxsize=64)
def replay_boards(text: str) -> dict[str, Any]:
    """The boards of a replay's text (the same text gives the same answer: cached, as a
    race's replay never changes once it has finished)."""
    checked = verify(text)
    last = [line for line in text.split("\n") if line.strip()][-1]
    return {**board_steps(checked), "replay_hash": line_hash(last)}


def _boards(text: str) -> web.Response:
    try:
        return web.json_response(replay_boards(text))
    except ReplayError as err:  # the stored moves do not replay: a bug, said plainly
        return _error(500, ErrorCode.INTERNAL, f"the race's replay does not check: {err}")


@replay_routes.get("/rooms/{room}/replay/boards")
@needs_redis
async def get_replay_boards(request: web.Request) -> web.Response:
    """The boards of the replay GET /rooms/{room}/replay serves."""
    text = await room_replay(request, room_key(request.match_info["room"]))
    return text if isinstance(text, web.Response) else _boards(text)


@replay_routes.get("/races/{race}/replay/boards")
async def get_race_boards(request: web.Request) -> web.Response:
    """The boards of an archived race's replay (GET /races/{race}/replay)."""
    text = await request.app[ARCHIVE].replay(race_key(request.match_info["race"]))
    if text is None:
        return _error(404, ErrorCode.UNKNOWN_RACE, "no archived race has that id")
    held = await archived_line_held(request, text)
    return _boards(text) if held is None else held
