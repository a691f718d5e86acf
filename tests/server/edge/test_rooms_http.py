"""HTTP: creating and listing rooms, state, results, health and metrics."""

import time
from typing import Any

import pytest
from redis.asyncio import Redis
from support.http import create_room, get_json, get_text, post_json
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from protocol import ErrorCode
from server.edge.sweeper import sweep_once
from server.live.hub import Hub
from server.redis_io.batcher import ScriptBatcher
from server.room.race import Race, RaceError, RoomConfig, Status
from server.storage.feed import RedisFeed
from server.storage.store import RedisRoomStore


@pytest.mark.parametrize("hint", ["", "?room=", "?room=0badc0de", "?room=%20%FF&room=a&x=1"])
async def test_a_socket_path_with_any_room_hint_serves_the_room_joined(
    server_url: str, hint: str
) -> None:
    """`?room=` routes sockets in a balancer; the server never refuses or acts on it: the
    join decides the room, whatever (another room, nonsense, nothing) the path names."""
    room = (await create_room(server_url))["id"]
    async with WsClient.connect(server_url, path=f"/ws{hint}") as ann:
        welcome = await ann.join(room, "ann")
        assert (welcome.room, welcome.seat) == (room, 0)
        snapshot = await ann.expect(p.Snapshot)
        assert snapshot.room["id"] == room


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"game": "chess"}, "bad_game"),
        ({"game": "shaula", "seats": 0}, "bad_request"),
        ({"game": "shaula", "seats": 1.5}, "bad_request"),
        ({"game": "shaula", "seats": 99}, "bad_request"),
        ({"game": "shaula", "seed": 0}, "bad_request"),
        ({"game": "shaula", "seed": "lucky"}, "bad_request"),
        ({"game": "shaula", "undo": "yes"}, "bad_request"),
        ({"game": "shaula", "time_limit": -1}, "bad_request"),
        ([1, 2], "bad_request"),
    ],
)
async def test_bad_room_requests(server_url: str, body: Any, code: str) -> None:
    status, answer = await post_json(f"{server_url}/rooms", body)
    assert status == 400 and answer["error"]["code"] == code


async def test_create_get_and_list_rooms(server_url: str) -> None:
    status, answer = await post_json(
        f"{server_url}/rooms",
        {
            "game": "moojub",
            "seed": 5,
            "seats": 3,
            "undo": False,
            "hints": True,
            "time_limit": 600,
            "spectator_delay": 10,
            "grace": 5,
            "countdown": 7,
        },
    )
    room = answer["room"]
    assert status == 201 and answer["ws"] == f"/ws?room={room['id']}"
    assert (room["game"], room["seats"], room["undo"], room["hints"]) == ("moojub", 3, False, True)
    assert (room["time_limit"], room["spectator_delay"], room["grace"]) == (600, 10, 5)
    assert room["countdown"] == 7  # every setting shows in the room
    assert room["seed"] is None and room["seed_mode"] == "fixed" and room["status"] == "lobby"
    status, got = await get_json(f"{server_url}/rooms/{room['id']}")
    assert status == 200 and got["room"] == room and got["version"] == 0
    status, listing = await get_json(f"{server_url}/rooms")
    assert status == 200 and room["id"] in [r["id"] for r in listing["rooms"]]
    status, results = await get_json(f"{server_url}/rooms/{room['id']}/results")
    assert status == 409 and results["error"]["code"] == "not_finished"
    status, missing = await get_json(f"{server_url}/rooms/nope")
    assert status == 404 and missing["error"]["code"] == "unknown_room"


async def test_finished_rooms_leave_the_listing(server_url: str) -> None:
    room = (await create_room(server_url, seats=1))["id"]
    async with WsClient.connect(server_url) as c:
        await race_alone(c, room)
        await c.send(p.Resign())
        await c.expect(p.RaceFinished)
    _, listing = await get_json(f"{server_url}/rooms")
    assert room not in [r["id"] for r in listing["rooms"]]


async def test_winnable_rooms(server_url: str) -> None:
    status, answer = await post_json(f"{server_url}/rooms", {"game": "shaula", "seed": "winnable"})
    assert status == 201
    assert answer["room"]["seed_mode"] == "winnable" or "notice" in answer


async def test_healthz_and_metrics(server_url: str) -> None:
    status, health = await get_json(f"{server_url}/healthz")
    assert status == 200 and health["ok"] is True
    room = (await create_room(server_url, seats=1, seed=3))["id"]
    async with WsClient.connect(server_url) as c:
        await race_alone(c, room)
        await c.send(p.Move(seq=1, move="t1 t1"))
        await c.expect(p.Refused)
        status, text = await get_text(f"{server_url}/metrics")
    assert status == 200
    lines = dict(
        line.rsplit(" ", 1) for line in text.splitlines() if line and not line.startswith("#")
    )
    assert float(lines["solrace_connections"]) >= 1
    assert lines['solrace_moves_refused_total{code="illegal_move"}'] == "1"  # by code, exact
    assert float(lines["solrace_rooms_created_total"]) == 1
    assert float(lines["solrace_move_latency_seconds_count"]) == 1
    assert "# TYPE solrace_move_latency_seconds histogram" in text


