"""The daily deal on real servers (real Redis, real WebSockets, SQLite records): the same
deal on every process and after a restart, one ranked attempt (a second refused with its
code), an attempt dropped and resumed on its own clock, the board, and replays that open
only after one's own attempt."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
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
    seed = room["seed"]
    game = core.new_game(GAME, seed)
    move = game.legal_moves()[0]
    async with WsClient.connect(url) as socket:  # by the seat's token, as the web page does
        welcome = await socket.join(room["id"], token=opened["token"])
        assert welcome.seat == 0
        await socket.send(p.Move(seq=1, move=move))
        await socket.expect(p.Accepted)
    # The page closed: the attempt goes on; opening it again is the same one, same clock.
    status, again = await call("POST", f"{url}/daily/{GAME}", ann)
    assert status == 200 and again["room"]["id"] == room["id"]
    assert again["room"]["start_at"] == started and again["attempt"]["started_at"] <= started
    assert again["token"] != opened["token"]  # this device's; the old one holds nothing now
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
        await socket.expect(p.RaceFinished)
    for path in ("replay", "results"):  # its results carry the day's seed
        status, body = await call("GET", f"{url}/rooms/{room['id']}/{path}", bo)
        assert status == 403 and body["error"]["code"] == "not_yet", path
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
