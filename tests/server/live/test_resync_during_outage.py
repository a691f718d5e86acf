"""A `resync` asked as Redis goes away is answered (its snapshot, or `unavailable`: nothing
changed, ask again), and the socket still hears its room afterwards.

The resync let go of the socket and then attached it again, reading from Redis on the way
(the seat's moves, the snapshot): when a read failed, the socket was answered
`unavailable` but stayed out of its room, in a process that serves the room. It heard
nothing more: no `progress` of the others, so no version gap to make its client ask
again, no `finished`. Redis is killed for real and started again from its append-only
file.
"""

from __future__ import annotations

import pytest
from support.http import create_room
from support.own_redis import OwnRedis
from support.waiting import healthy
from support.wsclient import WsClient

import protocol as p


@pytest.mark.timeout(60)
async def test_a_resync_refused_in_an_outage_leaves_the_socket_in_its_room(
    own_redis: OwnRedis, own_server_url: str
) -> None:
    room = (await create_room(own_server_url, seed=617, seats=2, countdown=0))["id"]
    async with WsClient.connect(own_server_url) as ann, WsClient.connect(own_server_url) as bo:
        ann_seat = (await ann.join(room, "ann")).seat
        await bo.join(room, "bo")
        for client in (ann, bo):
            await client.send(p.Ready())
        for client in (ann, bo):
            await client.expect(p.RaceStarted, timeout=10)
        await bo.quiet(0.5)

        # Asked before the process's own check has found Redis gone: the snapshot is read
        # from it.
        own_redis.stop()
        await bo.send(p.Resync())
        # Answered either way: from what the process holds, or `unavailable`.
        answer = await bo.expect_any((p.Snapshot, p.Error), timeout=10)
        if isinstance(answer, p.Error):
            assert (answer.request, answer.code) == ("resync", "unavailable"), answer
        own_redis.start()
        await healthy(own_server_url)

        # The others' moves reach the socket again.
        await ann.move_until_accepted(p.Move(seq=1, move="t2 t5"), within=20)
        progress = await bo.expect(p.Progress, timeout=10)
        assert (progress.seat, progress.moves) == (ann_seat, 1)
