"""The daily deal over HTTP (docs/protocol.md section 13): today's deals, a day's board,
and a player's ranked attempt (started, or resumed) or practice.

A ranked attempt is a one-seat room the server opens already running, with the player's
seat in it (they come back to it by their identity: `identify`, then `join`): its clock is
the server's, from the moment it is opened, and closing the page does not stop it. A
dropped connection comes back to the same seat and clock; the seat is kept until the day
is over. Its result reaches the board when the race ends (a sweep on every process).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import re
import time
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from aiohttp import web
from sqlalchemy.exc import DBAPIError

import core
from protocol import ErrorCode, socket_path
from records.players import Player
from records.site_secrets import site_secret
from server.daily.board import Attempt, ranking, streaks
from server.daily.rule import commitment, day_bounds, day_of, day_over
from server.daily.store import RECENT_DAYS, DailyStore
from server.edge.app_keys import ACCOUNTS, METRICS, RECORDS_DB, REDIS, SERVICE, SETTINGS, STORE
from server.edge.archiving import archive_away
from server.edge.identity_routes import bearer_key
from server.edge.periodic import Periodic
from server.edge.redis_first import needs_redis
from server.edge.routes import (
    UNKNOWN_GAME,
    _error,
    creation_limited,
    json_object,
    path_game,
    secret_json,
)
from server.edge.web_client import VARY_ACCEPT, shell
from server.identity.accounts import IdentityError
from server.room.ids import new_room_id, new_token
from server.room.race import Race, RaceError, RoomConfig, Status
from server.storage.store import RoomStore, hash_token

__all__ = ["DAILY", "daily_ctx", "daily_routes", "finish_open_attempts", "replay_allowed", "settle"]

DAILY = web.AppKey("daily", DailyStore)
log = logging.getLogger(__name__)
DAILY_SWEEP = 2.0  # seconds between sweeps of attempts that ended
OPENING = 10.0  # seconds one request may take to open an attempt before another may
DAILY_SECRET = "daily"  # its name among the records' site secrets
UNRANKED = "undo makes the attempt unranked (it is kept, not ranked); hints are off"
CLOCK = "the clock is the server's: it started now and does not stop, even with the page closed"

daily_routes = web.RouteTableDef()

DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


async def _player(request: web.Request, required: bool) -> Player | None:
    key = bearer_key(request)
    if key is None and not required:
        return None
    return await request.app[ACCOUNTS].who(key, time.time())


def _game(request: web.Request) -> str:
    game = path_game(request)
    if game is None:
        raise _Refused(404, ErrorCode.BAD_GAME, UNKNOWN_GAME)
    return game


class _Refused(Exception):
    def __init__(
        self, status: int, code: ErrorCode, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.response = _error(status, code, message, headers)


def _handled(
    handler: Any,
) -> Any:
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            response: web.StreamResponse = await handler(request)
            return response
        except _Refused as refused:
            return refused.response
        except IdentityError as err:
            return _error(err.status, err.code, err.message)

    return wrapped


async def _named_now(request: web.Request, attempts: list[Attempt]) -> list[Attempt]:
    """The attempts under their players' names now (an attempt keeps the name its player
    had when it opened: a guest who names themselves later is shown by that name). The
    board is Redis's: with the records' database down, the names it kept."""
    try:
        now = await request.app[ACCOUNTS].players.by_ids(a.player for a in attempts)
    except DBAPIError:
        return attempts
    for attempt in attempts:
        player = now.get(attempt.player)
        if player is not None:
            attempt.name = player.name
    return attempts


def _public(a: Attempt) -> dict[str, Any]:
    return {
        "room": a.room,
        "started_at": a.started_at,
        "finished": a.finished,
        "won": a.won,
        "time": a.time,
        "progress": a.progress,
        "moves": a.moves,
        "ranked": a.ranked,
    }


@daily_routes.get("/daily")
@needs_redis
@_handled
async def get_daily(request: web.Request) -> web.StreamResponse:
    """Today's deals (a seed only once the day is over or your attempt is), yesterday's key;
    a browser navigating here gets the page."""
    page = shell(request)
    if page is not None:
        return page
    daily = request.app[DAILY]
    now = time.time()
    today = day_of(now)
    player = await _player(request, required=False)
    deals = await daily.deals(today)
    key = await daily.key(today)
    games = []
    for game in core.GAMES:
        mine = await daily.attempt(today, game, player.id) if player else None
        if mine is not None:
            mine = await settle(daily, request.app[STORE], today, game, mine)
        board = ranking(await _named_now(request, await daily.attempts(today, game)))
        played = mine is not None and mine.finished
        if board and not played:
            board[0]["room"] = None  # as on the board: no replay before your own attempt
        games.append(
            {
                "game": game,
                "seed": deals[game][0] if played else None,
                "you": _public(mine) if mine else None,
                "leader": board[0] if board else None,
                "ranked": len(board),
            }
        )
    yesterday = today - dt.timedelta(days=1)
    answer: dict[str, Any] = {
        "date": today.isoformat(),
        "ends_at": day_bounds(today)[1],
        "commitment": commitment(key),
        "games": games,
        "yesterday": {"date": yesterday.isoformat(), "key": (await daily.key(yesterday)).hex()},
    }
    if player is not None:
        answer["streaks"] = streaks(await daily.days(player.id), today)
    return web.json_response(answer, headers=VARY_ACCEPT)


@daily_routes.get("/daily/{date}/{game}")
@needs_redis
@_handled
async def get_board(request: web.Request) -> web.Response:
    """A day's board of a game: its ranked attempts in order; the key and seed once over."""
    daily = request.app[DAILY]
    now = time.time()
    text = request.match_info["date"]
    # Only the form the paths use (fromisoformat takes "20261203" and week dates too).
    if not DATE.fullmatch(text):
        raise _Refused(400, ErrorCode.BAD_REQUEST, "the date is YYYY-MM-DD")
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:  # written right, but no day: 2026-02-30
        message = f"{text} is no day of the calendar (the date is YYYY-MM-DD)"
        raise _Refused(400, ErrorCode.BAD_REQUEST, message) from None
    game = _game(request)
    today = day_of(now)
    if day > today:
        raise _Refused(404, ErrorCode.NOT_FOUND, "that day has not begun (UTC)")
    if today - day > dt.timedelta(days=RECENT_DAYS) and not await daily.dealt(day):
        raise _Refused(404, ErrorCode.NOT_FOUND, "no daily deal was dealt that day")
    player = await _player(request, required=False)
    attempts = await daily.attempts(day, game)
    mine = next((a for a in attempts if player is not None and a.player == player.id), None)
    if mine is not None:
        mine = await settle(daily, request.app[STORE], day, game, mine)
    over = day < today
    open_replays = over or (mine is not None and mine.finished)
    rows = ranking(await _named_now(request, attempts))
    if not open_replays:
        for row in rows:
            row["room"] = None  # no replay (no line to copy) before your own attempt is over
    key = await daily.key(day)
    deal = (await daily.deals(day))[game]
    answer: dict[str, Any] = {
        "date": day.isoformat(),
        "game": game,
        "commitment": commitment(key),
        "key": key.hex() if over else None,
        "seed": deal[0] if open_replays else None,
        "candidate": deal[1] if over else None,
        "board": rows,
        "running": sum(1 for a in attempts if not a.finished),
        "unranked": sum(1 for a in attempts if a.finished and not a.ranked),
        "you": _public(mine) if mine else None,
    }
    return web.json_response(answer)


