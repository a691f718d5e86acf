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
from server.edge.app_keys import STORE
from server.edge.routes import NOT_YET, _error, daily_replay_open, race_replay
from server.room.ids import room_key
from server.room.race import RaceError
from server.tournament.rooms import StoreRooms

__all__ = ["replay_boards", "replay_routes"]

replay_routes = web.RouteTableDef()


@functools.lru_cache(maxsize=64)
def replay_boards(text: str) -> dict[str, Any]:
    """The boards of a replay's text (the same text gives the same answer: cached, as a
    race's replay never changes once it has finished)."""
    checked = verify(text)
    last = [line for line in text.split("\n") if line.strip()][-1]
    return {**board_steps(checked), "replay_hash": line_hash(last)}


@replay_routes.get("/rooms/{room}/replay/boards")
async def get_replay_boards(request: web.Request) -> web.Response:
    try:
        record = await StoreRooms(request.app[STORE]).record(room_key(request.match_info["room"]))
    except RaceError:
        return _error(404, ErrorCode.UNKNOWN_ROOM, "no such room")
    if record is None:
        return _error(409, ErrorCode.NOT_FINISHED, "the race has not finished")
    if not await daily_replay_open(request, record.room):
        return _error(403, ErrorCode.NOT_YET, NOT_YET)
    try:
        boards = replay_boards(await race_replay(request.app, record))
    except ReplayError as err:  # the stored moves do not replay: a bug, said plainly
        return _error(500, ErrorCode.INTERNAL, f"the race's replay does not check: {err}")
    return web.json_response(boards)
