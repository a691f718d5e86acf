"""Redis frozen (SIGSTOP), not dead, in the middle of a race, then thawed (SIGCONT).

A frozen Redis keeps its TCP connections open and even accepts new ones (the kernel
does), but answers nothing: every reply runs into the server's reply deadline. A move
sent meanwhile must be refused `unavailable` (not wait for ever), the same seq accepted
once Redis answers again, and the room's events must reach its sockets again: the move
path and the pub/sub feed share one connection, and the feed's reconnection also met a
frozen Redis (its `HELLO` timed out), which left every room of the process deaf for good:
no `progress` of the others, no `finished` at the time limit.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time

import aiohttp
import pytest
from support.http import create_room
from support.own_redis import OwnRedis
from support.players import new_player
from support.servers import MakeServer
from support.tour_bots import create as create_tournament
from support.wsclient import WsClient

import protocol as p
from server.edge.redis_watch import WATCH_EVERY
from server.redis_io.health import CHECK_TIMEOUT
from server.redis_io.resp import REPLY_DEADLINE

FROZEN = 2 * REPLY_DEADLINE + 2  # the reply deadline runs out, then the reconnect's too


@pytest.mark.timeout(60)
async def test_http_is_answered_unavailable_while_redis_is_frozen(
    own_redis: OwnRedis, own_server_url: str
) -> None:
    """Room requests are answered 503 `unavailable` after one reply deadline, while Redis
    is still frozen. redis-py (the plain commands: GET /rooms, the sweeps) retried a
    command that timed out, three times, so such a request waited four deadlines (GET
    /rooms: 20.7 s) and the deadline sweep noticed the outage only after 20 s."""
    assert own_redis.proc is not None
    room = (await create_room(own_server_url, game="shaula"))["id"]
    async with aiohttp.ClientSession() as http:
        os.kill(own_redis.proc.pid, signal.SIGSTOP)
        try:
            for method, path in (("GET", "/rooms"), ("GET", f"/rooms/{room}"), ("POST", "/rooms")):
                # Each answered while Redis is still frozen, long before four deadlines.
                async with asyncio.timeout(2 * REPLY_DEADLINE):
                    json = {"game": "shaula"} if method == "POST" else None
                    async with http.request(method, own_server_url + path, json=json) as answer:
                        body = await answer.json()
                        assert answer.status == 503, (path, body)
                        assert body["error"]["code"] == "unavailable"
                        assert answer.headers["Retry-After"] == "1"
        finally:
            os.kill(own_redis.proc.pid, signal.SIGCONT)
        async with http.get(f"{own_server_url}/rooms") as answer:
            assert answer.status == 200, await answer.text()


@pytest.mark.timeout(90)
async def test_a_frozen_redis_refuses_moves_meanwhile_and_the_room_hears_again_after(
    own_redis: OwnRedis, make_own_server: MakeServer
) -> None:
    # The sockets stay open through the freeze (a cutoff beyond it): the room must hear
    # again on them. Past the cutoff they would be handed on
    # (tests/server/edge/test_redis_cut_off.py).
    own_server_url = await make_own_server(redis_cutoff=3 * FROZEN)
    room = (await create_room(own_server_url, game="shaula", seed=617, seats=2, countdown=0))["id"]
    async with WsClient.connect(own_server_url) as ann, WsClient.connect(own_server_url) as bo:
        ann_seat, _ = await _race(room, ann, bo)

        assert own_redis.proc is not None
        os.kill(own_redis.proc.pid, signal.SIGSTOP)
        try:
            await ann.send(p.Move(seq=1, move="t2 t5"))
            refused = await ann.expect(p.Refused, timeout=REPLY_DEADLINE + 5)
            assert (refused.seq, refused.code) == (1, "unavailable"), refused
            await asyncio.sleep(FROZEN - REPLY_DEADLINE)
        finally:
            os.kill(own_redis.proc.pid, signal.SIGCONT)

        # Thawed: the same seq is sent again until it is accepted (the client's rule).
        await ann.move_until_accepted(p.Move(seq=1, move="t2 t5"), within=30)
        # The other racer hears of it: the room's events flow again.
        progress = await bo.expect(p.Progress, timeout=15)
        assert (progress.seat, progress.moves) == (ann_seat, 1)
        # And keeps hearing: the next move's progress too.
        await ann.send(p.Move(seq=2, move="t2 c1"))
        assert isinstance(await ann.expect(p.Accepted, timeout=10), p.Accepted)
        progress = await bo.expect(p.Progress, timeout=10)
        assert (progress.seat, progress.moves) == (ann_seat, 2)


@pytest.mark.timeout(60)
async def test_requests_are_answered_unavailable_at_once_once_the_process_sees_the_outage(
    own_redis: OwnRedis, make_own_server: MakeServer
) -> None:
    """Once the process's check of Redis has failed (/healthz 503), a `join`, a `watch`, a
    `quick` or a `tour_watch` is answered `unavailable` at once, as `lobby_watch` is. Each
    waited for its calls to Redis to run out their reply deadlines one after another: 5 s
    for a `watch` or a `tour_watch`, 10 s for a `quick`, 12 s for a `join`, while the
    player looked at a page that said nothing."""
    own_server_url = await make_own_server(redis_cutoff=60)  # the sockets stay open
    room = (await create_room(own_server_url, game="shaula", seats=2))["id"]
    tournament, _ = await create_tournament(own_server_url)
    async with (
        aiohttp.ClientSession() as http,
        WsClient.connect(own_server_url) as joiner,
        WsClient.connect(own_server_url) as watcher,
        WsClient.connect(own_server_url) as quick,
        WsClient.connect(own_server_url) as follower,
    ):
        assert own_redis.proc is not None
        os.kill(own_redis.proc.pid, signal.SIGSTOP)
        try:
            await until_status(http, f"{own_server_url}/healthz", 503)
            # /healthz asks Redis itself; the process's watch finds the same within a
            # check's interval and timeout.
            await asyncio.sleep(WATCH_EVERY + CHECK_TIMEOUT + 1)
            asked = {
                "join": (joiner, p.Join(room=room, name="ann")),
                "watch": (watcher, p.Watch(room=room)),
                "quick": (quick, p.QuickMatch(game="shaula", name="bo")),
                "tour_watch": (follower, p.TourWatch(tournament=tournament)),
            }
            for client, message in asked.values():
                await client.send(message)
            for request, (client, _) in asked.items():
                error = await client.expect(p.Error, timeout=REPLY_DEADLINE - 1)
                assert (error.request, error.code) == (request, "unavailable"), error
        finally:
            os.kill(own_redis.proc.pid, signal.SIGCONT)
        # Redis back: the same requests are served.
        await until_status(http, f"{own_server_url}/healthz", 200)
        await watcher.send(p.Watch(room=room))
        assert (await watcher.expect(p.Welcome, timeout=10)).role == "spectator"
        await follower.send(p.TourWatch(tournament=tournament))
        assert (await follower.expect(p.TourState, timeout=10)).tournament["id"] == tournament


@pytest.mark.timeout(60)
async def test_http_requests_that_need_redis_are_answered_at_once_once_the_outage_is_seen(
    own_redis: OwnRedis, make_own_server: MakeServer
) -> None:
    """Once the process's check of Redis has failed, an HTTP request that needs Redis is
    answered 503 `unavailable` within a check of its own (at most CHECK_TIMEOUT), as the
    WebSocket's requests are: each waited out its reply deadline (GET /rooms: 5 s; 15 s
    through a balancer that tries each process in turn). Requests that need no Redis are
    served as ever."""
    own_server_url = await make_own_server(redis_cutoff=60)
    room = (await create_room(own_server_url, game="shaula"))["id"]
    tournament, _ = await create_tournament(own_server_url)
    key, _ = await new_player(own_server_url)
    async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {key}"}) as http:
        assert own_redis.proc is not None
        os.kill(own_redis.proc.pid, signal.SIGSTOP)
        try:
            await until_status(http, f"{own_server_url}/healthz", 503)
            await asyncio.sleep(WATCH_EVERY + CHECK_TIMEOUT + 1)
            refused = (
                ("POST", "/players"),
                ("POST", "/me/name"),
                ("GET", "/rooms"),
                ("POST", "/rooms"),
                ("GET", f"/rooms/{room}"),
                ("GET", f"/rooms/{room}/results"),
                ("GET", f"/rooms/{room}/replay"),
                ("GET", "/tv/room"),
                ("GET", "/tournaments"),
                ("GET", f"/tournaments/{tournament}"),
                ("GET", f"/tournaments/{tournament}/standings"),
                ("GET", "/daily"),
            )
            for method, path in refused:
                json = {"game": "shaula", "name": "renamed"} if method == "POST" else None
                began = time.monotonic()
                async with http.request(method, own_server_url + path, json=json) as answer:
                    body = await answer.json()
                took = time.monotonic() - began
                assert answer.status == 503, (path, body)
                assert body["error"]["code"] == "unavailable", (path, body)
                assert answer.headers["Retry-After"] == "1"
                assert took < CHECK_TIMEOUT + 1.5, (path, took)
            for path, status in (("/games", 200), ("/games/shaula/rules", 200), ("/me", 200)):
                async with http.get(own_server_url + path) as answer:
                    assert answer.status == status, (path, await answer.text())
        finally:
            os.kill(own_redis.proc.pid, signal.SIGCONT)
        await until_status(http, f"{own_server_url}/rooms/{room}", 200)


@pytest.mark.timeout(60)
async def test_a_racer_who_left_during_a_freeze_has_the_whole_grace_from_the_thaw(
    own_redis: OwnRedis, make_own_server: MakeServer
) -> None:
    """A socket closed while Redis is frozen is written away once Redis answers, and its
    grace runs from then (docs/protocol.md section 6). The departure was stamped with the
    moment the socket closed, before the wait for Redis: written after the thaw, its
    grace ended as much earlier as the freeze had lasted since the close, and a racer
    who came back within the grace counted from the thaw was forfeited."""
    grace = 10.0
    own_server_url = await make_own_server(redis_cutoff=60)  # ann's socket stays open
    room = await create_room(own_server_url, game="shaula", seats=2, countdown=0, grace=grace)
    async with WsClient.connect(own_server_url) as ann:
        async with WsClient.connect(own_server_url) as bo:
            _, bo_seat = await _race(room["id"], ann, bo)
            assert own_redis.proc is not None
            os.kill(own_redis.proc.pid, signal.SIGSTOP)
        # bo's socket is closed: its departure waits for Redis, within the reply deadline.
        try:
            await asyncio.sleep(REPLY_DEADLINE - 2)
        finally:
            os.kill(own_redis.proc.pid, signal.SIGCONT)
        thawed = time.time()
        while True:
            presence = await ann.expect(p.Presence, timeout=15)
            if presence.seat == bo_seat and not presence.connected:
                break
        assert presence.grace_until is not None
        assert presence.grace_until >= thawed + grace - 0.25, presence.grace_until - thawed


async def _race(room: str, ann: WsClient, bo: WsClient) -> tuple[int | None, int | None]:
    """Seat ann and bo in `room` and start its race (no countdown); their seats."""
    ann_seat = (await ann.join(room, "ann")).seat
    bo_seat = (await bo.join(room, "bo")).seat
    for c in (ann, bo):
        await c.send(p.Ready())
    await bo.expect(p.RaceStarted, timeout=10)
    await ann.expect(p.RaceStarted, timeout=10)
    return ann_seat, bo_seat


async def until_status(http: aiohttp.ClientSession, url: str, status: int) -> None:
    """Ask `url` until it answers `status` (within four reply deadlines)."""
    async with asyncio.timeout(4 * REPLY_DEADLINE):
        while True:
            async with http.get(url) as answer:
                if answer.status == status:
                    return
            await asyncio.sleep(0.2)
