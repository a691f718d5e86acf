"""A room's deadline that falls while Redis is down waits for it, and says so once.

The finish at a time limit is tried again every TICK_RETRY seconds until Redis answers
(server/live/hub.py); each attempt logged a WARNING line of its own, one a second per
room for as long as the outage lasted, where an outage is one line per failing job
(deploy/README.md). Redis is killed for real and started again from its append-only file.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from support.http import create_room
from support.own_redis import OwnRedis
from support.servers import MakeServer
from support.wsclient import WsClient

import protocol as p
from server.live.hub import TICK_RETRY


@pytest.mark.timeout(60)
async def test_a_deadline_waiting_for_redis_is_one_warning_and_the_race_ends_after(
    own_redis: OwnRedis, make_own_server: MakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = await make_own_server(redis_cutoff=60)  # the sockets stay open
    room = (await create_room(url, seats=2, countdown=0, time_limit=1))["id"]
    async with WsClient.connect(url) as ann, WsClient.connect(url) as bo:
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        for client in (ann, bo):
            await client.send(p.Ready())
        await ann.expect(p.RaceStarted, timeout=10)
        own_redis.stop()
        # The time limit passes, and its finish is tried again several times meanwhile.
        await asyncio.sleep(1 + 5 * TICK_RETRY)
        own_redis.start()
        finished = await ann.expect(p.RaceFinished, timeout=15)
        assert finished.results
    waits = [r for r in caplog.records if "its deadline waits for Redis" in r.getMessage()]
    assert [r.levelno for r in waits] == [logging.WARNING], [r.getMessage() for r in waits]
