"""The HTTP side: create and list rooms, a room's state and results, health, metrics.

Bodies and answers are JSON; errors are `{"error": {"code", "message"}}` with the same
codes as the WebSocket protocol (docs/protocol.md).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from sqlalchemy.exc import DBAPIError

import core
from protocol import ErrorCode, NotJson, parse_json, socket_path
from server.edge.admission.client_address import client_address
from server.edge.app_keys import (
    ACCOUNTS,
    ARCHIVE,
    DRAIN,
    FEED,
    METRICS,
    OUTAGE,
    RECORDS_SCHEMA,
    ROOM_LIMIT,
    SERVICE,
    SETTINGS,
    SOCKETS,
    STORE,
)
from server.edge.ghost_rooms import GhostUnavailable, deal_of, ghost_run, ghost_source
from server.edge.redis_first import needs_redis
from server.edge.tournament_keys import TOUR_RUNNER
from server.edge.web_client import shell
from server.identity.accounts import IdentityError
from server.live.lobby_live import live_rooms
from server.metrics import RECORDS_DOWN, REDIS_DOWN, Metrics, redis_error
from server.room.archived import archived_round
from server.room.ids import draw_seed, new_room_id, race_key, room_key
from server.room.race import FinishedRound, Race, RaceError, RoomConfig, Status
from server.room.tv import closest_race
from server.settings import parse_trusted_proxies
from server.tournament.rooms import RaceRecord, StoreRooms, record_of

__all__ = [
    "MAX_BODY",
    "UNKNOWN_GAME",
    "count_errors",
    "json_errors",
    "json_object",
    "metrics_text",
    "routes",
    "whole_number",
]

MAX_BODY = 64 * 1024  # bytes of a request body (a room's settings are a few dozen)
TOO_BIG = f"the body is over {MAX_BODY // 1024} KiB"

log = logging.getLogger(__name__)

routes = web.RouteTableDef()


# HTTP asks every 401 to say how to authenticate (some clients cannot read one that does
# not): by the player key, sent as `Authorization: Bearer KEY` (docs/protocol.md 11).
_CHALLENGE = {"WWW-Authenticate": "Bearer"}


def _error(
    status: int, code: ErrorCode, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    if status == 401:
        headers = {**_CHALLENGE, **(headers or {})}
    response = web.json_response(
        {"error": {"code": code.value, "message": message}}, status=status, headers=headers
    )
    response[ERROR_CODE] = code.value  # for count_errors
    return response


ERROR_CODE = web.ResponseKey("solrace_error_code", str)  # _error's code, for count_errors


def secret_json(body: dict[str, Any], status: int = 200) -> web.Response:
    """An answer that carries a secret (a player's key, a link code, a seat's, a
    registration's or an organiser's token): no cache on its way may keep it, lest it hand
    one device's secret to the next that asks."""
    return web.json_response(body, status=status, headers={"Cache-Control": "no-store"})


