"""Tournaments over HTTP (docs/protocol.md section 10). Bodies and answers are JSON, errors
the same `{"error": {"code", "message"}}` as the rest of the server. The organiser's and
players' secret tokens travel in request bodies, never in URLs (which end up in logs)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

import core
from protocol import FORMATS, ErrorCode
from server.edge.app_keys import ACCOUNTS, SETTINGS
from server.edge.identity_routes import bearer_key
from server.edge.redis_first import needs_redis
from server.edge.routes import (
    HEAT_NOT_YET,
    BadRequest,
    _error,
    _flag,
    _number,
    creation_limited,
    json_object,
    query_option,
    secret_json,
    whole_number,
)
from server.edge.tournament_keys import TOUR_RUNNER, TOUR_STORE
from server.identity.accounts import IdentityError
from server.room.ids import printable_name
from server.tournament.model import Entrant, TourConfig, TourError
from server.tournament.views import export_csv, export_json, export_ndjson, tour_view

__all__ = ["config_from_body", "tour_routes"]

tour_routes = web.RouteTableDef()

TOUR_NAME_MOST = 64  # characters of a tournament's name (a player's: NAME_MOST, 32)

_STATUS = {
    ErrorCode.UNKNOWN_TOURNAMENT: 404,
    ErrorCode.NOT_FOUND: 404,
    ErrorCode.NOT_ORGANISER: 403,
    ErrorCode.REMOVED: 403,
    ErrorCode.BAD_TOKEN: 403,
    ErrorCode.NOT_YOUR_SEAT: 403,
    ErrorCode.BAD_REQUEST: 400,
    ErrorCode.BAD_NAME: 400,
    ErrorCode.BAD_GAME: 400,
    ErrorCode.UNKNOWN_PLAYER: 404,
    ErrorCode.INTERNAL: 500,
    ErrorCode.UNAVAILABLE: 503,  # busy or storage down: nothing changed, try again
}


def _tour_error(err: TourError) -> web.Response:
    return _error(_STATUS.get(err.code, 409), err.code, err.message)


def _whole(body: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = _number(body, name, default, low, high)
    if value is None or value != int(value):
        raise BadRequest(f"{name} must be a whole number")
    return int(value)


def config_from_body(body: dict[str, Any], max_seats: int) -> TourConfig:
    """The organiser's choices, checked (BadRequest says which field is wrong)."""
    if not isinstance(body.get("name"), str):
        raise BadRequest("name must be a string")
    name = printable_name(body["name"])
    if not name:
        raise TourError(ErrorCode.BAD_NAME, "a tournament needs a name")
    if len(name) > TOUR_NAME_MOST:
        raise TourError(
            ErrorCode.BAD_NAME, f"a tournament's name is at most {TOUR_NAME_MOST} characters"
        )
    fmt = body.get("format", "rounds")
    if fmt not in FORMATS:
        raise BadRequest(f"format must be one of {', '.join(FORMATS)}")
    games = body.get("games", [body["game"]] if "game" in body else ["shaula"])
    if not isinstance(games, list) or not games or len(games) > 16:
        raise BadRequest("games must be a list of 1 to 16 game names")
    if not all(isinstance(game, str) for game in games):
        raise BadRequest("games must be a list of game names")
    for game in games:
        if game not in core.GAMES:
            raise TourError(ErrorCode.BAD_GAME, f"games must be among {', '.join(core.GAMES)}")
    seats = _whole(body, "seats", max_seats, 2, max_seats)
    seeding = body.get("seeding", "registration")
    if seeding not in ("registration", "rating"):
        raise BadRequest('seeding must be "registration" or "rating"')
    duration = _number(body, "duration", 600.0, 1, 86400) or 600.0
    countdown = _number(body, "countdown", 5.0, 0, 60) or 0.0
    if fmt == "arena" and duration <= countdown:
        # No heat begins after the end, and each counts down first: it could race nothing.
        raise BadRequest("duration must be longer than countdown: no heat could begin")
    return TourConfig(
        name=name,
        format=fmt,
        games=tuple(games),
        rounds=_whole(body, "rounds", 3, 1, 100),
        duration=duration,
        time_limit=_number(body, "time_limit", 300.0, 1, 86400) or 300.0,
        winnable=_flag(body, "winnable", True),
        spectator_delay=_number(body, "spectator_delay", 10.0, 0, 3600) or 0.0,
        max_players=_whole(body, "max_players", 64, 2, 4096),
        seats=seats,
        arena_heat=_whole(body, "arena_heat", min(4, seats), 2, seats),
        wave=_number(body, "wave", 5.0, 0.1, 600) or 5.0,
        pause=_number(body, "pause", 30.0, 0, 3600) or 0.0,
        countdown=countdown,
        grace=_number(body, "grace", 60.0, 0, 3600) or 0.0,
        rated=_flag(body, "rated", True),
        seeding=seeding,
    )


