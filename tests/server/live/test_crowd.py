"""A crowd arriving together, over a real Redis: every spectator gets the room as it is,
and the room builds that snapshot once (reading every seat's moves from Redis and
replaying every board for each spectator would hold the room's events, the racers' too,
while 1,000 came in). The crowd's queue on its own: tests/server/live/test_spectators.py."""

from __future__ import annotations

import asyncio
from typing import Any

from support.http import create_room
from support.servers import served_app
from support.wsclient import WsClient, race_alone

import protocol as p
from server.edge.app_keys import STORE


async def test_spectators_of_an_unchanged_room_share_one_snapshot(redis_url: str) -> None:
    async with served_app(redis_url) as (app, url):
        room = (await create_room(url, seed=4, seats=1, countdown=0))["id"]
        store = app[STORE]
        reads: list[Any] = []
        moves = store.moves

        async def counted(room_id: str, seat: int) -> list[tuple[float, str]]:
            reads.append((room_id, seat))
            return await moves(room_id, seat)

        store.moves = counted  # type: ignore[method-assign]
        async with WsClient.connect(url) as ann:
            await race_alone(ann, room)
            await ann.send(p.Move(seq=1, move="t1 c1"))
            await ann.expect(p.Accepted)
            reads.clear()  # the racer's own seat was read when it sat down
            snapshots = []
            for _ in range(5):
                async with WsClient.connect(url) as spy:
                    await spy.send(p.Watch(room=room))
                    snapshots.append(await spy.expect(p.Snapshot))
            assert all(s == snapshots[0] for s in snapshots)
            assert snapshots[0].boards is not None and len(reads) == 1  # one seat, read once
            # The room changes: the next spectator sees the move, from a new snapshot.
            await ann.send(p.Move(seq=2, move="t2 c2"))
            await ann.expect(p.Accepted)
            async with WsClient.connect(url) as spy:
                await spy.send(p.Watch(room=room))
                later = await spy.expect(p.Snapshot)
            assert later.version == snapshots[0].version + 1 and len(reads) == 2
            assert later.boards is not None and later.boards != snapshots[0].boards


async def test_a_spectator_gets_nothing_before_its_snapshot(redis_url: str) -> None:
    """A spectator came while the crowd's queue held an event not yet due (the spectator
    delay), and the event fell due while its snapshot was being built from Redis: it was
    sent that event first, before any snapshot (docs/protocol.md: `watch` is answered by
    `welcome` and a snapshot, then the events after it)."""
    async with served_app(redis_url) as (app, url):
        room = (await create_room(url, seed=4, seats=1, countdown=0, spectator_delay=1))["id"]
        store = app[STORE]
        moves = store.moves
        held = False

        async def slow(room_id: str, seat: int) -> list[tuple[float, str]]:
            if held:  # the snapshot's read, past the moment the queued event is due
                await asyncio.sleep(1.5)
            return await moves(room_id, seat)

        store.moves = slow  # type: ignore[method-assign]
        async with WsClient.connect(url) as ann, WsClient.connect(url) as first:
            await race_alone(ann, room)
            await first.send(p.Watch(room=room))
            await first.expect(p.Snapshot)
            await ann.send(p.Move(seq=1, move="t1 c1"))
            await ann.expect(p.Accepted)  # its event waits a second in the crowd's queue
            held = True
            async with WsClient.connect(url) as spy:
                await spy.send(p.Watch(room=room))
                assert isinstance(await spy.recv(timeout=5.0), p.Welcome)
                got = await spy.recv(timeout=5.0)
                assert isinstance(got, p.Snapshot), got
                later = await spy.expect(p.Progress, timeout=5.0)
                assert later.moves == 1  # after the snapshot, every event in order (WsClient)