async def counting_down(redis_url: str, name: str) -> tuple[Redis, Hub, Race, float]:
    """A room of one seat whose countdown (1 s) began now, that no process has open (as
    after a crash); Redis, a hub of its own, the race and now."""
    redis = Redis.from_url(redis_url)
    store = RedisRoomStore(redis, ScriptBatcher(redis))
    now = time.time()
    race = Race(
        room=f"{name}{int(now * 1000)}",
        config=RoomConfig("shaula", countdown=1.0),
        seed=4,
        created_at=now,
    )
    await store.create(race)
    await store.transact(race.room, lambda r: r.join("a", "h", now)[1], now)
    await store.transact(race.room, lambda r: r.start(0, now), now)
    return redis, Hub(store, RedisFeed(redis)), race, now


async def test_deadlines_survive_a_crash_the_sweeper_starts_the_race(redis_url: str) -> None:
    """No process had the room open (as after a crash): the shared sweep still starts it."""
    redis, hub, race, now = await counting_down(redis_url, "crash")
    store = hub.store
    assert await sweep_once(hub, now + 0.5) >= 0
    loaded = await store.load(race.room)
    assert loaded is not None and loaded.race.status is Status.COUNTDOWN
    await sweep_once(hub, now + 1.0)
    loaded = await store.load(race.room)
    assert loaded is not None and loaded.race.status is Status.RUNNING
    # Nobody is connected: the next deadline is the absent racer's grace.
    assert await redis.zscore("solrace:deadlines", race.room) == now + 1.0 + 30.0
    await store.batcher.close()
    await redis.aclose()


async def test_a_deadline_met_by_a_busy_room_is_kept_for_the_next_sweep(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tick the room refused for now (too busy: nothing written) is due again: only a room
    that is gone loses its deadline, else its racers would never start, forfeit or end."""
    redis, hub, race, now = await counting_down(redis_url, "busy")
    store = hub.store
    real = RedisRoomStore.transact

    async def busy(self: RedisRoomStore, *_: Any) -> Any:
        raise RaceError(ErrorCode.UNAVAILABLE, "the room is too busy, try again")

    monkeypatch.setattr(RedisRoomStore, "transact", busy)
    await sweep_once(hub, now + 1.0)
    assert await redis.zscore("solrace:deadlines", race.room) == now + 1.0
    monkeypatch.setattr(RedisRoomStore, "transact", real)
    await sweep_once(hub, now + 1.0)
    loaded = await store.load(race.room)
    assert loaded is not None and loaded.race.status is Status.RUNNING
    await store.batcher.close()
    await redis.aclose()


async def test_room_codes_are_case_insensitive(server_url: str) -> None:
    # People copy codes by eye; a code typed in capitals is the same room.
    # An id of digits alone (one in about 40) reads the same in capitals: take one that does not.
    for _ in range(30):
        room = (await create_room(server_url, seats=1))["id"]
        code = room.upper()
        if code != room:
            break
    assert code != room
    status, body = await get_json(f"{server_url}/rooms/{code}")
    assert status == 200 and body["room"]["id"] == room
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as spy:
        welcome = await race_alone(ann, code)
        assert welcome.room == room
        await spy.send(p.Watch(room=code))
        assert (await spy.expect(p.Welcome)).room == room
        await ann.send(p.Resign())
        await spy.expect(p.RaceFinished)
    status, body = await get_json(f"{server_url}/rooms/{code}/results")
    assert status == 200 and body["room"] == room


async def test_the_results_are_the_last_finished_rounds_while_a_rematch_counts_down_and_runs(
    server_url: str,
) -> None:
    """Once a round has finished, the room has results: while the next round counts down
    and runs they are that round's (their `round` says which), never `not_finished`."""
    room = (await create_room(server_url, seats=2, seed=12, countdown=1))["id"]
    game = core.new_game("shaula", 12)
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as bo:
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        await ann.expect(p.RaceStarted)
        await ann.send(p.Move(seq=1, move=game.legal_moves()[0]))
        await ann.expect(p.Accepted)
        await ann.send(p.Resign())
        await bo.send(p.Resign())
        first = await ann.expect(p.RaceFinished)
        status, before = await get_json(f"{server_url}/rooms/{room}/results")
        assert status == 200 and before["round"] == 1 and before["results"] == first.results
        await ann.send(p.Rematch())
        await bo.send(p.Rematch())
        await ann.expect(p.NewRound)
        await ann.expect(p.Countdown)
        status, counting = await get_json(f"{server_url}/rooms/{room}/results")
        assert status == 200, counting
        assert counting == before  # round 1's, its seed and end included
        started = await ann.expect(p.RaceStarted)
        status, running = await get_json(f"{server_url}/rooms/{room}/results")
        assert status == 200 and running == before
        await ann.send(p.Resign())
        await bo.send(p.Resign())
        second = await ann.expect(p.RaceFinished)
    status, after = await get_json(f"{server_url}/rooms/{room}/results")
    assert status == 200 and after["round"] == 2 and after["seed"] == started.seed
    assert after["results"] == second.results