@tour_routes.post("/tournaments")
@needs_redis
async def create_tournament(request: web.Request) -> web.Response:
    limited = await creation_limited(request, "tournaments")
    if limited is not None:
        return limited
    try:
        body = await json_object(request)
        config = config_from_body(body, request.app[SETTINGS].max_seats)
        tour, token = await request.app[TOUR_RUNNER].create(config, time.time())
    except BadRequest as err:
        return _error(400, ErrorCode.BAD_REQUEST, str(err))
    except TourError as err:
        return _tour_error(err)
    return secret_json({"tournament": tour_view(tour), "organiser_token": token}, status=201)


@tour_routes.get("/tournaments")
@needs_redis
async def list_tournaments(request: web.Request) -> web.Response:
    store = request.app[TOUR_STORE]
    views = []
    for tid in await store.ids():
        loaded = await store.load(tid)
        if loaded is not None:
            views.append(tour_view(loaded[0]))
    return web.json_response({"tournaments": views})


@tour_routes.get("/tournaments/{tid}")
@needs_redis
async def get_tournament(request: web.Request) -> web.Response:
    try:
        tour, rev = await request.app[TOUR_STORE].get(request.match_info["tid"])
    except TourError as err:
        return _tour_error(err)
    return web.json_response({"tournament": tour_view(tour), "version": rev})


@tour_routes.post("/tournaments/{tid}/players")
@needs_redis
async def register(request: web.Request) -> web.Response:
    """Register under `name`; with a player key (Authorization: Bearer), the registration
    is that player's, under their name, with their rating (docs/protocol.md section 11)."""
    tid = request.match_info["tid"]
    try:
        body = await json_object(request)
        key = bearer_key(request)
        if key is not None:
            accounts = request.app[ACCOUNTS]
            player = await accounts.who(key, time.time())
            tour, _ = await request.app[TOUR_STORE].get(tid)
            shown = (
                None if player.bot else await accounts.shown_rating(player.id, tour.config.games[0])
            )
            entrant = Entrant(
                player.id,
                bot=player.bot,
                rating=None if shown is None else shown.display,
                provisional=shown is not None and shown.provisional,
            )
            tour, pid, token = await request.app[TOUR_RUNNER].register(
                tid, player.name, time.time(), entrant
            )
        else:
            name = body.get("name")
            if not isinstance(name, str):
                raise BadRequest("name must be a string")
            name = printable_name(name)
            await request.app[TOUR_STORE].get(tid)  # unknown_tournament first
            # A player's name is theirs: registered under only with their key.
            if await request.app[ACCOUNTS].someones_name(name):
                raise TourError(
                    ErrorCode.NAME_TAKEN,
                    f"{name[:40]!r} is a player's name: register with that player's key",
                )
            tour, pid, token = await request.app[TOUR_RUNNER].register(tid, name, time.time())
    except BadRequest as err:
        return _error(400, ErrorCode.BAD_REQUEST, str(err))
    except TourError as err:
        return _tour_error(err)
    except IdentityError as err:
        return _error(err.status, err.code, err.message)
    return secret_json(
        {"player": {"id": pid, "name": tour.players[pid].name}, "token": token}, status=201
    )


