"""Seats, quick matches and results belong to a player (`identify`), on a real server:
one player holds one seat of a room, nobody takes another player's seat, bots are
labelled, and today's seat tokens keep working."""

from __future__ import annotations

import time

import pytest
from redis.asyncio import Redis
from support.http import create_room, get_json
from support.players import call, new_player
from support.servers import MakeServer
from support.wsclient import WsClient

import protocol as p
from records.archive import FinishedRace, RaceArchive, SeatResult
from records.engine import open_engine
from records.profiles import Profiles
from server.room.matching import UNRATED, Ticket
from server.storage.keys import quick_queue


async def identified(client: WsClient, key: str) -> p.Identified:
    await client.send(p.Identify(key=key))
    return await client.expect(p.Identified)


async def test_a_socket_acts_as_the_player_whose_key_it_sends(server_url: str) -> None:
    key, player = await new_player(server_url, "ann")
    async with WsClient.connect(server_url) as ws:
        await ws.send(p.Identify(key="not a key"))
        error = await ws.expect(p.Error)
        assert error.code == "bad_key" and error.request == "identify"
        await ws.send(p.Identify(key=""))  # told how to send a key on this socket
        error = await ws.expect(p.Error)
        assert error.code == "bad_key" and "identify" in error.message
        hello = await identified(ws, key)
        assert hello.player == {"id": player["id"], "name": "ann", "bot": False, "claimed": False}
        room = (await create_room(server_url))["id"]
        welcome = await ws.join(room, "typed name")  # the player's name, not the typed one
        snapshot = await ws.expect(p.Snapshot)
        seat = snapshot.room["players"][0]
        assert (seat["name"], seat["player"], seat["bot"]) == ("ann", player["id"], False)
        assert welcome.token
        await ws.send(p.Identify(key=key))  # in a room: too late to change who acts
        assert (await ws.expect(p.Error)).code == "already_joined"


async def test_an_identify_refused_leaves_the_socket_as_it_was(server_url: str) -> None:
    """A refused `identify` changes nothing: a socket that had identified still acts as
    that player (a key that signs nobody in does not make it anonymous)."""
    key, player = await new_player(server_url, "ivy")
    async with WsClient.connect(server_url) as ws:
        await identified(ws, key)
        await ws.send(p.Identify(key="not a key"))
        assert (await ws.expect(p.Error)).code == "bad_key"
        await ws.join((await create_room(server_url))["id"], "typed name")
        seat = (await ws.expect(p.Snapshot)).room["players"][0]
        assert (seat["name"], seat["player"]) == ("ivy", player["id"])


async def test_one_player_one_seat_and_nobody_takes_another_players_seat(
    server_url: str,
) -> None:
    ann_key, ann = await new_player(server_url, "ann2")
    bo_key, _ = await new_player(server_url, "bo2")
    room = (await create_room(server_url, seats=3))["id"]
    async with (
        WsClient.connect(server_url) as one,
        WsClient.connect(server_url) as two,
        WsClient.connect(server_url) as thief,
    ):
        await identified(one, ann_key)
        first = await one.join(room)
        # Ann again, on another device (no token): back to her seat, not a second one.
        await identified(two, ann_key)
        again = await two.join(room)
        assert again.seat == first.seat and again.token is None
        await two.send(p.Ready())
        assert (await one.expect(p.PlayerReady)).seat == first.seat
        # Bo with Ann's seat token: refused, whoever got hold of it.
        await identified(thief, bo_key)
        await thief.send(p.Join(room=room, token=first.token))
        assert (await thief.expect(p.Error)).code == "not_your_seat"
    _, body = await get_json(f"{server_url}/rooms/{room}")
    assert [pl["player"] for pl in body["room"]["players"]] == [ann["id"]]


async def test_a_player_seated_here_cannot_take_an_anonymous_seat_too(server_url: str) -> None:
    """One player, one seat: a player who holds a seat of the room and sends the token of
    an anonymous seat of it is refused `not_your_seat`, not given a second seat. Coming back
    to an anonymous seat by its token, holding none other here, still works."""
    key, _ = await new_player(server_url, "dee")
    room = (await create_room(server_url, seats=3))["id"]
    async with (
        WsClient.connect(server_url) as stranger,
        WsClient.connect(server_url) as mine,
        WsClient.connect(server_url) as greedy,
    ):
        anonymous = await stranger.join(room, "cy")
        await identified(mine, key)
        own = await mine.join(room)
        await identified(greedy, key)
        await greedy.send(p.Join(room=room, token=anonymous.token))
        error = await greedy.expect(p.Error)
        assert error.code == "not_your_seat", error
        assert own.seat is not None and str(own.seat) in error.message
    _, body = await get_json(f"{server_url}/rooms/{room}")
    assert len(body["room"]["players"]) == 2
    # Holding no seat of the room, the same player may come back to an anonymous one.
    other = (await create_room(server_url))["id"]
    async with WsClient.connect(server_url) as ws:
        before = await ws.join(other, "cy")
    async with WsClient.connect(server_url) as back:
        await identified(back, key)
        again = await back.join(other, token=before.token)
    assert again.seat == before.seat