@daily_routes.post("/daily/{game}")
@needs_redis
@_handled
async def start_attempt(request: web.Request) -> web.Response:
    """Open (or come back to) your ranked attempt at today's deal; `{"practice": true}`
    once it is over: a room of your own on the same deal, not ranked."""
    daily, store = request.app[DAILY], request.app[STORE]
    player = await _player(request, required=True)
    assert player is not None
    game = _game(request)
    body = await json_object(request)
    practice = body.get("practice", False)
    if not isinstance(practice, bool):
        raise _Refused(400, ErrorCode.BAD_REQUEST, "practice must be true or false")
    now = time.time()
    today = day_of(now)
    deal = f"{today.isoformat()} {game}"
    seed = (await daily.deals(today))[game][0]
    mine = await daily.attempt(today, game, player.id)
    if mine is not None:
        mine = await settle(daily, store, today, game, mine)
    if practice:
        if mine is None or not mine.finished:
            raise _Refused(
                409, ErrorCode.NOT_YET, "practice comes after your ranked attempt at today's deal"
            )
        limited = await creation_limited(request, "rooms")
        if limited is not None:
            return limited
        race, token = await _open_room(store, player, game, seed, now, deal, ranked=False)
        return _answer(race, token, None, ranked=False, status=201)
    if mine is not None and mine.finished:
        raise _Refused(
            409,
            ErrorCode.DAILY_TAKEN,
            f"your ranked attempt at today's {game} is over: further attempts are practice "
            '(POST with {"practice": true})',
        )
    if mine is not None:
        return await _resume(store, mine)
    limited = await creation_limited(request, "rooms")  # a room made, as by POST /rooms
    if limited is not None:
        return limited
    # One request at a time opens it: another one of this player's (a double click, a
    # second device) waits and answers the room that one opened, leaving no second room.
    mine = await _turn(daily, today, game, player.id)
    if mine is not None:
        return await _resume(store, mine)
    try:
        race, token = await _open_room(store, player, game, seed, now, deal, ranked=True)
        attempt = Attempt(
            player=player.id, name=player.name, room=race.room, started_at=now, bot=player.bot
        )
        claimed = await daily.claim(today, game, attempt)
    finally:
        await daily.end_turn(today, game, player.id)
    if claimed.room != race.room:  # another request of this player was first: that one
        return await _resume(store, claimed)
    return _answer(race, token, claimed, ranked=True, status=201)


