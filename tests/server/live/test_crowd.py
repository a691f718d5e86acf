"""A crowd arriving together, over a real Redis: every spectator gets the room as it is,
and the room builds that snapshot once (reading every seat's moves from Redis and
replaying every board for each spectator would hold the room's events, the racers' too,
while 1,000 came in). The crowd's queue on its own: tests/server/live/test_spectators.py."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from support.databases import scratch_database_url
from support.http import create_room
from support.ports import free_port
from support.wsclient import WsClient, race_alone

import protocol as p
from server.edge.app import create_app
from server.edge.app_keys import STORE
from server.settings import Settings


async def test_spectators_of_an_unchanged_room_share_one_snapshot(redis_url: str) -> None:
    port = free_port()
    app = create_app(Settings(database_url=scratch_database_url(), port=port, redis_url=redis_url))
    runner = web.AppRunner(app, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    url = f"http://127.0.0.1:{port}"
    try:
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
    finally:
        await runner.cleanup()