async def test_a_socket_whose_key_was_signed_out_acts_for_nobody_new(
    make_server: MakeServer,
) -> None:
    """Signed out on another process: the key's sockets there take no seat and no quick
    match as the player any more (a seat already held stays theirs); `identify` again."""
    one, two = await make_server(), await make_server()
    key, _ = await new_player(one, "gil")
    other, guest = await new_player(one)
    room = (await create_room(one))["id"]
    async with WsClient.connect(one) as ws, WsClient.connect(one) as queued:
        for socket in (ws, queued):
            await identified(socket, key)
        status, _, _ = await call(two, "POST", "/sign-out", key=key)
        assert status == 200
        await ws.send(p.Join(room=room, name="gil"))
        error = await ws.expect(p.Error)
        assert (error.code, error.request) == ("bad_key", "join")
        await queued.send(p.QuickMatch(game="shaula"))
        assert (await queued.expect(p.Error)).code == "bad_key"
        await identified(ws, other)  # another key: the socket acts again
        welcome = await ws.join(room, "typed")
        assert welcome.seat == 0
    _, body = await get_json(f"{one}/rooms/{room}")
    assert [pl["player"] for pl in body["room"]["players"]] == [guest["id"]]


@pytest.mark.parametrize("how", ["by_its_id", "all_but_one", "new_password"])
async def test_a_device_signed_out_from_another_acts_for_nobody_new(
    make_server: MakeServer, how: str
) -> None:
    """A lost phone signed out from the laptop, on another process: the phone's socket
    takes no seat and no quick match as the player any more, as after its own sign-out."""
    one, two = await make_server(), await make_server()
    phone, _ = await new_player(one, "hal")
    await call(one, "POST", "/me/claim", {"password": "correct horse"}, phone)
    status, body, _ = await call(
        two, "POST", "/sign-in", {"name": "hal", "password": "correct horse"}
    )
    laptop = body["key"]
    room = (await create_room(one))["id"]
    async with WsClient.connect(one) as ws, WsClient.connect(one) as queued:
        for socket in (ws, queued):
            await identified(socket, phone)
        if how == "by_its_id":
            _, listed, _ = await call(two, "GET", "/me/devices", key=laptop)
            [lost] = [d["id"] for d in listed["devices"] if not d["current"]]
            status, _, _ = await call(two, "POST", f"/me/devices/{lost}/sign-out", key=laptop)
        elif how == "all_but_one":
            status, _, _ = await call(two, "POST", "/me/sign-out-others", key=laptop)
        else:
            change = {"password": "correct horse", "new_password": "battery staple"}
            status, _, _ = await call(two, "POST", "/me/password", change, laptop)
        assert status == 200
        await ws.send(p.Join(room=room, name="hal"))
        error = await ws.expect(p.Error)
        assert (error.code, error.request) == ("bad_key", "join")
        await queued.send(p.QuickMatch(game="shaula"))
        assert (await queued.expect(p.Error)).code == "bad_key"
        await identified(ws, laptop)  # the key still in: the socket acts again
        assert (await ws.join(room, "typed")).seat == 0


async def test_an_anonymous_seat_does_not_take_a_players_name(server_url: str) -> None:
    """A name a player has (any case) is theirs: an anonymous seat typing it is numbered,
    as a name another seat has is, in a room and in a quick match."""
    key, ann = await new_player(server_url, "Hana")
    room = (await create_room(server_url, seats=3))["id"]
    async with (
        WsClient.connect(server_url) as fake,
        WsClient.connect(server_url) as real,
        WsClient.connect(server_url) as guest,
    ):
        assert (await fake.join(room, "hana")).seat == 0
        await identified(real, key)
        await real.join(room, "whatever")
        await guest.join(room, "Hanako")  # another name: kept as typed
        snapshot = await guest.expect(p.Snapshot)
    names = {pl["name"]: pl["player"] for pl in snapshot.room["players"]}
    assert names == {"hana 2": None, "Hana": ann["id"], "Hanako": None}
    async with WsClient.connect(server_url) as one, WsClient.connect(server_url) as two:
        await one.send(p.QuickMatch(game="shaula", name="HANA"))
        await one.expect(p.Queued)
        await two.send(p.QuickMatch(game="shaula", name="ivo"))
        await two.expect(p.Matched)
        snapshot = await two.expect(p.Snapshot)
    assert sorted(pl["name"] for pl in snapshot.room["players"]) == ["HANA 2", "ivo"]


async def test_an_anonymous_socket_and_its_token_work_as_before(server_url: str) -> None:
    room = (await create_room(server_url))["id"]
    async with WsClient.connect(server_url) as ws:
        welcome = await ws.join(room, "cy")
    async with WsClient.connect(server_url) as back:
        again = await back.join(room, token=welcome.token)
        snapshot = await back.expect(p.Snapshot)
    assert again.seat == welcome.seat
    assert snapshot.room["players"][0]["player"] is None


