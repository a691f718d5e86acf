"""A quick match made while the waiting player's process could not hear it: that process's
link to Redis is cut for a few seconds (under the cutoff, so its sockets stay open), and a
player on another process is paired with the waiting ticket meanwhile. The pairing is
told over pub/sub, which the cut process was not listening to then: the waiting player
never heard `matched`, and was forfeited from a rated race they never saw, with their
socket open all along (docs/protocol.md section 4: `queued`, then `matched`, always both;
section 3: nobody is forfeited for an outage of their process's link to Redis)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from aiohttp import web
from support.databases import scratch_database_url
from support.own_redis import durable_redis
from support.ports import free_port
from support.tcp_relay import tcp_relay
from support.wsclient import WsClient

import protocol as p
from server.edge.app import create_app
from server.settings import Settings

CUT_FOR = 3.0  # seconds: under the cutoff (6 s), the waiting socket stays open


@asynccontextmanager
async def app_on(redis_url: str, database_url: str) -> AsyncIterator[str]:
    """A server app over `redis_url`; its http base URL."""
    port = free_port()
    settings = Settings(port=port, redis_url=redis_url, database_url=database_url)
    runner = web.AppRunner(create_app(settings))
    await runner.setup()
    try:
        await web.TCPSite(runner, "127.0.0.1", port).start()
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


@pytest.mark.timeout(90)
async def test_a_player_waiting_on_a_cut_off_process_hears_of_the_match(tmp_path: Path) -> None:
    database = scratch_database_url()
    with durable_redis(tmp_path) as redis:
        async with (
            tcp_relay(redis.port) as relay,
            app_on(relay.redis_url, database) as cut,
            app_on(redis.url, database) as other,
            WsClient.connect(cut) as ann,
            WsClient.connect(other) as bo,
        ):
            await ann.send(p.QuickMatch(game="shaula", name="ann"))
            await ann.expect(p.Queued)
            await relay.refuse()  # the cut process's link goes: reset, and refused again
            relay.cut()
            await asyncio.sleep(0.5)
            await bo.send(p.QuickMatch(game="shaula", name="bo"))
            matched = await bo.expect(p.Matched, timeout=10)
            await asyncio.sleep(CUT_FOR)
            await relay.listen()
            heard = await ann.expect(p.Matched, timeout=15)
            assert heard.room == matched.room and heard.seat != matched.seat
            welcome = await ann.expect(p.Welcome, timeout=10)
            assert (welcome.room, welcome.seat) == (matched.room, heard.seat)
