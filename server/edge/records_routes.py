"""The records over HTTP: archived races' replays (`GET /races/{id}/replay`) and the
leaderboards (`GET /leaderboard/{game}`). docs/protocol.md section 12."""

from __future__ import annotations

import time

from aiohttp import web

import core
from protocol import ErrorCode
from records.boards import PERIODS, Board, Leaderboards, period_start
from server.edge.app_keys import ARCHIVE, RECORDS_DB
from server.edge.routes import (
    UNKNOWN_GAME,
    _error,
    archived_line_held,
    path_game,
    query_option,
    whole_number,
)
from server.room.ids import race_key

__all__ = ["records_routes"]

records_routes = web.RouteTableDef()

NDJSON = "application/x-ndjson"


@records_routes.get("/races/{race}/replay")
async def race_replay(request: web.Request) -> web.Response:
    """An archived race's replay (core/replay.py), by its id ("ROOM.ROUND")."""
    text = await request.app[ARCHIVE].replay(race_key(request.match_info["race"]))
    if text is None:
        return _error(404, ErrorCode.UNKNOWN_RACE, "no archived race has that id")
    held = await archived_line_held(request, text)  # a daily attempt's opens late, ...
    if held is not None:
        return held
    return web.Response(text=text, content_type=NDJSON, charset="utf-8")


MAX_PAGE = 100


class _BadQuery(ValueError):
    pass


def _option(request: web.Request, name: str, default: str) -> str:
    given = query_option(request, name)
    return default if given is None else given


def _whole(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = query_option(request, name)
    if raw is None:
        return default
    value = whole_number(raw)
    if value is None or not low <= value <= high:  # "-1" is no whole number to whole_number
        raise _BadQuery(f"{name} must be a whole number {low}..{high}")
    return value


@records_routes.get("/leaderboard/{game}")
async def leaderboard(request: web.Request) -> web.Response:
    """A game's leaderboard (records/boards.py): ?by=rating|time, period=day|week|all,
    seed=N (by time: which deal), offset, limit, around=PLAYER_ID."""
    game = path_game(request)
    if game is None:
        return _error(404, ErrorCode.BAD_GAME, UNKNOWN_GAME)
    by = _option(request, "by", "rating")
    period = _option(request, "period", "all")
    try:
        if by not in ("rating", "time"):
            raise _BadQuery("by must be rating or time")
        if period not in PERIODS:
            raise _BadQuery(f"period must be one of {', '.join(PERIODS)}")
        offset = _whole(request, "offset", 0, 0, 10**9)
        limit = _whole(request, "limit", 50, 1, MAX_PAGE)
        seed = _whole(request, "seed", 0, 1, core.MAX_SEED) if by == "time" else None
        if by == "time" and query_option(request, "seed") is None:
            raise _BadQuery("a board by time is of one deal: give its seed")
    except _BadQuery as err:
        return _error(400, ErrorCode.BAD_REQUEST, str(err))
    around = query_option(request, "around") or None
    boards = Leaderboards(request.app[RECORDS_DB])
    now = time.time()
    board: Board
    if seed is None:
        board = await boards.by_rating(game, period, now, offset=offset, limit=limit, around=around)
    else:
        board = await boards.by_time(
            game, seed, period, now, offset=offset, limit=limit, around=around
        )
    return web.json_response(
        {
            "game": game,
            "by": by,
            "period": period,
            "since": period_start(period, now, rating=by == "rating"),
            "seed": seed,
            "total": board.total,
            "offset": board.offset,
            "limit": limit,
            "rows": board.rows,
        }
    )