async def _turn(daily: DailyStore, day: dt.date, game: str, player: str) -> Attempt | None:
    """Wait for this request's turn to open the player's attempt: None once it is this
    request's, or the attempt another request of theirs opened meanwhile."""
    deadline = time.monotonic() + 2 * OPENING
    while time.monotonic() < deadline:
        if await daily.take_turn(day, game, player, OPENING):
            mine = await daily.attempt(day, game, player)  # opened just before the turn
            if mine is not None:
                await daily.end_turn(day, game, player)
            return mine
        await asyncio.sleep(0.05)
        mine = await daily.attempt(day, game, player)
        if mine is not None:
            return mine
    raise _Refused(
        503, ErrorCode.UNAVAILABLE, "your attempt is being opened: try again", {"Retry-After": "1"}
    )


async def _resume(store: RoomStore, attempt: Attempt) -> web.Response:
    """The running attempt, its seat's token made anew for this device (the server keeps
    only a token's hash: the old one, on another device, stops holding the seat)."""
    token, now = new_token(), time.time()
    try:
        applied = await store.transact(
            attempt.room, lambda race: race.rekey(0, hash_token(token), now), now
        )
    except RaceError:
        raise _Refused(
            410, ErrorCode.UNKNOWN_ROOM, "that attempt's room is gone: it counts as it stood"
        ) from None
    return _answer(applied.race, token, attempt, ranked=True, status=200)


async def _open_room(
    store: RoomStore,
    player: Player,
    game: str,
    seed: int,
    now: float,
    deal: str,
    *,
    ranked: bool,
) -> tuple[Race, str]:
    """A one-seat room on the day's deal (`deal`: "DATE GAME"), the player seated and the
    race running from `now`, and the seat's token; the seat is kept (never forfeited for
    being away) until the day is over. `ranked`: the player's attempt, else practice (a
    room like any other, but on the deal: closed to those yet to play it)."""
    until = day_bounds(day_of(now))[1]
    config = RoomConfig(
        game=game,
        seats=1,
        seed_mode="fixed",
        undo=True,
        hints=False,
        grace=max(until - now, 3600.0),
        countdown=0.0,
        hidden=core.game_class(game).has_talon,
        daily=deal if ranked else None,
        daily_deal=None if ranked else deal,
        kind="daily" if ranked else "room",
        rated=False,  # a daily attempt ranks on its own board; one racer moves no rating
    )
    race = Race(room=new_room_id(), config=config, seed=seed, created_at=now)
    token = new_token()
    race.join(player.name, hash_token(token), now, player=player.id, bot=player.bot)
    race.set_ready(0, True, now)
    race.tick(now)
    assert race.status is Status.RUNNING
    await store.create(race)
    return race, token


def _answer(
    race: Race, token: str, attempt: Attempt | None, *, ranked: bool, status: int
) -> web.Response:
    return secret_json(
        {
            "room": race.view(),
            "ws": socket_path(race.room),
            "seat": 0,
            "token": token,
            "ranked": ranked,
            "attempt": _public(attempt) if attempt else None,
            "notice": f"{UNRANKED}; {CLOCK}" if ranked else "practice: not ranked",
        },
        status=status,
    )