@web.middleware
async def count_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Count every HTTP error answer by its code (solrace_http_errors_total{code})."""
    response = await handler(request)
    code = response.get(ERROR_CODE)
    if code is not None:
        request.app[METRICS].http_errors.inc(code)
    return response


# What aiohttp answers by itself (unknown path, wrong method, body too big) as our codes.
_STATUS_CODES = {
    404: ErrorCode.NOT_FOUND,
    413: ErrorCode.TOO_BIG,
    429: ErrorCode.RATE_LIMITED,
    503: ErrorCode.UNAVAILABLE,
}


# What an error's own headers say that its client needs (426: the WebSocket version).
_KEPT_HEADERS = ("Allow", "Retry-After", "Sec-WebSocket-Version")


def _explain(exc: web.HTTPException, request: web.Request) -> str:
    if exc.status == 404:
        return f"no such path: {request.path[:100]} (see docs/protocol.md)"
    if exc.status == 405:
        return f"{request.method} is not allowed here (allowed: {exc.headers.get('Allow', '')})"
    if exc.status == 413:
        return TOO_BIG
    return exc.text if exc.text and exc.text != f"{exc.status}: {exc.reason}" else exc.reason


@web.middleware
async def json_errors(
    request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
) -> web.StreamResponse:
    """Every HTTP error is a JSON `{"error": {"code", "message"}}`, also those aiohttp
    raises itself (404 for an unknown path, 405, 413 for a body over 64 KiB) and a bug's
    500, which would otherwise be plain text."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        # Refused before a byte of it is read, not after waiting for all of it.
        response = _error(413, ErrorCode.TOO_BIG, TOO_BIG)
        response.force_close()
        return response
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        if exc.status == 404 and request.method == "GET" and request.match_info.http_exception:
            # No route at all: a browser navigating there gets the page, which says so.
            page = shell(request, status=404)
            if page is not None:
                return page
        code = _STATUS_CODES.get(exc.status, ErrorCode.BAD_REQUEST)
        headers = {k: v for k, v in exc.headers.items() if k in _KEPT_HEADERS}
        response = _error(exc.status, code, _explain(exc, request), headers)
        if exc.status in (408, 413):  # the rest of the body may still come: no more on it
            response.force_close()
        return response
    except ConnectionError as exc:  # the client left (e.g. in the middle of its body)
        log.info("%s %s: the client left: %s", request.method, request.path[:100], exc)
        return _error(400, ErrorCode.BAD_REQUEST, "the connection was lost")  # for nobody
    except DBAPIError as exc:
        # The records' database is down or refusing: an outage, not a bug (one line).
        request.app[METRICS].failed(exc)
        log.warning(
            "HTTP %s %s: the records database failed: %s", request.method, request.path, exc.orig
        )
        return _error(503, ErrorCode.UNAVAILABLE, RECORDS_DOWN, {"Retry-After": "1"})
    except Exception as exc:
        if request.headers.get("Upgrade", "").lower() == "websocket":
            raise  # a WebSocket handler has answered already: nothing to turn into JSON
        if redis_error(exc):
            # Not a bug: Redis (or one node of a cluster) is down or failing over. One line,
            # no traceback: an outage must not bury the log in hundreds of them.
            request.app[METRICS].failed(exc)
            log.warning("HTTP %s %s: Redis unavailable: %s", request.method, request.path, exc)
            return _error(
                503,
                ErrorCode.UNAVAILABLE,
                REDIS_DOWN,
                {"Retry-After": "1"},
            )
        log.exception("HTTP %s %s failed", request.method, request.path)
        return _error(500, ErrorCode.INTERNAL, "the server failed on that request")


async def json_object(request: web.Request) -> dict[str, Any]:
    """The request's body, a JSON object ({} when it has none), as every POST reads it,
    without its fields given as null (which take their defaults, as on the WebSocket:
    `"time_limit": null` is no limit): 408 when it has not come within `body_timeout`
    (and `json_errors` closes the connection, whose rest of the body is no next request),
    400 when it is no JSON object (not JSON, nested thousands deep, or in a charset
    nobody knows)."""
    if not request.can_read_body:
        return {}
    timeout = request.app[SETTINGS].body_timeout
    try:
        async with asyncio.timeout(timeout or None):
            body = parse_json(await request.text())
    except TimeoutError:  # a client trickling its body must not hold the connection
        raise web.HTTPRequestTimeout(text=f"the body took over {timeout:g} s") from None
    except NotJson as err:
        raise web.HTTPBadRequest(text=str(err)) from None
    except (ValueError, LookupError, RecursionError):
        raise web.HTTPBadRequest(text="the body must be a JSON object") from None
    if not isinstance(body, dict):
        raise web.HTTPBadRequest(text="the body must be a JSON object")
    return {k: v for k, v in body.items() if v is not None}


def query_option(request: web.Request, name: str) -> str | None:
    """The query's option `name`, None when not given; given more than once, the request
    is refused (400 bad_request): which one would count is anybody's guess."""
    values = request.query.getall(name, [])
    if len(values) > 1:
        raise web.HTTPBadRequest(text=f"the query option {name!r} is given more than once")
    return values[0] if values else None


def whole_number(text: str) -> int | None:
    """A query option's whole number, in ASCII digits alone; None for anything else, such
    as what Python's int() would read too (`1_0`, ` 5`, an Arabic-Indic `٣`, `-1`)."""
    return int(text) if text.isascii() and text.isdigit() else None


UNKNOWN_GAME = f"game must be one of {', '.join(core.GAMES)}"  # bad_game's message


def path_game(request: web.Request) -> str | None:
    """The game a path names (`/leaderboard/{game}`, `/daily/{game}`, ...), read in any
    case as room and tournament ids are; None for no game of ours."""
    game = request.match_info["game"].lower()
    return game if game in core.GAMES else None


class BadRequest(ValueError):
    pass


