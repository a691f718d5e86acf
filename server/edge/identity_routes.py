"""Players over HTTP: a new anonymous player, who I am, my name, claiming my account and
changing its password, signing in and out, my devices, link codes (docs/protocol.md
section 11).

A request acts as a player by its key in `Authorization: Bearer KEY`, never in the URL
(URLs end up in logs and browser histories). Answers carry a key only to the device that
asked for it (`POST /players`, `/sign-in`, `/link`).
"""

from __future__ import annotations

import contextlib
import math
import time
from typing import Any

from aiohttp import web

from core import splits as core_splits
from protocol import ErrorCode
from records.names import BadName, check_name
from records.players import Player
from records.profiles import PER_PAGE_MAX
from server.edge.admission.client_address import client_address
from server.edge.app_keys import ACCOUNTS, SETTINGS
from server.edge.redis_first import needs_redis
from server.edge.routes import (
    _error,
    creation_limited,
    json_object,
    query_option,
    secret_json,
    whole_number,
)
from server.edge.tournament_keys import TOUR_RUNNER
from server.identity.accounts import IdentityError, player_ref
from server.settings import parse_trusted_proxies

__all__ = ["bearer_key", "identity_routes"]

identity_routes = web.RouteTableDef()


def bearer_key(request: web.Request) -> str | None:
    """The player key of `Authorization: Bearer KEY`, if any."""
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    return key.strip() or None if scheme.lower() == "bearer" else None


def _address(request: web.Request) -> str | None:
    settings = request.app[SETTINGS]
    return client_address(
        request.remote,
        request.headers.get("X-Forwarded-For"),
        parse_trusted_proxies(settings.trusted_proxies),
        limit_loopback=settings.limit_loopback,
    )


def _refusal(err: IdentityError) -> web.Response:
    headers = None
    if err.retry_after is not None:
        headers = {"Retry-After": str(math.ceil(err.retry_after))}
    return _error(err.status, err.code, err.message, headers)


async def _me(request: web.Request) -> Player:
    return await request.app[ACCOUNTS].who(bearer_key(request), time.time())


async def _me_and_key(request: web.Request) -> tuple[Player, str]:
    """The requesting player and the key it sent (IdentityError bad_key if none)."""
    player = await _me(request)
    key = bearer_key(request)
    assert key is not None  # it signed the player in
    return player, key


def _self(player: Player, **more: Any) -> dict[str, Any]:
    """What a player's own device is told of them: the PLAYER object and when it began."""
    return {"player": {**player_ref(player), "created_at": player.created_at}, **more}


@identity_routes.post("/players")
@needs_redis
async def new_player(request: web.Request) -> web.Response:
    """A new anonymous player for this device: {"bot"?: bool, "label"?: str}."""
    limited = await creation_limited(request, "players")
    if limited is not None:
        return limited
    try:
        body = await json_object(request)
        bot = body.get("bot", False)
        if not isinstance(bot, bool):
            raise IdentityError(ErrorCode.BAD_REQUEST, "bot must be true or false")
        player, key = await request.app[ACCOUNTS].create(
            time.time(), bot=bot, label=body.get("label")
        )
    except IdentityError as err:
        return _refusal(err)
    return secret_json(_self(player, key=key), status=201)


@identity_routes.get("/me")
async def get_me(request: web.Request) -> web.Response:
    try:
        player = await _me(request)
        names = await request.app[ACCOUNTS].names(player)
    except IdentityError as err:
        return _refusal(err)
    past = [{"name": n.name, "until_at": n.until_at} for n in names]
    return web.json_response(_self(player, names=past))


async def _change_me(request: web.Request, field: str) -> web.Response:
    """Change one thing of the requesting player: its `field` of the body goes to
    `Accounts.rename` (name) or `Accounts.claim` (password); the player as it is now."""
    try:
        player, key = await _me_and_key(request)
        body = await json_object(request)
        accounts = request.app[ACCOUNTS]
        if field == "name":
            changed = await accounts.rename(player, body.get(field), time.time())
        else:
            changed = await accounts.claim(player, key, body.get(field), time.time())
    except IdentityError as err:
        return _refusal(err)
    return web.json_response(_self(changed))