async def settle(
    daily: DailyStore, store: RoomStore, day: dt.date, game: str, attempt: Attempt
) -> Attempt:
    """The attempt with its result, kept on the board, once its race has ended."""
    if attempt.finished:
        return attempt
    loaded = await store.load(attempt.room)
    if loaded is not None:
        race = loaded.race
        undone = any(m == "undo" for _, m in await store.moves(attempt.room, 0))
        if race.status is not Status.FINISHED or not race.results:
            seat = race.seats.get(0)
            if seat is not None:  # shown as it stands; kept on the board at its end only
                attempt.progress, attempt.moves = seat.progress, seat.moves
                attempt.used_undo = undone
            return attempt
        result = race.results[0]
        attempt.won, attempt.time = bool(result["won"]), result["time"]
        attempt.progress, attempt.moves = result["progress"], result["moves"]
        attempt.used_undo = undone
    # (a room gone before its end was seen: the attempt counts as lost, as it stood)
    attempt.finished = True
    await daily.finish(day, game, attempt)
    return attempt


async def finish_open_attempts(daily: DailyStore, store: RoomStore) -> int:
    """Put every attempt whose race has ended on its board; returns how many."""
    done = 0
    for day, game, player in await daily.open_attempts():
        attempt = await daily.attempt(day, game, player)
        if attempt is not None and not attempt.finished:
            done += (await settle(daily, store, day, game, attempt)).finished
    return done


async def line_open(app: web.Application, daily: str, player: str | None) -> bool:
    """The one rule of who sees a daily deal's line (`daily`: its "DATE GAME"): a daily
    attempt's moves (its replay, its finished room watched), and any other room's on that
    deal (practice, a ghost race: watched, its seat taken, its seed, its replay): a player
    (by id; None: anonymous) once their own attempt at that deal is over, everyone else once
    the day is over (so the lobby, which is everyone's, lists such a room only then). An
    attempt still running when its day ends (nothing ends it at midnight) keeps the lines
    closed to its player until it is over: else the leader's could be copied into it."""
    over = day_over(daily, time.time())
    if player is None:
        return over
    date, game = daily.split(" ")
    day = dt.date.fromisoformat(date)
    store = app[DAILY]
    mine = await store.attempt(day, game, player)
    if mine is not None:
        mine = await settle(store, app[STORE], day, game, mine)
    return over if mine is None else mine.finished


async def replay_allowed(request: web.Request, daily: str | None) -> bool:
    """Whether the requester may see a race's line (its replay, its seed): `line_open` for
    a race on a daily deal (`daily`: its "DATE GAME", `RoomConfig.deal_line`), any other
    race's always."""
    if daily is None:
        return True
    try:
        player = await _player(request, required=False)
    except IdentityError:  # a key that signs nobody in: as anonymous
        return day_over(daily, time.time())
    return await line_open(request.app, daily, player.id if player is not None else None)


async def todays_deal(app: web.Application, game: str, seed: int) -> str | None:
    """The daily deal ("DATE GAME") `seed` is of `game` today, if it is."""
    daily = app.get(DAILY)
    if daily is None:
        return None
    today = day_of(time.time())
    found = (await daily.deals(today)).get(game)
    return f"{today.isoformat()} {game}" if found is not None and found[0] == seed else None


async def closed_deals(request: web.Request) -> set[tuple[str, str]]:
    """Today's deals, as (game, seed in decimal text), whose line the requester may not see
    yet (`replay_allowed`): a record listing a race on one (a profile) shows no seed."""
    daily = request.app.get(DAILY)
    if daily is None:
        return set()
    today = day_of(time.time())
    try:  # the requester once, not once a game (replay_allowed's reading of the key)
        player = await _player(request, required=False)
    except IdentityError:
        player = None
    who = player.id if player is not None else None
    return {
        (game, str(seed))
        for game, (seed, _) in (await daily.deals(today)).items()
        if not await line_open(request.app, f"{today.isoformat()} {game}", who)
    }


async def _sweep(daily: DailyStore, store: RoomStore) -> None:
    """Attempts that ended onto their boards; today's and tomorrow's deals proved ahead."""
    await finish_open_attempts(daily, store)
    today = day_of(time.time())
    await daily.deals(today)
    await daily.deals(today + dt.timedelta(days=1))


async def daily_ctx(app: web.Application) -> AsyncIterator[None]:
    given = app[SETTINGS].daily_secret
    secret = given.encode() if given else partial(site_secret, app[RECORDS_DB], DAILY_SECRET)
    daily = DailyStore(app[REDIS], secret)
    app[DAILY] = daily
    app[SERVICE].ctx.daily_open = partial(line_open, app)  # watching, taking a seat
    sweeper = Periodic(
        "solrace-daily",
        lambda: _sweep(daily, app[STORE]),
        DAILY_SWEEP,
        what="daily sweep",
        log=log,
        metrics=app[METRICS],
        away=archive_away,  # the records' secret too, while they cannot be reached
    )
    sweeper.start()
    yield
    await sweeper.stop(timeout=5.0)