def _number(
    body: dict[str, Any], name: str, default: float | None, low: float, high: float
) -> float | None:
    value = body.get(name, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRequest(f"{name} must be a number")
    # Compared as they came (an int of 400 digits is no float: math.isfinite raised).
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        raise BadRequest(f"{name} must be between {low:g} and {high:g}")
    return float(value)


def _flag(body: dict[str, Any], name: str, default: bool) -> bool:
    value = body.get(name, default)
    if not isinstance(value, bool):
        raise BadRequest(f"{name} must be true or false")
    return value


async def creation_limited(request: web.Request, what: str) -> web.Response | None:
    """The 429 answer when the client has created too much lately (rooms and tournaments
    share one budget per client address), else None."""
    settings = request.app[SETTINGS]
    address = client_address(
        request.remote,
        request.headers.get("X-Forwarded-For"),
        parse_trusted_proxies(settings.trusted_proxies),
        limit_loopback=settings.limit_loopback,
    )
    wait = await request.app[ROOM_LIMIT].take(request.app[STORE], address)
    if not wait:
        return None
    return _error(
        429,
        ErrorCode.RATE_LIMITED,
        f"too many {what} from {address}: try again in {wait:g} s",
        {"Retry-After": str(math.ceil(wait))},
    )


@routes.post("/rooms")
@needs_redis
async def create_room(request: web.Request) -> web.Response:
    """Create a room: {"game", "seed": N | "random" | "winnable", "seats", "undo", "hints",
    "time_limit", "spectator_delay", "grace", "countdown", "rated"}; every field but game
    optional."""
    settings = request.app[SETTINGS]
    limited = await creation_limited(request, "rooms")
    if limited is not None:
        return limited
    body = await json_object(request)
    ghost = None
    if "ghost_seat" in body and "ghost" not in body:
        return _error(
            400,
            ErrorCode.BAD_REQUEST,
            "ghost_seat picks a racer of the race in ghost: give ghost too",
        )
    if "ghost" in body:
        try:
            source = ghost_source(body)
            if source == "best":  # the requester's own fastest win at the game: their run
                source, seat = await _own_best(request, body)
                if seat is not None:
                    body.setdefault("ghost_seat", seat)
            if "." in source:  # an archived race
                source = race_key(source)
                found = await request.app[ARCHIVE].replay(source)
                if found is None:
                    return _error(404, ErrorCode.UNKNOWN_RACE, "no archived race has that id")
                held = await archived_line_held(request, found)
                text: str | web.Response = found if held is None else held
            else:  # a room's latest race (a daily attempt's only once one may see it)
                source = room_key(source)
                text = await room_replay(request, source)
            if isinstance(text, web.Response):
                return text
            ghost = ghost_run(source, text, body)
        except GhostUnavailable as err:
            return _error(err.status, err.code, err.message)
        # A game that is none at all is refused below, as for any room (`bad_game`).
        game = body.setdefault("game", ghost.game)
        if game in core.GAMES and (game != ghost.game or body.get("seats", 2) != 2):
            return _error(400, ErrorCode.BAD_REQUEST, "a ghost race is 2 seats of its game")
        if body.setdefault("seed", ghost.seed) != ghost.seed:
            return _error(400, ErrorCode.BAD_REQUEST, "a ghost race is on its race's deal")
    game = body.get("game")
    if game not in core.GAMES:
        return _error(400, ErrorCode.BAD_GAME, UNKNOWN_GAME)
    try:
        seats = _number(body, "seats", 2, 1, settings.max_seats)
        if seats is None or seats != int(seats):
            raise BadRequest("seats must be a whole number")
        config = RoomConfig(
            game=game,
            seats=int(seats),
            undo=_flag(body, "undo", True),
            hints=_flag(body, "hints", False),
            time_limit=_number(body, "time_limit", None, 1, 86400),
            spectator_delay=_number(body, "spectator_delay", 0.0, 0, 3600) or 0.0,
            grace=_number(body, "grace", settings.grace, 0, 3600) or 0.0,
            countdown=_number(body, "countdown", settings.countdown, 0, 60) or 0.0,
            hidden=core.game_class(game).has_talon,
            ghost=ghost.source if ghost else None,
            kind="ghost" if ghost else "room",
            daily_deal=ghost.daily_deal if ghost else None,
        )
    except BadRequest as err:
        return _error(400, ErrorCode.BAD_REQUEST, str(err))
    seed_value = body.get("seed", "random")
    notice = None
    if isinstance(seed_value, int) and not isinstance(seed_value, bool):
        if not 1 <= seed_value <= core.MAX_SEED:
            return _error(400, ErrorCode.BAD_REQUEST, f"seed must be 1..{core.MAX_SEED}")
        seed, mode = seed_value, "fixed"
    elif seed_value in ("random", "winnable"):
        seed, mode = await draw_seed(game, seed_value)
        if mode != seed_value:
            notice = "no winnable deal was found in time: this deal is random"
    else:
        return _error(400, ErrorCode.BAD_REQUEST, 'seed must be a number, "random" or "winnable"')
    # A deal the host picked may be one they know: rated races deal a deal nobody chose.
    try:
        rated = _flag(body, "rated", mode != "fixed")
    except BadRequest as err:
        return _error(400, ErrorCode.BAD_REQUEST, str(err))
    if rated and ghost is not None:  # its deal is the recorded race's, known to its racers
        return _error(400, ErrorCode.BAD_REQUEST, "a ghost race is never rated")
    if rated and mode == "fixed":
        return _error(400, ErrorCode.BAD_REQUEST, "a deal chosen by its number is never rated")
    if mode == "fixed" and config.daily_deal is None:
        # Today's daily deal by its number: a room on it is closed as practice is, and
        # comes after one's own ranked attempt at it (nobody studies it, with hints or
        # not, before or while they play it).
        from server.edge.daily_routes import replay_allowed, todays_deal

        deal = await todays_deal(request.app, game, seed)
        if deal is not None and not await replay_allowed(request, deal):
            return _error(409, ErrorCode.NOT_YET, DAILY_ROOM_NOT_YET)
        config = dataclasses.replace(config, daily_deal=deal)
    config = dataclasses.replace(config, seed_mode=mode, rated=rated)
    race = Race(room=new_room_id(), config=config, seed=seed, created_at=time.time())
    if ghost is not None:
        race.add_ghost(ghost.name, ghost.steps, race.created_at)
    await request.app[STORE].create(race)
    request.app[METRICS].rooms_created.inc()
    # The room in the socket path lets a balancer send all of its sockets to one process.
    answer: dict[str, Any] = {"room": race.view(), "ws": socket_path(race.room)}
    if notice:
        answer["notice"] = notice
    return web.json_response(answer, status=201)


async def _own_best(request: web.Request, body: dict[str, Any]) -> tuple[str, int | None]:
    """The archived race of the requester's fastest win at `body["game"]`, and their seat
    in it (whose run the ghost is, unless another is named)."""
    from server.edge.identity_routes import bearer_key  # it builds on this module's errors

    game = body.get("game")
    if game is None:
        raise GhostUnavailable(400, ErrorCode.BAD_GAME, 'a ghost of your "best" needs the game')
    if game not in core.GAMES:
        raise GhostUnavailable(400, ErrorCode.BAD_GAME, UNKNOWN_GAME)
    accounts = request.app[ACCOUNTS]
    try:
        player = await accounts.who(bearer_key(request), time.time())
    except IdentityError as err:
        raise GhostUnavailable(err.status, err.code, err.message) from None
    best = [b for b in await accounts.profiles.best_times(player.id) if b["game"] == game]
    if not best:
        raise GhostUnavailable(404, ErrorCode.NOT_FOUND, f"you have no {game} win on record yet")
    race = str(best[0]["race"])
    return race, await accounts.profiles.seat_in(player.id, race)


async def _live_rooms(request: web.Request, wanted: tuple[str, ...]) -> list[dict[str, Any]]:
    """ROOM views of the recent rooms whose status is in `wanted`, newest first."""
    return [dict(loaded.race.view()) for loaded in await live_rooms(request.app[STORE], wanted)]


@routes.get("/rooms")
@needs_redis
async def list_rooms(request: web.Request) -> web.Response:
    """Rooms in their lobby, counting down or running, newest first."""
    rooms = await _live_rooms(request, ("lobby", "countdown", "running"))
    return web.json_response({"rooms": rooms})


@routes.get("/tv/room")
@needs_redis
async def tv_room(request: web.Request) -> web.Response:
    """The race the TV page shows: the closest one running now (server/room/tv.py), or null."""
    room = closest_race(await _live_rooms(request, ("running",)))
    return web.json_response({"room": room})


@routes.get("/games")
async def games(request: web.Request) -> web.Response:
    """What a client needs to know of each game besides the rules it must not copy."""
    return web.json_response(
        {
            "games": [
                {
                    "name": name,
                    "title": cls.title,
                    "cards": cls.progress_total,
                    "hidden": cls.has_talon,
                    "piles": list(cls.pile_ids),
                }
                for name, cls in core.GAME_CLASSES.items()
            ]
        }
    )


@routes.get("/rooms/{room}")
@needs_redis
async def get_room(request: web.Request) -> web.Response:
    loaded = await request.app[STORE].load(room_key(request.match_info["room"]))
    if loaded is None:
        return _error(404, ErrorCode.UNKNOWN_ROOM, "no such room")
    view = loaded.race.view()
    if not await seed_open(request, loaded.race):
        view["seed"] = None
    return web.json_response({"room": view, "version": loaded.version})


@routes.get("/rooms/{room}/results")
@needs_redis
async def get_results(request: web.Request) -> web.Response:
    """The room's latest finished round's results: the live room's while Redis holds it,
    else its latest archived race's, the same answer (server/room/archived.py)."""
    room = room_key(request.match_info["room"])
    loaded = await request.app[STORE].load(room)
    if loaded is None:
        return await archived_results(request, room)
    race = loaded.race
    # The latest finished round's: while a rematch's round counts down or runs, the one
    # before it (its `round` says which).
    done = race.finished_round()
    if done is None:
        return _error(409, ErrorCode.NOT_FINISHED, "no race of this room has finished yet")
    if not await seed_open(request, race):
        done = {**done, "seed": None}
    return _results(race.room, race.config.game, done)


async def archived_results(request: web.Request, room: str) -> web.Response:
    """The results of an expired room's latest archived race; its seed only to whom its
    replay is open (`archived_line_held`: the replay's header holds the seed)."""
    race = await request.app[ARCHIVE].room_latest(room)
    if race is None:
        return _error(404, ErrorCode.UNKNOWN_ROOM, "no such room")
    seed_shown = await archived_line_held(request, race.replay) is None
    return _results(race.room, race.game, archived_round(race, seed_shown))


def _results(room: str, game: str, done: FinishedRound) -> web.Response:
    return web.json_response(
        {
            "room": room,
            "game": game,
            "seed": done["seed"],
            "round": done["round"],
            "finish_reason": done["finish_reason"],
            "results": done["results"],
        }
    )


@routes.get("/rooms/{room}/replay")
@needs_redis
async def get_replay(request: web.Request) -> web.Response:
    """The room's finished race as NDJSON (core/replay.py): header, every accepted move,
    results, each line chained to the previous one by its hash. Once the room has expired
    from Redis (or while its next round runs), its latest archived race."""
    text = await room_replay(request, room_key(request.match_info["room"]))
    if isinstance(text, web.Response):
        return text
    return web.Response(text=text, content_type="application/x-ndjson", charset="utf-8")


async def room_replay(request: web.Request, room: str) -> str | web.Response:
    """The text of the room's latest finished race (from Redis while the room lives, else
    the archive's), or the error answer saying why there is none to give."""
    held = await room_line_held(request, room)
    if held is not None:
        return held
    try:
        record = await StoreRooms(request.app[STORE]).record(room)
    except RaceError:
        record, live = None, False
    else:
        live = True
    if record is None and live:
        # Its next round runs: its last race may be in the outbox, not archived yet.
        kept = await request.app[STORE].ended(room)
        record = record_of(kept[-1].race, kept[-1].moves) if kept else None
    if record is not None:
        return await race_replay(request.app, record)
    archived = await request.app[ARCHIVE].room_replay(room)
    if archived is None and not live:
        return _error(404, ErrorCode.UNKNOWN_ROOM, "no such room")
    if archived is None:
        return _error(409, ErrorCode.NOT_FINISHED, "the race has not finished")
    held = await archived_line_held(request, archived)
    return archived if held is None else held


DAILY_ROOM_NOT_YET = "a room on today's daily deal comes after your ranked attempt at it"
DAILY_NOT_YET = (
    "a daily deal's replay opens once your own attempt at that deal is over, or the day is"
)
HEAT_NOT_YET = (
    "a tournament race's replay opens once every race on its deal (every heat of its round) "
    "has finished"
)


async def line_held(
    request: web.Request, daily: str | None, tournament: str | None, room: str
) -> web.Response | None:
    """The 403 `not_yet` answer while a finished race's line (its replay, its boards, a
    ghost of it) is not for the requester yet, else None: a race on a daily deal (`daily`, its "DATE
    GAME") until their own attempt at that deal is over or the day is
    (daily_routes.replay_allowed), a tournament heat's while another heat races its deal
    (TourRunner.line_open)."""
    from server.edge.daily_routes import replay_allowed  # it builds on this module's errors

    if not await replay_allowed(request, daily):
        return _error(403, ErrorCode.NOT_YET, DAILY_NOT_YET)
    runner = request.app.get(TOUR_RUNNER)
    if tournament is None or runner is None or await runner.line_open(tournament, room):
        return None
    return _error(403, ErrorCode.NOT_YET, HEAT_NOT_YET)


async def room_line_held(request: web.Request, room: str) -> web.Response | None:
    """`line_held` for the race of a room that Redis still holds (none: nothing held). A
    tournament's race that is still being run has no line to hold: it is `not_finished`."""
    loaded = await request.app[STORE].load(room)
    if loaded is None:
        return None
    race = loaded.race
    tournament = race.config.tournament if race.status is Status.FINISHED else None
    return await line_held(request, race.config.deal_line, tournament, room)


async def archived_line_held(request: web.Request, text: str) -> web.Response | None:
    """`line_held` for an archived race, by its replay's header (a daily deal's race and
    a tournament's say so)."""
    header = json.loads(text.split("\n", 1)[0])
    fields: dict[str, Any] = header if isinstance(header, dict) else {}
    tournament, room = fields.get("tournament"), fields.get("room")
    return await line_held(
        request,
        deal_of(fields),
        tournament if isinstance(tournament, str) else None,
        room if isinstance(room, str) else "",
    )


async def seed_open(request: web.Request, race: Race) -> bool:
    """Whether the requester may have the room's seed: a room on a daily deal (its
    attempt, practice, a ghost race) gives it as its replay (the deal is its line)."""
    from server.edge.daily_routes import replay_allowed  # it builds on this module's errors

    return await replay_allowed(request, race.config.deal_line)


async def race_replay(app: web.Application, record: RaceRecord) -> str:
    """A finished race's one replay, whichever URL serves it: a tournament's race is its
    heat's replay, with the tournament, round and heat in the header."""
    runner = app.get(TOUR_RUNNER)
    return record.replay() if runner is None else await runner.replay(record)


@routes.get("/games/{game}/rules")
async def game_rules(request: web.Request) -> web.Response:
    """A game's rules for players (Markdown), the text every client shows: core.rules_text."""
    game = path_game(request)
    if game is None:
        return _error(404, ErrorCode.BAD_GAME, UNKNOWN_GAME)
    text = core.rules_text(game)
    return web.Response(text=text, content_type="text/markdown", charset="utf-8")


@routes.get("/healthz")
async def healthz(request: web.Request) -> web.Response:
    drain = request.app[DRAIN]
    if drain.draining:  # still serving, but a balancer should send no one new here
        reason = drain.reason(time.monotonic())
        return web.json_response({"ok": False, "draining": True, "reason": reason}, status=503)
    # Whatever keeps this process from serving: Redis now, the pub/sub feed (events cannot
    # reach its sockets), or a cut-off not yet seen to be over (server/edge/redis_watch.py).
    problem = await request.app[STORE].problem() or request.app[FEED].problem()
    if problem is None and request.app[OUTAGE].cut_off:
        problem = "cut off from Redis: taking players again at the next check"
    if problem is not None:
        return web.json_response({"ok": False, "redis": problem}, status=503)
    health: dict[str, Any] = {
        "ok": True,
        "connections": len(request.app[SOCKETS]),
        "rooms": len(request.app[SERVICE].hub.rooms),
    }
    # Races are served without the records: said, but no reason to send players elsewhere.
    if (records := request.app[RECORDS_SCHEMA].problem) is not None:
        health["records"] = records
    return web.json_response(health)


@routes.get("/metrics")
async def metrics(request: web.Request) -> web.Response:
    if request.app[SETTINGS].metrics_port:  # kept off the public port (server/edge/metrics_port.py)
        return _error(404, ErrorCode.NOT_FOUND, "no such path: /metrics (see docs/protocol.md)")
    return metrics_text(request.app[METRICS])


def metrics_text(metrics: Metrics) -> web.Response:
    # The text exposition format's own content type (what Prometheus asks for and expects).
    return web.Response(
        body=metrics.render().encode(),
        headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"},
    )
