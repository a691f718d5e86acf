"""Tournaments by identity: a registration is a player's (one each, under their name, with
their rating), its races' seats are theirs, a Knockout may be seeded by rating, and the
standings show ratings and bots."""

from __future__ import annotations

import asyncio

import pytest
from support.finished import finish_identified_race
from support.http import get_json, post_json
from support.players import call, new_player
from support.wsclient import WsClient

import protocol as p
from protocol import ErrorCode
from server.tournament.formats import bracket_order
from server.tournament.machine import Tournament
from server.tournament.model import Entrant, TourConfig, TourError

T0 = 1000.0


def knockout(seeding: str, ratings: list[int | None]) -> Tournament:
    t = Tournament("t", TourConfig(name="cup", format="knockout", seeding=seeding), "o", T0)
    for i, rating in enumerate(ratings):
        t.register(f"p{i}", f"h{i}", T0, Entrant(f"a{i}", rating=rating))
    t.start(T0)
    return t


def first_round(t: Tournament) -> list[tuple[int | None, int | None]]:
    return [(m.a, m.b) for m in t.matches if m.round == 1]


def test_a_knockout_seeded_by_rating_puts_the_strongest_apart() -> None:
    ratings = [1000, 1500, None, 1200, 1100, None]
    by_rating = knockout("rating", ratings)
    seeds = [1, 3, 4, 0, 2, 5]  # 1500, 1200, 1100, 1000, then the unrated in order
    order = bracket_order(8)
    expected = [seeds[s - 1] if s <= len(seeds) else None for s in order]
    pairs = [(expected[2 * i], expected[2 * i + 1]) for i in range(4)]
    assert first_round(by_rating) == pairs
    by_order = knockout("registration", ratings)
    expected = [s - 1 if s <= 6 else None for s in order]
    assert first_round(by_order) == [(expected[2 * i], expected[2 * i + 1]) for i in range(4)]
    # The standings carry each player's rating.
    assert {r["name"]: r["rating"] for r in by_rating.standings()}["p1"] == 1500


def test_one_registration_per_player() -> None:
    t = Tournament("t", TourConfig(name="cup"), "o", T0)
    t.register("ann", "h0", T0, Entrant("a0"))
    with pytest.raises(TourError) as refused:
        t.register("ann2", "h1", T0, Entrant("a0"))
    assert refused.value.code is ErrorCode.ALREADY_JOINED


async def test_a_registration_with_a_key_is_the_players(server_url: str) -> None:
    key, player = await new_player(server_url, "tia")
    bot_key, bot = await new_player(server_url, bot=True)
    _, created = await post_json(
        f"{server_url}/tournaments",
        {"name": "cup", "format": "knockout", "seeding": "rating", "winnable": False},
    )
    tid = created["tournament"]["id"]
    assert created["tournament"]["seeding"] == "rating"
    path = f"/tournaments/{tid}/players"
    status, body, _ = await call(server_url, "POST", path, {"name": "typed"}, key)
    assert status == 201 and body["player"]["name"] == "tia"
    status, again, _ = await call(server_url, "POST", path, {}, key)
    assert status == 409 and again["error"]["code"] == "already_joined"
    status, _, _ = await call(server_url, "POST", path, {}, "not a key")
    assert status == 401
    status, _, _ = await call(server_url, "POST", path, {}, bot_key)
    assert status == 201
    status, _, _ = await call(server_url, "POST", path, {"name": "walkin"})  # no key
    assert status == 201
    _, standings = await get_json(f"{server_url}/tournaments/{tid}/standings")
    rows = {r["name"]: (r["rating"], r["bot"]) for r in standings["standings"]}
    assert rows == {"tia": (None, False), bot["name"]: (None, True), "walkin": (None, False)}
    # Their seats in the tournament's races are theirs.
    organiser = {"organiser_token": created["organiser_token"]}
    status, _ = await post_json(f"{server_url}/tournaments/{tid}/start", organiser)
    assert status == 200
    async with asyncio.timeout(20):
        while True:
            _, body = await get_json(f"{server_url}/tournaments/{tid}")
            if body["tournament"]["live"]:
                break
            await asyncio.sleep(0.1)
    seated: dict[str, tuple[str | None, bool]] = {}
    for race in body["tournament"]["live"]:
        _, room = await get_json(f"{server_url}/rooms/{race['room']}")
        seated |= {pl["name"]: (pl["player"], pl["bot"]) for pl in room["room"]["players"]}
    owners = {"tia": (player["id"], False), bot["name"]: (bot["id"], True), "walkin": (None, False)}
    assert seated and all(owners[name] == who for name, who in seated.items())