@identity_routes.post("/me/name")
@needs_redis
async def set_name(request: web.Request) -> web.Response:
    return await _change_me(request, "name")


@identity_routes.post("/me/claim")
async def claim(request: web.Request) -> web.Response:
    return await _change_me(request, "password")


@identity_routes.post("/me/link")
async def make_link_code(request: web.Request) -> web.Response:
    try:
        player, key = await _me_and_key(request)
        code, expires_at = await request.app[ACCOUNTS].link_code(player, key, time.time())
    except IdentityError as err:
        return _refusal(err)
    return secret_json({"code": code, "expires_at": expires_at}, status=201)


@identity_routes.post("/sign-in")
@needs_redis
async def sign_in(request: web.Request) -> web.Response:
    """{"name", "password", "label"?}: a new key for this device."""
    try:
        body = await json_object(request)
        player, key = await request.app[ACCOUNTS].sign_in(
            _address(request),
            body.get("name"),
            body.get("password"),
            time.time(),
            body.get("label"),
        )
    except IdentityError as err:
        return _refusal(err)
    return secret_json(_self(player, key=key))


@identity_routes.post("/link")
@needs_redis
async def link(request: web.Request) -> web.Response:
    """{"code", "label"?}: a new key for this device, from a code another device made."""
    try:
        body = await json_object(request)
        player, key = await request.app[ACCOUNTS].link(
            _address(request), body.get("code"), time.time(), body.get("label")
        )
    except IdentityError as err:
        return _refusal(err)
    return secret_json(_self(player, key=key))


@identity_routes.post("/sign-out")
async def sign_out(request: web.Request) -> web.Response:
    """This device's key signs nobody in any more (the player's other devices stay in)."""
    try:
        _, key = await _me_and_key(request)
        await request.app[ACCOUNTS].sign_out(key)
    except IdentityError as err:
        return _refusal(err)
    return web.json_response({"signed_out": True})


@identity_routes.get("/me/devices")
async def my_devices(request: web.Request) -> web.Response:
    """The devices holding the player's keys: each by a public id, never its key."""
    try:
        player, key = await _me_and_key(request)
        devices = await request.app[ACCOUNTS].devices(player, key)
    except IdentityError as err:
        return _refusal(err)
    return web.json_response({"devices": devices})


@identity_routes.post("/me/devices/{device}/sign-out")
async def sign_out_device(request: web.Request) -> web.Response:
    """One of the player's devices signs nobody in any more (a lost phone, from the
    laptop); this device's own id signs it out as `POST /sign-out` does."""
    try:
        player, key = await _me_and_key(request)
        await request.app[ACCOUNTS].sign_out_device(player, key, request.match_info["device"])
    except IdentityError as err:
        return _refusal(err)
    return web.json_response({"signed_out": True})


@identity_routes.post("/me/sign-out-others")
async def sign_out_others(request: web.Request) -> web.Response:
    """Every device of the player but this one signs nobody in any more: how many."""
    try:
        player, key = await _me_and_key(request)
        count = await request.app[ACCOUNTS].sign_out_others(player, key)
    except IdentityError as err:
        return _refusal(err)
    return web.json_response({"signed_out": count})


@identity_routes.post("/me/password")
@needs_redis
async def change_password(request: web.Request) -> web.Response:
    """{"password": CURRENT, "new_password": NEW}: the account's new password; every other
    device is signed out (how many: `signed_out`)."""
    try:
        player, key = await _me_and_key(request)
        body = await json_object(request)
        changed, count = await request.app[ACCOUNTS].change_password(
            _address(request),
            player,
            key,
            body.get("password"),
            body.get("new_password"),
        )
    except IdentityError as err:
        return _refusal(err)
    return web.json_response(_self(changed, signed_out=count))


