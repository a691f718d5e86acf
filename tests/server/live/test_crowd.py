"""A crowd arriving together: every spectator gets the room as it is, and the room builds
that snapshot once (it used to read every seat's moves from Redis and replay every board
for each spectator, holding the room's events, the racers' too, while 1,000 came in)."""

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


async def test_a_crowd_is_written_a_slice_per_loop_turn_after_the_racers() -> None:
    """Between two slices of a crowd's fan-out the loop reads the racers' sockets again;
    each slice's spectators are written at once, the rest wait for the next turns; the
    racers' frames of the turn the event came in (the mover's answer too) go first."""
    import asyncio

    from support.in_memory import connection

    from server.live.connection import Flusher, Outgoing
    from server.live.hub import CROWD_CHUNK, LocalRoom

    room = LocalRoom(None, "crowd")  # type: ignore[arg-type]
    flusher = Flusher()
    crowd = [connection(flusher=flusher) for _ in range(2 * CROWD_CHUNK + 5)]
    room.spectators = {conn for conn, _ in crowd}
    racer, racer_transport = connection(flusher=flusher)
    order: list[bytes] = []  # every write, whoever's
    for _, transport in [*crowd, (racer, racer_transport)]:
        transport.write = lambda data, mine=transport.writes: (  # type: ignore[method-assign]
            order.append(data),
            mine.append(data),
        )
    # One turn: the event reaches the racers and the crowd, then the mover's answer.
    racer.send_frame(b"progress ")
    room.crowd.append((0.0, 1, Outgoing(p.Pong(id=1, server_time=0.0))))
    room._arm_crowd()
    racer.send_frame(b"accepted")
    turns = []
    for _ in range(4):  # a slice every other turn
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        turns.append(sum(1 for _, transport in crowd if transport.writes))
    assert order[0] == b"progress accepted"  # the racer's, in one write, before the crowd
    assert turns == [CROWD_CHUNK, 2 * CROWD_CHUNK, len(crowd), len(crowd)]
    assert all(len(transport.writes) == 1 for _, transport in crowd)  # once each