async def test_a_quick_match_seats_two_players_and_labels_the_bot(server_url: str) -> None:
    ann_key, ann = await new_player(server_url, "ann3")
    bot_key, bot = await new_player(server_url, bot=True)
    assert bot["bot"] and bot["name"].startswith("Bot-")
    async with WsClient.connect(server_url) as one, WsClient.connect(server_url) as two:
        await identified(one, ann_key)
        await identified(two, bot_key)
        await one.send(p.QuickMatch(game="shaula", name="typed"))
        await one.expect(p.Queued)
        await two.send(p.QuickMatch(game="shaula"))
        matched = await two.expect(p.Matched)
        await one.expect(p.Matched)
        joined = [m for m in two.seen if isinstance(m, p.PlayerJoined)]
        snapshot = await two.expect(p.Snapshot)
    players = {pl["name"]: (pl["player"], pl["bot"]) for pl in snapshot.room["players"]}
    assert players == {"ann3": (ann["id"], False), bot["name"]: (bot["id"], True)}
    assert matched.room == snapshot.room["id"] and not joined  # seated before the welcome


async def test_a_player_renamed_while_queued_is_seated_under_the_new_name(
    server_url: str,
) -> None:
    """The queue's ticket was written under the name of its time: a rename while waiting
    (on this device or another) is what the seat shows, as in any other room."""
    key, ann = await new_player(server_url, "nell")
    other_key, _ = await new_player(server_url, "otto")
    async with WsClient.connect(server_url) as one, WsClient.connect(server_url) as two:
        await identified(one, key)
        await identified(two, other_key)
        await one.send(p.QuickMatch(game="shaula"))
        await one.expect(p.Queued)
        status, _, _ = await call(server_url, "POST", "/me/name", {"name": "nora"}, key)
        assert status == 200
        await two.send(p.QuickMatch(game="shaula"))
        await two.expect(p.Matched)
        snapshot = await two.expect(p.Snapshot)
    names = {pl["player"]: pl["name"] for pl in snapshot.room["players"]}
    assert names[ann["id"]] == "nora"


async def test_one_player_on_two_sockets_is_not_matched_with_themselves(
    server_url: str,
) -> None:
    key, _ = await new_player(server_url, "dee")
    other_key, _ = await new_player(server_url, "eli")
    async with (
        WsClient.connect(server_url) as one,
        WsClient.connect(server_url) as two,
        WsClient.connect(server_url) as three,
    ):
        for ws, k in ((one, key), (two, key), (three, other_key)):
            await identified(ws, k)
        for ws in (one, two):
            await ws.send(p.QuickMatch(game="moojub"))
            await ws.expect(p.Queued)
        assert not [m for m in two.seen if isinstance(m, p.Matched)]
        await three.send(p.QuickMatch(game="moojub"))
        room = (await three.expect(p.Matched)).room
        assert (await one.expect(p.Matched)).room == room  # the one who waited longest


async def test_a_quick_match_ticket_carries_the_players_rating(
    server_url: str, sqlite_url: str, redis_url: str
) -> None:
    """What the matcher compares (server/room/matching.py): the rating the records show now."""
    key, ann = await new_player(server_url, "rae")
    _, bo = await new_player(server_url, "sid")
    engine = open_engine(sqlite_url)
    try:
        archive, profiles = RaceArchive(engine), Profiles(engine)
        for n in range(3):  # rae wins three rated races against sid
            results = [
                SeatResult(0, "rae", 1, True, 60_000, 52, 100, player_id=ann["id"]),
                SeatResult(1, "sid", 2, False, None, 10, 50, player_id=bo["id"]),
            ]
            race = FinishedRace(
                id=f"q{n}.1",
                room=f"q{n}",
                round=1,
                game="moojub",
                seed=5,
                kind="quick",
                rated=True,
                started_at=10.0 * n,
                ended_at=10.0 * n + 5,
                finish_reason="all_done",
                replay="{}",
                replay_hash="h",
                results=results,
            )
            assert await archive.archive(race)
        shown = await profiles.rating(ann["id"], "moojub", time.time())
    finally:
        await engine.dispose()
    assert shown is not None and shown.display != UNRATED
    rating = shown.display
    redis = Redis.from_url(redis_url)
    async with WsClient.connect(server_url) as ws:
        await identified(ws, key)
        await ws.send(p.QuickMatch(game="moojub"))
        await ws.expect(p.Queued)
        waiting = [
            Ticket.decode(t.decode()) for t in await redis.lrange(quick_queue("moojub"), 0, -1)
        ]
        mine = [t for t in waiting if t.player == ann["id"]]
        assert [(t.name, t.rating, t.bot) for t in mine] == [("rae", rating, False)]
    await redis.aclose()
