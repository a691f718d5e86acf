"""A quick-match ticket whose socket closed while Redis was down leaves the queue once
Redis answers again (docs/protocol.md section 4, `quick_cancel`: closing the socket leaves
the queue).

The close took the ticket out of the queue with one write, which failed in the outage and
was not tried again: the ticket stayed, of a process still alive, and the next player to
ask for the game was paired with nobody (`matched`, a race begun against a seat that
never came, won only when its grace ran out). Redis is killed for real and started again
from its append-only file.
"""

from __future__ import annotations

import asyncio

import pytest
from redis.asyncio import Redis
from support.own_redis import OwnRedis
from support.servers import MakeServer
from support.waiting import healthy
from support.wsclient import WsClient

import protocol as p
from server.storage.keys import quick_queue


@pytest.mark.timeout(60)
async def test_a_ticket_closed_in_an_outage_is_not_paired_after_it(
    own_redis: OwnRedis, make_own_server: MakeServer
) -> None:
    url = await make_own_server(redis_cutoff=60)  # nothing handed on: the close is the client's
    async with WsClient.connect(url) as gone:
        await gone.send(p.QuickMatch(game="shaula", name="gone"))
        await gone.expect(p.Queued)
        own_redis.stop()
    await asyncio.sleep(1)  # its clean-up meets Redis down
    own_redis.start()
    await healthy(url)
    # Out of the queue once Redis answers: tried again as the feed comes back, and with
    # the pairing's retries (a newcomer in the second before that could still meet it).
    redis = Redis.from_url(own_redis.url)
    try:
        async with asyncio.timeout(15):
            while await redis.llen(quick_queue("shaula")):
                await asyncio.sleep(0.1)
    finally:
        await redis.aclose()
    async with WsClient.connect(url) as newcomer:
        await newcomer.send(p.QuickMatch(game="shaula", name="newcomer"))
        await newcomer.expect(p.Queued)
        assert not [m for m in await newcomer.quiet(3) if isinstance(m, p.Matched)]