@identity_routes.get("/names/{name}")
async def name_free(request: web.Request) -> web.Response:
    """Whether a player could take `name` now: always 200, so that a page can ask before
    it renames (`available`, else `problem`: why not). Asked with a player's key, their own
    name (in any case: a rename in case only) is theirs to take."""
    name = request.match_info["name"]  # answered as asked (a page matches answers to names)
    try:
        check_name(name)  # its length first: a long one costs nothing more
    except BadName as err:
        return web.json_response({"name": name, "available": False, "problem": str(err)})
    accounts = request.app[ACCOUNTS]
    holder = await accounts.players.by_name(name)
    if holder is not None and bearer_key(request) is not None:
        with contextlib.suppress(IdentityError):  # a key that signs nobody in: anyone
            if (await _me(request)).id == holder.id:
                holder = None
    problem = None if holder is None else f"another player is called {holder.name!r}"
    return web.json_response({"name": name, "available": holder is None, "problem": problem})


def _page_number(request: web.Request, name: str, default: int, high: int) -> int:
    given = query_option(request, name)
    value = default if given is None else whole_number(given)
    if value is None or not 1 <= value <= high:
        raise IdentityError(ErrorCode.BAD_REQUEST, f"{name} must be a whole number 1..{high}")
    return value


async def heat_open(request: web.Request, item: dict[str, Any]) -> bool:
    """Whether a profile's tournament race (its race id "ROOM.ROUND") may show its deal:
    once no other heat races it (TourRunner.line_open)."""
    runner = request.app.get(TOUR_RUNNER)
    room = str(item.get("race", "")).rpartition(".")[0]
    return runner is None or await runner.line_open(str(item["tournament"]), room)


@identity_routes.get("/players/{name}")
async def profile(request: web.Request) -> web.Response:
    """A player's public profile: who they are, ratings per game with their history,
    races played and won, best times, their races a page at a time (`page`, `per_page`)."""
    accounts = request.app[ACCOUNTS]
    try:
        page = _page_number(request, "page", 1, 10_000)
        per_page = _page_number(request, "per_page", 20, PER_PAGE_MAX)
        name = request.match_info["name"][:40]
        # A link under a name given up since (a race's result, a standings row) still
        # leads to its player while nobody has that name: the answer says theirs now.
        player = await accounts.players.by_name(name) or await accounts.players.by_former_name(name)
        if player is None:
            raise IdentityError(ErrorCode.UNKNOWN_PLAYER, "no player has that name", 404)
    except IdentityError as err:
        return _refusal(err)
    from server.edge.daily_routes import closed_deals  # it builds on this module

    seen = await accounts.profiles.profile(player.id, page, per_page, time.time())
    player = seen.player  # as the rest was read: a rename meanwhile shows whole or not at all
    closed = await closed_deals(request)  # today's deal: nobody's before their attempt
    for item in (*seen.races.items, *seen.best):  # and a tournament's deal with its round
        if (item.get("game"), item.get("seed")) in closed or (
            item.get("tournament") and not await heat_open(request, item)
        ):
            item["seed"] = None
    best = {entry["game"]: entry["best"] for entry in seen.splits}
    for item in seen.races.items:  # each race's splits, and the delta to the best of its game
        item["splits"] = seen.splits_by_race.get(item.get("race", ""))
        item["delta"] = (
            core_splits.delta(item["splits"], best.get(item.get("game", "")))
            if item["splits"] is not None
            else None
        )
    return web.json_response(
        {
            "player": {
                **player_ref(player),
                "created_at": player.created_at,
                "names": [{"name": n.name, "until_at": n.until_at} for n in seen.names],
            },
            "ratings": seen.ratings,
            "stats": seen.stats,
            "best": seen.best,
            "splits": seen.splits,
            "races": {
                "items": seen.races.items,
                "page": seen.races.page,
                "per_page": seen.races.per_page,
                "more": seen.races.more,
            },
        }
    )