async def _as_player(request: web.Request, action: str) -> web.Response:
    """withdraw or return, by the registration's token; a request with a player key acts
    for that player only (as an identified socket does)."""
    try:
        body = await json_object(request)
        key = bearer_key(request)
        asker = None if key is None else (await request.app[ACCOUNTS].who(key, time.time())).id
        tour, pid = await request.app[TOUR_RUNNER].as_player(
            request.match_info["tid"], body.get("token"), action, time.time(), asker
        )
    except BadRequest as err:
        return _error(400, ErrorCode.BAD_REQUEST, str(err))
    except TourError as err:
        return _tour_error(err)
    except IdentityError as err:
        return _error(err.status, err.code, err.message)
    row = next(r for r in tour.standings() if r["player"] == pid)
    return web.json_response({"player": row})


async def _organise(request: web.Request, action: str) -> web.Response:
    runner = request.app[TOUR_RUNNER]
    tid = request.match_info["tid"]
    try:
        body = await json_object(request)
        args: dict[str, Any] = {}
        if action == "remove":
            tour, _ = await request.app[TOUR_STORE].get(tid)
            ref = body.get("player")
            if isinstance(ref, str):
                ref = tour.player_by_name(ref).id
            if not isinstance(ref, int) or isinstance(ref, bool):
                raise BadRequest("player must be a player's id or name")
            args["player"] = ref
        tour = await runner.organise(tid, body.get("organiser_token"), action, time.time(), **args)
    except BadRequest as err:
        return _error(400, ErrorCode.BAD_REQUEST, str(err))
    except TourError as err:
        return _tour_error(err)
    return web.json_response({"tournament": tour_view(tour)})


def _route(act: Callable[[web.Request, str], Awaitable[web.Response]], action: str) -> None:
    async def handler(request: web.Request) -> web.Response:
        return await act(request, action)

    tour_routes.post(f"/tournaments/{{tid}}/{action}")(needs_redis(handler))


for _action in ("withdraw", "return"):
    _route(_as_player, _action)
for _action in ("start", "pause", "resume", "remove"):
    _route(_organise, _action)


@tour_routes.get("/tournaments/{tid}/standings")
@needs_redis
async def standings(request: web.Request) -> web.Response:
    """?format=json (default), csv or ndjson."""
    fmt = query_option(request, "format")
    fmt = "json" if fmt is None else fmt
    try:
        tour, _ = await request.app[TOUR_STORE].get(request.match_info["tid"])
    except TourError as err:
        return _tour_error(err)
    if fmt == "csv":
        return web.Response(text=export_csv(tour), content_type="text/csv", charset="utf-8")
    if fmt == "ndjson":
        return web.Response(
            text=export_ndjson(tour), content_type="application/x-ndjson", charset="utf-8"
        )
    if fmt != "json":
        return _error(400, ErrorCode.BAD_REQUEST, "format must be json, csv or ndjson")
    return web.json_response(export_json(tour))


@tour_routes.get("/tournaments/{tid}/replays/{heat}")
@needs_redis
async def replay(request: web.Request) -> web.Response:
    """A finished race of the tournament as NDJSON (core/replay.py)."""
    store = request.app[TOUR_STORE]
    try:
        tour, _ = await store.get(request.match_info["tid"])
    except TourError as err:
        return _tour_error(err)
    heat = whole_number(request.match_info["heat"])
    if heat is None:
        return _error(404, ErrorCode.NOT_FOUND, "a race is named by its number")
    text = await store.replay(tour.id, heat)
    if text is None:
        if 0 <= heat < len(tour.heats):
            return _error(409, ErrorCode.NOT_FINISHED, "that race has not finished")
        return _error(404, ErrorCode.NOT_FOUND, f"no race {heat} in this tournament")
    if not tour.deal_raced(tour.heats[heat]):  # another heat races its deal
        return _error(403, ErrorCode.NOT_YET, HEAT_NOT_YET)
    return web.Response(text=text, content_type="application/x-ndjson", charset="utf-8")