async def test_a_provisional_rating_is_said_so_in_the_standings(server_url: str) -> None:
    """A rating shown with its registration is marked `provisional` as it was then (the
    pages show it with "?", as everywhere else a rating is shown)."""
    keys = [(await new_player(server_url, name))[0] for name in ("pia", "pol")]
    await finish_identified_race([server_url], keys, [0, 1])
    async with asyncio.timeout(20):  # archived, and rated, a moment after its end
        while True:
            _, profile = await get_json(f"{server_url}/players/pia")
            if profile["ratings"]:
                break
            await asyncio.sleep(0.1)
    assert profile["ratings"][0]["provisional"] is True  # one race: not settled yet
    _, created = await post_json(
        f"{server_url}/tournaments", {"name": "cup", "games": ["shaula"], "winnable": False}
    )
    tid = created["tournament"]["id"]
    await call(server_url, "POST", f"/tournaments/{tid}/players", {}, keys[0])
    await call(server_url, "POST", f"/tournaments/{tid}/players", {"name": "walkin"})
    _, standings = await get_json(f"{server_url}/tournaments/{tid}/standings")
    rows = {r["name"]: (r["rating"], r["provisional"]) for r in standings["standings"]}
    assert rows == {"pia": (profile["ratings"][0]["rating"], True), "walkin": (None, False)}


async def test_a_registration_without_a_key_cannot_take_a_players_name(server_url: str) -> None:
    """A player's name (any case) is registered under only with their key: nobody passes
    for them in the standings, nor keeps them out of the tournament."""
    key, _ = await new_player(server_url, "Uma")
    _, created = await post_json(f"{server_url}/tournaments", {"name": "cup", "winnable": False})
    path = f"/tournaments/{created['tournament']['id']}/players"
    status, body, _ = await call(server_url, "POST", path, {"name": " uMA "})
    assert status == 409 and body["error"]["code"] == "name_taken"
    assert "key" in body["error"]["message"]
    status, body, _ = await call(server_url, "POST", path, {"name": "Umar"})  # not a player's
    assert status == 201
    status, body, _ = await call(server_url, "POST", path, {}, key)
    assert status == 201 and body["player"]["name"] == "Uma"


async def test_an_identified_socket_follows_no_other_players_registration(
    server_url: str,
) -> None:
    """`tour_watch` with a registration token gives that registration's own line (`you`):
    a socket identified as one player gets no other player's, as it takes no other
    player's seat (`not_your_seat`); its own, and any on an anonymous socket, as before."""
    ann_key, _ = await new_player(server_url, "ann")
    bo_key, _ = await new_player(server_url, "bo")
    _, created = await post_json(f"{server_url}/tournaments", {"name": "cup", "winnable": False})
    tid = created["tournament"]["id"]
    path = f"/tournaments/{tid}/players"
    tokens = {}
    for name, key in (("ann", ann_key), ("bo", bo_key)):
        status, body, _ = await call(server_url, "POST", path, {}, key)
        assert status == 201
        tokens[name] = body["token"]
    async with WsClient.connect(server_url) as bo:
        await bo.identify(bo_key)
        await bo.send(p.TourWatch(tournament=tid, token=tokens["ann"]))
        refused = await bo.expect_any((p.Error, p.TourState))
        assert isinstance(refused, p.Error) and refused.code == "not_your_seat", refused
        await bo.send(p.TourWatch(tournament=tid, token=tokens["bo"]))
        mine = await bo.expect(p.TourState)
        assert mine.you is not None and mine.you["name"] == "bo"
    async with WsClient.connect(server_url) as anonymous:
        await anonymous.send(p.TourWatch(tournament=tid, token=tokens["ann"]))
        theirs = await anonymous.expect(p.TourState)
        assert theirs.you is not None and theirs.you["name"] == "ann"


async def test_a_request_with_a_key_withdraws_no_other_players_registration(
    server_url: str,
) -> None:
    """`withdraw` and `return` with a player key act for that player only, as an identified
    socket does (`403 not_your_seat` for another player's token, `401 bad_key` for a key
    that signs nobody in); without a key, the token is the place, as before."""
    ann_key, _ = await new_player(server_url, "ann")
    bo_key, _ = await new_player(server_url, "bo")
    _, created = await post_json(f"{server_url}/tournaments", {"name": "cup", "winnable": False})
    tid = created["tournament"]["id"]
    _, body, _ = await call(server_url, "POST", f"/tournaments/{tid}/players", {}, ann_key)
    ann = {"token": body["token"]}
    for action in ("withdraw", "return"):
        path = f"/tournaments/{tid}/{action}"
        status, refused, _ = await call(server_url, "POST", path, ann, bo_key)
        assert (status, refused["error"]["code"]) == (403, "not_your_seat"), action
        status, refused, _ = await call(server_url, "POST", path, ann, "not a key")
        assert (status, refused["error"]["code"]) == (401, "bad_key"), action
        _, standings = await get_json(f"{server_url}/tournaments/{tid}/standings")
        assert standings["standings"][0]["status"] == "active"  # nothing changed
    status, body, _ = await call(server_url, "POST", f"/tournaments/{tid}/withdraw", ann, ann_key)
    assert status == 200 and body["player"]["status"] == "withdrawn"
    status, body, _ = await call(server_url, "POST", f"/tournaments/{tid}/return", ann)
    assert status == 200 and body["player"]["status"] == "active"
