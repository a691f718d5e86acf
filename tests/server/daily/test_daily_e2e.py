"""The daily deal on real servers (real Redis, real WebSockets, SQLite records): the same
deal on every process and after a restart, one ranked attempt (a second refused with its
code), an attempt dropped and resumed on its own clock, the board, and replays that open
only after one's own attempt."""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

import aiohttp
import pytest
import redis.asyncio as aioredis
from support.own_redis import OwnRedis
from support.players import new_player
from support.servers import MakeServer
from support.wsclient import WsClient

import core
import protocol as p

GAME = "shaula"


async def call(method: str, url: str, key: str | None = None, body: Any = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with (
        aiohttp.ClientSession() as http,
        http.request(method, url, json=body, headers=headers) as answer,
    ):
        if answer.content_type != "application/json":
            return answer.status, await answer.text()
        return answer.status, await answer.json()


def board_of(snapshot: p.Snapshot) -> core.Game:
    """The seat's board as its `snapshot` gives it: a running attempt's deal is played from
    its board, its number being kept back until it is over."""
    assert snapshot.board is not None
    return core.from_state(snapshot.board)


async def take_seat(client: WsClient, key: str, room: str) -> p.Welcome:
    await client.send(p.Identify(key=key))
    await client.expect(p.Identified)
    return await client.join(room)


async def test_the_same_deal_on_every_process_and_after_a_restart(
    make_server: MakeServer,
) -> None:
    first, second = await make_server(), await make_server()
    _, a = await call("GET", f"{first}/daily")
    _, b = await call("GET", f"{second}/daily")
    assert a["date"] == b["date"] and a["commitment"] == b["commitment"]
    assert [g["game"] for g in a["games"]] == list(core.GAMES)
    assert all(g["seed"] is None for g in a["games"])  # not before one's attempt is over
    _, board_a = await call("GET", f"{first}/daily/{a['date']}/{GAME}")
    restarted = await make_server()  # a new process, nothing in its memory
    _, board_b = await call("GET", f"{restarted}/daily/{a['date']}/{GAME}")
    assert board_a["commitment"] == board_b["commitment"] == a["commitment"]
    assert board_a["key"] is None and board_a["seed"] is None  # today: not yet published
    # Yesterday's key is out: it hashes to yesterday's commitment, and gives its deals.
    yesterday = a["yesterday"]
    _, past = await call("GET", f"{second}/daily/{yesterday['date']}/{GAME}")
    assert past["key"] == yesterday["key"] and past["seed"] is not None
    import hashlib

    from server.daily.rule import candidate

    key = bytes.fromhex(past["key"])
    assert hashlib.sha256(key).hexdigest() == past["commitment"]
    assert candidate(key, GAME, past["candidate"]) == past["seed"]


async def test_the_same_deal_after_redis_is_wiped_and_restarted(
    own_redis: OwnRedis, make_own_server: MakeServer
) -> None:
    first = await make_own_server()
    _, before = await call("GET", f"{first}/daily")
    client = aioredis.from_url(own_redis.url)
    try:
        await client.flushall()  # everything live gone, and then the server itself
    finally:
        await client.aclose()
    own_redis.stop()
    await asyncio.to_thread(own_redis.start)
    second = await make_own_server()  # a process that never saw the wiped Redis
    _, after = await call("GET", f"{second}/daily")
    assert after["commitment"] == before["commitment"]
    _, board = await call("GET", f"{first}/daily/{before['date']}/{GAME}")
    assert board["commitment"] == before["commitment"]


async def test_a_long_past_day_is_answered_only_when_it_was_dealt(
    own_redis: OwnRedis, make_own_server: MakeServer
) -> None:
    """Anyone may ask for any date back to year 1: working out a day's deals is the
    solver's work, and they are kept for good, so a day long past that this site never
    dealt is not worked out (a recent one is, and a day it did deal stays readable)."""
    import datetime as dt

    from server.daily.store import RECENT_DAYS, DailyStore

    url = await make_own_server()
    _, today = await call("GET", f"{url}/daily")
    day = dt.date.fromisoformat(today["date"])
    recent = day - dt.timedelta(days=RECENT_DAYS)
    status, board = await call("GET", f"{url}/daily/{recent.isoformat()}/{GAME}")
    assert status == 200 and board["seed"] is not None
    too_old = day - dt.timedelta(days=RECENT_DAYS + 1)
    for old in ("0001-01-01", "1900-01-01", too_old.isoformat()):
        status, body = await call("GET", f"{url}/daily/{old}/{GAME}")
        assert status == 404 and body["error"]["code"] == "not_found", (old, body)
    client = aioredis.from_url(own_redis.url)
    try:
        store = DailyStore(client, b"the site's secret then")
        assert not await store.dealt(dt.date(1900, 1, 1))  # nothing kept for the asking
        dealt = dt.date(1900, 1, 2)
        seed, _ = (await store.deals(dealt))[GAME]  # as the site did on that day
    finally:
        await client.aclose()
    status, board = await call("GET", f"{url}/daily/{dealt.isoformat()}/{GAME}")
    assert status == 200 and board["seed"] == seed


async def test_the_operators_secret_overrides_the_kept_one(make_server: MakeServer) -> None:
    import datetime as dt

    from server.daily.rule import commitment, day_key

    kept, given = await make_server(), await make_server(daily_secret="site secret")
    _, a = await call("GET", f"{kept}/daily")
    _, b = await call("GET", f"{given}/daily")
    day = dt.date.fromisoformat(b["date"])
    assert b["commitment"] == commitment(day_key(b"site secret", day))
    assert a["commitment"] != b["commitment"]


async def test_one_ranked_attempt_resumed_on_its_clock_then_practice(
    make_server: MakeServer,
) -> None:
    url = await make_server()
    (ann, ann_player), (bo, _) = await new_player(url), await new_player(url)
    ann_id = str(ann_player["id"])
    status, body = await call("POST", f"{url}/daily/{GAME}")
    assert status == 401 and body["error"]["code"] == "bad_key"
    status, opened = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 201 and opened["ranked"] and "unranked" in opened["notice"]
    room = opened["room"]
    assert room["status"] == "running" and room["daily"].endswith(GAME)
    started = room["start_at"]
    async with WsClient.connect(url) as socket:  # by the seat's token, as the web page does
        welcome = await socket.join(room["id"], token=opened["token"])
        assert welcome.seat == 0
        game = board_of(await socket.expect(p.Snapshot))  # its deal's number kept back
        move = game.legal_moves()[0]
        await socket.send(p.Move(seq=1, move=move))
        await socket.expect(p.Accepted)
    game.apply(move)
    # The page closed: the attempt goes on; opening it again is the same one, same clock.
    status, again = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 200 and again["room"]["id"] == room["id"]
    assert again["room"]["start_at"] == started and again["attempt"]["started_at"] <= started
    assert again["token"] != opened["token"]  # this device's; the old one holds nothing now
    shown = again["attempt"]
    assert (shown["moves"], shown["progress"]) == (1, game.progress)  # as it stands
    async with WsClient.connect(url) as stale:
        await stale.send(p.Join(room=room["id"], token=opened["token"]))
        assert (await stale.expect(p.Error)).code == "bad_token"
    async with WsClient.connect(url) as socket, WsClient.connect(url) as spy:
        welcome = await take_seat(socket, ann, room["id"])
        snapshot = await socket.expect(p.Snapshot)
        assert welcome.seat == 0 and snapshot.moves == [move]
        assert snapshot.room["start_at"] == started
        # Nobody watches a daily attempt while it runs, nor has its replay.
        await spy.send(p.Watch(room=room["id"]))
        assert (await spy.expect(p.Error)).code == "not_yet"
        await socket.send(p.Resign())
        seed = (await socket.expect(p.RaceFinished)).seed  # over: its number is ann's
    assert seed is not None
    status, body = await call("GET", f"{url}/rooms/{room['id']}/replay", bo)
    assert status == 403 and body["error"]["code"] == "not_yet"
    status, results = await call("GET", f"{url}/rooms/{room['id']}/results", bo)
    assert status == 200 and results["seed"] is None  # the day's seed is not bo's yet
    # Its room, finished, shows a spectator the whole line (`since` 0): the replay's rule.
    async with WsClient.connect(url) as spy:
        await spy.send(p.Watch(room=room["id"], since=0))
        assert (await spy.expect(p.Error)).code == "not_yet"  # anonymous
        await spy.send(p.Identify(key=bo))
        await spy.expect(p.Identified)
        await spy.send(p.Watch(room=room["id"], since=0))
        assert (await spy.expect(p.Error)).code == "not_yet"  # bo has not played it yet
    async with WsClient.connect(url) as own:
        await own.send(p.Identify(key=ann))
        await own.expect(p.Identified)
        await own.send(p.Watch(room=room["id"], since=0))
        assert (await own.expect(p.Welcome)).role == "spectator"
    # Archived, it is still closed to bo (its header says it was a daily attempt); ann has it.
    async with asyncio.timeout(20):
        while (await call("GET", f"{url}/races/{room['id']}.1/replay", ann))[0] != 200:
            await asyncio.sleep(0.1)
    status, text = await call("GET", f"{url}/races/{room['id']}.1/replay", ann)
    assert '"daily":"' in text.split("\n", 1)[0]
    for path in (f"/races/{room['id']}.1/replay", f"/races/{room['id']}.1/replay/boards"):
        status, body = await call("GET", f"{url}{path}", bo)
        assert status == 403 and body["error"]["code"] == "not_yet", path
    # A second ranked attempt: refused, with its code; practice is open.
    status, body = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 409 and body["error"]["code"] == "daily_taken"
    status, practice = await call("POST", f"{url}/daily/{GAME}", ann, {"practice": True})
    assert status == 201 and not practice["ranked"] and practice["room"]["daily"] is None
    status, body = await call("POST", f"{url}/daily/{GAME}", bo, {"practice": True})
    assert status == 409 and body["error"]["code"] == "not_yet"
    # The board: ann's attempt, ranked (no undo), as it ended.
    today = room["daily"].split(" ")[0]
    status, board = await call("GET", f"{url}/daily/{today}/{GAME}", ann)
    assert status == 200 and board["seed"] == seed
    # (the day's board is every test's on this Redis: ann's row is the one to read)
    rows = [r for r in board["board"] if r["player"] == ann_id]
    assert [(r["won"], r["moves"], r["room"]) for r in rows] == [(False, 1, room["id"])]
    assert board["you"]["finished"]
    _, daily = await call("GET", f"{url}/daily", ann)
    mine = next(g for g in daily["games"] if g["game"] == GAME)
    assert mine["seed"] == seed and mine["you"]["finished"]
    assert daily["streaks"] == {"played": 1, "won": 0}
    # bo sees the board without rooms (no replays) until his own attempt is over.
    _, seen = await call("GET", f"{url}/daily/{today}/{GAME}", bo)
    assert seen["seed"] is None and all(r["room"] is None for r in seen["board"])
    _, summary = await call("GET", f"{url}/daily", bo)
    (leader,) = [g["leader"] for g in summary["games"] if g["game"] == GAME]
    assert leader is not None and leader["room"] is None
    for day in (today.replace("-", ""), "2026-W49-7", f"{today}T00:00"):  # the date, as said
        status, body = await call("GET", f"{url}/daily/{day}/{GAME}", bo)
        assert status == 400 and body["error"]["code"] == "bad_request", day
    status, opened = await call("POST", f"{url}/daily/{GAME}", bo)
    async with WsClient.connect(url) as socket:
        await take_seat(socket, bo, opened["room"]["id"])
        await socket.send(p.Resign())
        await socket.expect(p.RaceFinished)
    status, text = await call("GET", f"{url}/rooms/{room['id']}/replay", bo)
    assert status == 200 and text.startswith('{"kind":"header"')
    status, results = await call("GET", f"{url}/rooms/{room['id']}/results", bo)
    assert status == 200 and results["seed"] == seed
    async with WsClient.connect(url) as spy:
        await spy.send(p.Identify(key=bo))
        await spy.expect(p.Identified)
        await spy.send(p.Watch(room=room["id"], since=0))
        assert (await spy.expect(p.Welcome)).role == "spectator"


async def test_an_attempt_keeps_its_deal_number_from_its_player_until_it_is_over(
    make_server: MakeServer,
) -> None:
    """The seed of a running attempt is nobody's (GET /daily, GET /rooms/{id}): not in the
    answer that opens it, its `snapshot`, nor its board either; its end gives it."""
    url = await make_server()
    ann, _ = await new_player(url)
    status, opened = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 201 and opened["room"]["seed"] is None
    room = opened["room"]["id"]
    async with WsClient.connect(url) as socket:
        await take_seat(socket, ann, room)
        snapshot = await socket.expect(p.Snapshot)
        assert snapshot.room["seed"] is None
        assert snapshot.board is not None and snapshot.board["seed"] is None
        await socket.send(p.Resign())
        finished = await socket.expect(p.RaceFinished)
    assert finished.seed is not None  # over: the deal is its player's to see
    status, body = await call("GET", f"{url}/rooms/{room}", ann)
    assert status == 200 and body["room"]["seed"] == finished.seed


async def finish_attempt(url: str, key: str) -> dict[str, Any]:
    """The player's ranked attempt at today's deal, opened and resigned: its room, as its
    player sees it then (its seed given by the end)."""
    status, opened = await call("POST", f"{url}/daily/{GAME}", key)
    assert status == 201, opened
    async with WsClient.connect(url) as socket:
        await take_seat(socket, key, opened["room"]["id"])
        await socket.send(p.Resign())
        await socket.expect(p.RaceFinished)
    status, body = await call("GET", f"{url}/rooms/{opened['room']['id']}", key)
    assert status == 200 and body["room"]["seed"] is not None, body
    room: dict[str, Any] = body["room"]
    return room


class DealRooms(NamedTuple):
    """Rooms on today's deal that are not a ranked attempt, and who may see it."""

    ann: str  # her attempt is over: she opened them
    bo: str  # no attempt yet
    cy: str  # his attempt is over
    attempt: dict[str, Any]  # ann's attempt's room
    practice: dict[str, Any]  # ann's practice: POST /daily/GAME's answer (running)
    ghost: dict[str, Any]  # a ghost race of ann's attempt: POST /rooms' answer (a free seat)


async def deal_rooms(url: str) -> DealRooms:
    (ann, _), (bo, _), (cy, _) = [await new_player(url) for _ in range(3)]
    attempt = await finish_attempt(url, ann)
    await finish_attempt(url, cy)
    status, practice = await call("POST", f"{url}/daily/{GAME}", ann, {"practice": True})
    assert status == 201, practice
    status, ghost = await call("POST", f"{url}/rooms", ann, {"ghost": attempt["id"]})
    assert status == 201, ghost
    return DealRooms(ann, bo, cy, attempt, practice, ghost)


async def watched_as(url: str, room: str, key: str | None) -> p.Message:
    """What a `watch` of the room gets: `welcome` or `error` (by a player, or anonymous)."""
    async with WsClient.connect(url) as spy:
        if key is not None:
            await spy.send(p.Identify(key=key))
            await spy.expect(p.Identified)
        await spy.send(p.Watch(room=room, since=0))
        return await spy.expect_any((p.Welcome, p.Error))


def not_yet(answer: p.Message) -> bool:
    return isinstance(answer, p.Error) and answer.code == "not_yet"


async def test_practice_given_as_null_is_the_ranked_attempt(make_server: MakeServer) -> None:
    url = await make_server()
    ann, _ = await new_player(url)
    status, opened = await call("POST", f"{url}/daily/{GAME}", ann, {"practice": None})
    assert status == 201 and opened["ranked"]
    status, body = await call("POST", f"{url}/daily/{GAME}", ann, {"practice": "yes"})
    assert status == 400 and body["error"]["code"] == "bad_request"


async def test_rooms_on_the_daily_deal_are_not_in_the_lobby(make_server: MakeServer) -> None:
    url = await make_server()
    rooms = await deal_rooms(url)
    closed = {rooms.practice["room"]["id"], rooms.ghost["room"]["id"]}
    for key in (None, rooms.bo, rooms.cy):  # the lobby is everyone's: nobody's until the day ends
        status, listed = await call("GET", f"{url}/rooms", key)
        assert status == 200 and not closed & {r["id"] for r in listed["rooms"]}
    async with WsClient.connect(url) as lobby:
        await lobby.send(p.LobbyWatch())
        state = await lobby.expect(p.LobbyState)
        assert not closed & {r["id"] for r in state.rooms}
        # A change to the ghost room (its seat taken) is not shown either; a room opened
        # after it is.
        async with WsClient.connect(url) as player:
            await take_seat(player, rooms.ann, rooms.ghost["room"]["id"])
            _, other = await call("POST", f"{url}/rooms", None, {"game": GAME})
            seen: set[str] = set()
            async with asyncio.timeout(10):
                while other["room"]["id"] not in seen:
                    changed = await lobby.expect(p.LobbyChanged)
                    seen |= {r["id"] for r in changed.rooms}
            assert not closed & seen


async def test_rooms_on_the_daily_deal_are_watched_once_ones_attempt_is_over(
    make_server: MakeServer,
) -> None:
    url = await make_server()
    rooms = await deal_rooms(url)
    for room in (rooms.practice["room"]["id"], rooms.ghost["room"]["id"]):
        assert not_yet(await watched_as(url, room, None)), room  # anonymous
        assert not_yet(await watched_as(url, room, rooms.bo)), room  # no attempt yet
        welcome = await watched_as(url, room, rooms.cy)  # his attempt is over
        assert isinstance(welcome, p.Welcome) and welcome.role == "spectator", room


async def test_rooms_on_the_daily_deal_keep_their_seed_and_seats(
    make_server: MakeServer,
) -> None:
    url = await make_server()
    rooms = await deal_rooms(url)
    seed = rooms.attempt["seed"]
    for key, shown in ((None, None), (rooms.bo, None), (rooms.cy, seed), (rooms.ann, seed)):
        status, body = await call("GET", f"{url}/rooms/{rooms.practice['room']['id']}", key)
        assert status == 200 and body["room"]["seed"] == shown, key
    for key in (None, rooms.bo):  # the ghost race's free seat
        async with WsClient.connect(url) as socket:
            if key is not None:
                await socket.send(p.Identify(key=key))
                await socket.expect(p.Identified)
            await socket.send(p.Join(room=rooms.ghost["room"]["id"]))
            assert not_yet(await socket.expect_any((p.Welcome, p.Error))), key
    async with WsClient.connect(url) as socket:
        welcome = await take_seat(socket, rooms.cy, rooms.ghost["room"]["id"])
        assert welcome.seat == 0


async def test_rooms_on_the_daily_deal_keep_their_replay_and_results(
    make_server: MakeServer,
) -> None:
    url = await make_server()
    rooms = await deal_rooms(url)
    deal, seed = rooms.attempt["daily"], rooms.attempt["seed"]
    practice = rooms.practice["room"]
    assert practice["daily_deal"] == deal and practice["daily"] is None
    assert rooms.ghost["room"]["daily_deal"] == deal and rooms.ghost["room"]["daily"] is None
    # Its own player plays on (by the seat's token) to the end.
    async with WsClient.connect(url) as socket:
        await socket.join(practice["id"], token=rooms.practice["token"])
        await socket.send(p.Resign())
        await socket.expect(p.RaceFinished)
    room = practice["id"]
    for key in (None, rooms.bo):
        status, body = await call("GET", f"{url}/rooms/{room}/replay", key)
        assert status == 403 and body["error"]["code"] == "not_yet", key
        status, body = await call("GET", f"{url}/rooms/{room}/results", key)
        assert status == 200 and body["seed"] is None, key
    status, text = await call("GET", f"{url}/rooms/{room}/replay", rooms.cy)
    assert status == 200 and f'"daily_deal":"{deal}"' in text.split("\n", 1)[0]
    status, body = await call("GET", f"{url}/rooms/{room}/results", rooms.cy)
    assert status == 200 and body["seed"] == seed
    # A ghost race of the practice race is on the same deal: closed the same way.
    status, again = await call("POST", f"{url}/rooms", rooms.cy, {"ghost": room})
    assert status == 201 and again["room"]["daily_deal"] == deal
    assert not_yet(await watched_as(url, again["room"]["id"], rooms.bo))
    # Archived, the practice race's replay is still closed to bo; cy has it.
    async with asyncio.timeout(20):
        while (await call("GET", f"{url}/races/{room}.1/replay", rooms.cy))[0] != 200:
            await asyncio.sleep(0.1)
    status, body = await call("GET", f"{url}/races/{room}.1/replay", rooms.bo)
    assert status == 403 and body["error"]["code"] == "not_yet"


async def test_rooms_on_the_daily_deal_open_to_everyone_once_the_day_is_over(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = await make_server()
    rooms = await deal_rooms(url)
    practice, ghost = rooms.practice["room"]["id"], rooms.ghost["room"]["id"]
    # The day ends (its rule's reading of the clock: everything else runs on).
    for module in ("server.edge.daily_routes", "server.live.lobby_live"):
        monkeypatch.setattr(f"{module}.day_over", lambda daily, now: True)
    _, listed = await call("GET", f"{url}/rooms")
    assert {practice, ghost} <= {r["id"] for r in listed["rooms"]}
    async with WsClient.connect(url) as lobby:
        await lobby.send(p.LobbyWatch())
        assert {practice, ghost} <= {r["id"] for r in (await lobby.expect(p.LobbyState)).rooms}
    for room in (practice, ghost):
        welcome = await watched_as(url, room, None)
        assert isinstance(welcome, p.Welcome) and welcome.role == "spectator", room
    _, body = await call("GET", f"{url}/rooms/{practice}")
    assert body["room"]["seed"] == rooms.attempt["seed"]
    async with WsClient.connect(url) as socket:
        await socket.send(p.Identify(key=rooms.bo))
        await socket.expect(p.Identified)
        assert (await socket.join(ghost)).seat == 0


async def test_an_attempt_still_running_after_its_day_keeps_that_deal_s_lines_closed(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing ends an attempt at midnight: one opened late in its day races on after it,
    when that deal's lines open to everyone. To its player they stay closed until the
    attempt is over, or the leader's line could be copied into a ranked attempt."""
    url = await make_server()
    rooms = await deal_rooms(url)
    (dee, _) = await new_player(url)
    status, running = await call("POST", f"{url}/daily/{GAME}", dee)
    assert status == 201
    for module in ("server.edge.daily_routes", "server.live.lobby_live"):
        monkeypatch.setattr(f"{module}.day_over", lambda daily, now: True)
    attempt = rooms.attempt["id"]
    for key in (None, rooms.bo):  # no attempt of their own: open, the day being over
        status, _ = await call("GET", f"{url}/rooms/{attempt}/replay", key)
        assert status == 200, key
    status, body = await call("GET", f"{url}/rooms/{attempt}/replay", dee)
    assert status == 403 and body["error"]["code"] == "not_yet"
    assert not_yet(await watched_as(url, attempt, dee))
    async with WsClient.connect(url) as socket:
        await take_seat(socket, dee, running["room"]["id"])
        await socket.send(p.Resign())
        await socket.expect(p.RaceFinished)
    status, _ = await call("GET", f"{url}/rooms/{attempt}/replay", dee)
    assert status == 200


async def test_a_profile_shows_today_s_deal_only_to_whom_it_is_open(
    make_server: MakeServer,
) -> None:
    # A race on today's deal (the attempt, practice, a ghost race) is listed in its
    # player's profile at once: its seed would give the deal away to whoever reads it.
    url = await make_server()
    rooms = await deal_rooms(url)
    _, me = await call("GET", f"{url}/me", rooms.ann)
    race = f"{rooms.attempt['id']}.1"
    async with asyncio.timeout(20):
        while (await call("GET", f"{url}/races/{race}/replay", rooms.ann))[0] != 200:
            await asyncio.sleep(0.1)
    for key, seed in ((None, None), (rooms.bo, None), (rooms.cy, rooms.attempt["seed"])):
        status, profile = await call("GET", f"{url}/players/{me['player']['name']}", key)
        assert status == 200, profile
        (item,) = [i for i in profile["races"]["items"] if i["race"] == race]
        assert item["seed"] == (None if seed is None else str(seed)), key


async def test_a_room_dealt_today_s_deal_by_its_number_is_closed_as_practice(
    make_server: MakeServer,
) -> None:
    url = await make_server()
    rooms = await deal_rooms(url)
    seed, deal = rooms.attempt["seed"], rooms.attempt["daily"]
    (dee, _) = await new_player(url)
    status, running = await call("POST", f"{url}/daily/{GAME}", dee)
    assert status == 201 and running["room"]["seed"] is None  # dee's attempt runs
    body = {"game": GAME, "seed": seed, "seats": 2, "hints": True, "rated": False}
    for key in (None, rooms.bo, dee):  # nobody plays the deal before their own attempt
        status, refused = await call("POST", f"{url}/rooms", key, body)
        assert status == 409 and refused["error"]["code"] == "not_yet", key
    status, made = await call("POST", f"{url}/rooms", rooms.ann, body)
    assert status == 201 and made["room"]["daily_deal"] == deal
    _, listed = await call("GET", f"{url}/rooms", rooms.bo)
    assert made["room"]["id"] not in {r["id"] for r in listed["rooms"]}
    assert not_yet(await watched_as(url, made["room"]["id"], rooms.bo))
    # Another game's deal of that number is no daily deal.
    other = next(g for g in core.GAMES if g != GAME)
    status, made = await call("POST", f"{url}/rooms", rooms.bo, {**body, "game": other})
    assert status == 201 and made["room"]["daily_deal"] is None


async def test_practice_again_deals_the_daily_deal_again(make_server: MakeServer) -> None:
    url = await make_server()
    rooms = await deal_rooms(url)
    practice = rooms.practice["room"]
    async with WsClient.connect(url) as socket:
        await socket.join(practice["id"], token=rooms.practice["token"])
        await socket.send(p.Resign())
        await socket.expect(p.RaceFinished)
        await socket.send(p.Rematch())
        again = await socket.expect(p.RaceStarted)
    assert again.seed == rooms.attempt["seed"]
    _, room = await call("GET", f"{url}/rooms/{practice['id']}", rooms.ann)
    assert room["room"]["round"] == 2 and room["room"]["daily_deal"] == rooms.attempt["daily"]


async def test_a_day_won_stays_won_when_another_game_is_opened(make_server: MakeServer) -> None:
    # The streaks count days with an attempt and days with a won one, whatever the game:
    # opening a second game's attempt after winning the first does not unwin the day.
    from core.solver import solve
    from server.daily.rule import SOLVER_BUDGET

    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    (ann, _) = await new_player(url)
    status, opened = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 201, opened
    room = opened["room"]
    async with WsClient.connect(url) as socket:
        await take_seat(socket, ann, room["id"])
        line = solve(board_of(await socket.expect(p.Snapshot)), budget=SOLVER_BUDGET).moves
        for seq, move in enumerate(line, start=1):
            await socket.send(p.Move(seq=seq, move=move))
            assert (await socket.expect(p.Accepted)).seq == seq
        assert (await socket.expect(p.RaceFinished)).results[0]["won"]
    _, daily = await call("GET", f"{url}/daily", ann)
    assert daily["streaks"] == {"played": 1, "won": 1}
    other = next(g for g in core.GAMES if g != GAME)
    status, _ = await call("POST", f"{url}/daily/{other}", ann)
    assert status == 201
    _, daily = await call("GET", f"{url}/daily", ann)
    assert daily["streaks"] == {"played": 1, "won": 1}


async def test_attempts_opened_at_once_make_one_room(
    make_server: MakeServer, redis_url: str
) -> None:
    # Two devices (or a double click) open the attempt at once, on two processes: one
    # room, every answer seating the player in it, and no second room left running.
    import json

    first, second = await make_server(), await make_server()
    (ann, player) = await new_player(first)
    answers = await asyncio.gather(
        *(call("POST", f"{(first, second)[i % 2]}/daily/{GAME}", ann) for i in range(6))
    )
    assert sorted(status for status, _ in answers) == [200] * 5 + [201], answers
    (room,) = {body["room"]["id"] for _, body in answers}
    client = aioredis.from_url(redis_url)
    try:
        rooms = []
        for key in await client.zrange("solrace:rooms", 0, -1):
            race = json.loads(await client.get(f"{{room:{key.decode()}}}:race") or "{}")
            players = [s.get("player") for s in race.get("seats", {}).values()]
            if race.get("config", {}).get("daily") and player["id"] in players:
                rooms.append(key.decode())
    finally:
        await client.aclose()
    assert rooms == [room]
    # The last answer's token holds the seat; the player's identity does in any case.
    async with WsClient.connect(first) as socket:
        assert (await take_seat(socket, ann, room)).seat == 0


async def test_daily_rooms_count_against_the_room_creation_budget(
    make_server: MakeServer,
) -> None:
    """An attempt and a practice room are rooms made: a client's budget of rooms
    (`room_rate`) holds for them as for POST /rooms; coming back to an attempt makes none."""
    url = await make_server(room_rate=3.0)
    ann, _ = await new_player(url)
    # Behind a reverse proxy on this machine: the address the proxy appended is the client.
    headers = {"Authorization": f"Bearer {ann}", "X-Forwarded-For": "203.0.113.9"}

    async def open_room(game: str, body: Any = None) -> tuple[int, Any, Any]:
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"{url}/daily/{game}", json=body, headers=headers) as answer,
        ):
            return answer.status, await answer.json(), answer.headers

    assert (await open_room("stalactites"))[0] == 201
    status, opened, _ = await open_room(GAME)
    assert status == 201
    async with WsClient.connect(url) as socket:
        await socket.join(opened["room"]["id"], token=opened["token"])
        await socket.send(p.Resign())
        await socket.expect(p.RaceFinished)
    assert (await open_room(GAME, {"practice": True}))[0] == 201
    status, body, answer_headers = await open_room(GAME, {"practice": True})
    assert status == 429 and body["error"]["code"] == "rate_limited", body
    assert int(answer_headers["Retry-After"]) >= 1
    status, body, _ = await open_room("moojub")
    assert status == 429 and body["error"]["code"] == "rate_limited", body
    # The attempt already open is answered again: no room is made.
    status, body, _ = await open_room("stalactites")
    assert status == 200 and body["ranked"], body


async def test_the_board_names_each_player_as_they_are_called_now(
    make_server: MakeServer,
) -> None:
    """A guest who names themselves after their attempt is on the board under that name,
    as on the leaderboards: not as the guest they were when it opened."""
    url = await make_server()
    ann, _ = await new_player(url)
    status, opened = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 201
    async with WsClient.connect(url) as socket:
        await take_seat(socket, ann, opened["room"]["id"])
        await socket.send(p.Resign())
        await socket.expect(p.RaceFinished)
    status, _ = await call("POST", f"{url}/me/name", ann, {"name": "ann"})
    assert status == 200
    status, today = await call("GET", f"{url}/daily", ann)  # her attempt on the board
    [shaula] = [g for g in today["games"] if g["game"] == GAME]
    assert shaula["leader"]["name"] == "ann"
    status, board = await call("GET", f"{url}/daily/{today['date']}/{GAME}")
    assert status == 200 and [row["name"] for row in board["board"]] == ["ann"]


async def test_an_attempt_left_outlives_the_server_s_lobby_ttl(make_server: MakeServer) -> None:
    """The seat of an attempt is kept until its day is over, however short a time the
    server keeps an unfinished room nobody changes (`lobby_ttl`): the room lives as long
    as its seat is kept, and the player comes back to it, moves and all."""
    url = await make_server(lobby_ttl=1.0, empty_ttl=1.0)
    ann, _ = await new_player(url)
    status, opened = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 201
    async with WsClient.connect(url) as socket:
        await take_seat(socket, ann, opened["room"]["id"])
        game = board_of(await socket.expect(p.Snapshot))
        move = game.legal_moves()[0]
        await socket.send(p.Move(seq=1, move=move))
        await socket.expect(p.Accepted)
    await asyncio.sleep(2.5)  # the page closed for longer than lobby_ttl
    async with WsClient.connect(url) as socket:
        welcome = await take_seat(socket, ann, opened["room"]["id"])
        assert welcome.seat == 0 and (await socket.expect(p.Snapshot)).moves == [move]
    status, today = await call("GET", f"{url}/daily", ann)
    [shaula] = [g for g in today["games"] if g["game"] == GAME]
    assert shaula["you"]["finished"] is False and shaula["you"]["moves"] == 1


async def test_a_date_that_is_no_day_is_said_to_be_none(make_server: MakeServer) -> None:
    """A date written YYYY-MM-DD that no calendar has (30 February) is refused as no day,
    not as a date written wrong; one written otherwise is refused for its form."""
    url = await make_server()
    for text in ("2026-02-30", "2026-13-01", "2026-00-10"):
        status, body = await call("GET", f"{url}/daily/{text}/{GAME}")
        assert status == 400 and body["error"] == {
            "code": "bad_request",
            "message": f"{text} is no day of the calendar (the date is YYYY-MM-DD)",
        }
    for text in ("2026-2-3", "20261203", "2026-W49-1"):
        status, body = await call("GET", f"{url}/daily/{text}/{GAME}")
        assert status == 400 and body["error"]["message"] == "the date is YYYY-MM-DD", text


async def test_a_body_nested_too_deep_is_a_bad_request(make_server: MakeServer) -> None:
    url = await make_server()
    (ann, _) = await new_player(url)
    deep = "[" * 30000 + "]" * 30000  # under the size cap, past the JSON reader's depth
    async with (
        aiohttp.ClientSession() as http,
        http.post(
            f"{url}/daily/{GAME}",
            data=deep,
            headers={"Authorization": f"Bearer {ann}", "Content-Type": "application/json"},
        ) as answer,
    ):
        assert answer.status == 400
        assert (await answer.json())["error"]["code"] == "bad_request"


async def test_a_socket_whose_seat_another_device_opened_again_can_join_again(
    make_server: MakeServer,
) -> None:
    # ann's phone holds the attempt's seat; she opens it again on her laptop (a new token,
    # the old one holds the seat no more). The phone's socket is told its seat is away and
    # holds nothing: it joins again (by her identity) on that same socket, as a move's
    # refusal says, and plays on.
    first, second = await make_server(), await make_server()
    (ann, _) = await new_player(first)
    status, opened = await call("POST", f"{first}/daily/{GAME}", ann)
    assert status == 201, opened
    room = opened["room"]
    async with WsClient.connect(first) as phone:
        await take_seat(phone, ann, room["id"])
        move = board_of(await phone.expect(p.Snapshot)).legal_moves()[0]
        status, again = await call("POST", f"{second}/daily/{GAME}", ann)
        assert status == 200 and again["room"]["id"] == room["id"]
        away = await phone.expect(p.Presence)
        assert (away.seat, away.connected) == (0, False)
        await phone.send(p.Join(room=room["id"]))
        welcome = await phone.expect_any((p.Welcome, p.Error))
        assert isinstance(welcome, p.Welcome) and welcome.seat == 0, welcome
        await phone.send(p.Move(seq=1, move=move))
        answer = await phone.expect_any((p.Accepted, p.Refused))
        assert isinstance(answer, p.Accepted), answer


async def test_an_attempt_undone_is_said_unranked_while_it_runs(make_server: MakeServer) -> None:
    """`you` shows a running attempt as it stands: once its player has undone a move it is
    no longer ranked, in GET /daily and in the answer to opening it again."""
    url = await make_server()
    ann, _ = await new_player(url)
    status, opened = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 201
    room = opened["room"]
    async with WsClient.connect(url) as socket:
        await socket.join(room["id"], token=opened["token"])
        move = board_of(await socket.expect(p.Snapshot)).legal_moves()[0]
        await socket.send(p.Move(seq=1, move=move))
        await socket.expect(p.Accepted)
        status, today = await call("GET", f"{url}/daily", ann)
        [you] = [g["you"] for g in today["games"] if g["game"] == GAME]
        assert you["ranked"] and not you["finished"]
        await socket.send(p.Undo(seq=2))
        await socket.expect(p.Accepted)
    status, today = await call("GET", f"{url}/daily", ann)
    [you] = [g["you"] for g in today["games"] if g["game"] == GAME]
    assert not you["ranked"] and not you["finished"] and you["moves"] == 2
    status, again = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 200 and not again["attempt"]["ranked"]


async def test_a_socket_whose_key_was_signed_out_watches_no_daily_line_as_the_player(
    make_server: MakeServer,
) -> None:
    """Once its key is signed out, a socket that identified with it is nobody's: the daily
    deal's rooms, open to that player, stay closed to it (section 11)."""
    url = await make_server()
    rooms = await deal_rooms(url)
    _, made = await call("POST", f"{url}/me/link", rooms.cy)
    status, linked = await call("POST", f"{url}/link", None, {"code": made["code"]})
    assert status == 200, linked
    cy_again = linked["key"]  # a second device of cy's
    async with WsClient.connect(url) as spy:
        await spy.send(p.Identify(key=cy_again))
        await spy.expect(p.Identified)
        status, _ = await call("POST", f"{url}/sign-out", cy_again)
        assert status == 200
        await spy.send(p.Watch(room=rooms.practice["room"]["id"], since=0))
        refused = await spy.expect_any((p.Welcome, p.Error))
    assert isinstance(refused, p.Error) and refused.code == "bad_key", refused
    welcome = await watched_as(url, rooms.practice["room"]["id"], rooms.cy)  # his other key
    assert isinstance(welcome, p.Welcome)


async def test_a_bot_s_attempt_is_marked_a_bot_s_on_the_board(make_server: MakeServer) -> None:
    # A bot (the solver at machine speed) may lead the board: it says so, as results,
    # seats and the leaderboards do.
    url = await make_server()
    (machine, _), (ann, _) = await new_player(url, bot=True), await new_player(url)
    for key in (machine, ann):
        await finish_attempt(url, key)
    _, today = await call("GET", f"{url}/daily", ann)
    async with asyncio.timeout(20):
        while (
            len((board := (await call("GET", f"{url}/daily/{today['date']}/{GAME}"))[1])["board"])
            < 2
        ):
            await asyncio.sleep(0.2)
    assert sorted(row["bot"] for row in board["board"]) == [False, True]
    _, today = await call("GET", f"{url}/daily", ann)
    assert "bot" in today["games"][0]["leader"]


async def test_an_attempt_s_grace_is_the_rest_of_its_day_and_at_least_an_hour(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Section 13: a seat away is never forfeited before the day is over (its grace is the
    rest of the day as the attempt opened), and one opened late in the day keeps an hour."""
    import server.edge.daily_routes as daily_routes

    url = await make_server()
    (ann, _), (bo, _) = await new_player(url), await new_player(url)
    _, today = await call("GET", f"{url}/daily")
    status, opened = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 201
    rest = today["ends_at"] - opened["room"]["start_at"]
    assert abs(opened["room"]["grace"] - max(rest, 3600.0)) < 5.0, (opened["room"], rest)
    # Two minutes before midnight: an hour, not two minutes.
    real = daily_routes.day_bounds
    monkeypatch.setattr(
        daily_routes, "day_bounds", lambda day: (real(day)[0], daily_routes.time.time() + 120)
    )
    status, late = await call("POST", f"{url}/daily/{GAME}", bo)
    assert status == 201 and late["room"]["grace"] == 3600.0
