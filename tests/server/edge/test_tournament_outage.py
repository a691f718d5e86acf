"""A Redis outage under a running tournament: the tournament sweep says so in one WARNING
line (not a traceback four times a second), says when Redis answers again, and the
tournament goes on; a `tour_watch` meanwhile is answered `unavailable`."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest
from aiohttp import web
from support.databases import scratch_database_url
from support.http import create_room, post_json
from support.own_redis import OwnRedis
from support.ports import free_port
from support.tour_bots import create, register
from support.wsclient import WsClient

import protocol as p
from server.edge.app import create_app
from server.edge.tournament_keys import TOUR_LIVE
from server.settings import Settings


async def test_a_redis_outage_is_one_warning_and_the_tournament_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="server.edge.tournament_lifecycle")
    redis = OwnRedis(tmp_path, "--appendonly", "yes")
    redis.start()
    port = free_port()
    runner = web.AppRunner(
        create_app(Settings(database_url=scratch_database_url(), port=port, redis_url=redis.url))
    )
    try:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        url = f"http://127.0.0.1:{port}"
        tid, organiser = await create(url, format="arena", duration=600, wave=0.2)
        for name in ("ann", "bo"):
            await register(url, tid, name)
        status, _ = await post_json(
            f"{url}/tournaments/{tid}/start", {"organiser_token": organiser}
        )
        assert status == 200
        await asyncio.sleep(0.5)  # its deadline is swept every 0.25 s from now on
        redis.stop()
        await asyncio.sleep(2.0)  # about eight sweeps while Redis is away
        await asyncio.to_thread(redis.start)
        await asyncio.sleep(2.0)
        records = [
            r for r in caplog.records if r.name.startswith("server.edge.tournament_lifecycle")
        ]
        warnings = [r for r in records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "Redis unavailable" in warnings[0].getMessage()
        assert not [r for r in records if r.levelno >= logging.ERROR]
        assert any("Redis answers again" in r.getMessage() for r in records)
        status, _ = await post_json(
            f"{url}/tournaments/{tid}/pause", {"organiser_token": organiser}
        )
        assert status == 200  # the tournament is there and answers
    finally:
        await runner.cleanup()
        redis.stop()


async def test_tour_watch_during_an_outage_is_answered_unavailable_and_the_socket_stays(
    own_redis: OwnRedis, own_server_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """docs/protocol.md section 7: a request that needs Redis while it is away gets an
    `error` `unavailable`, the socket stays open. `tour_watch` let the Redis error out of
    its handler: the socket was closed (its seat, if any, away) with a traceback logged."""
    tid, _ = await create(own_server_url, format="arena", duration=600)
    async with WsClient.connect(own_server_url) as ann:
        await ann.send(p.TourWatch(tournament=tid))
        assert (await ann.expect(p.TourState)).tournament["id"] == tid
        await ann.send(p.TourUnwatch())
        own_redis.stop()
        try:
            await ann.send(p.TourWatch(tournament=tid))
            error = await ann.expect(p.Error, timeout=10)
            assert (error.code, error.request) == ("unavailable", "tour_watch"), error
            await ann.send(p.Ping(id=7))
            assert (await ann.expect(p.Pong)).id == 7  # the socket is still served
        finally:
            await asyncio.to_thread(own_redis.start)
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_seated_follower_closed_during_an_outage_is_forgotten(
    tmp_path: Path,
) -> None:
    """A socket that held a seat and followed a tournament closes while Redis is away: its
    seat cannot be let go then (the reaper does it later), and that failure kept the
    tournament from hearing of the close: the closed socket stayed among its followers,
    and in memory, for good."""
    redis = OwnRedis(tmp_path, "--appendonly", "yes")
    redis.start()
    port = free_port()
    app = create_app(Settings(database_url=scratch_database_url(), port=port, redis_url=redis.url))
    runner = web.AppRunner(app)
    try:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        url = f"http://127.0.0.1:{port}"
        tid, _ = await create(url, format="arena", duration=600)
        room = (await create_room(url, game="shaula"))["id"]
        async with WsClient.connect(url) as ann:
            await ann.join(room, "ann")
            await ann.send(p.TourWatch(tournament=tid))
            await ann.expect(p.TourState)
            assert app[TOUR_LIVE].followers(tid) == 1
            redis.stop()
        for _ in range(50):  # the socket's clean-up, with Redis away
            if app[TOUR_LIVE].followers(tid) == 0:
                break
            await asyncio.sleep(0.1)
        assert app[TOUR_LIVE].followers(tid) == 0
    finally:
        await runner.cleanup()
        redis.stop()
