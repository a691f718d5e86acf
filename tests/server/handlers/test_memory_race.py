"""A whole race through the service, the rooms and the seat sessions on the in-memory
store: the race logic without Redis (no server, no socket: the frames each connection
would have written are read back from a fake transport)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from support.in_memory import connection, settled, world

import core
import protocol as p
from server.room.race import Race, RoomConfig


async def test_a_race_on_the_memory_store() -> None:
    store, hub, service = world()
    config = RoomConfig(game="shaula", seats=2, countdown=0.0)
    await store.create(Race(room="mem1", config=config, seed=31, created_at=time.time()))
    (ann, ann_out), (bo, bo_out) = connection("ann"), connection("bo")
    await service.handle(ann, p.Join(room="mem1", name="ann"))
    await service.handle(bo, p.Join(room="mem1", name="bo"))
    await service.handle(ann, p.Ready())
    await service.handle(bo, p.Ready())
    await settled()
    assert any(isinstance(m, p.RaceStarted) for m in ann_out.messages())
    game = core.new_game("shaula", 31)
    for seq in (1, 2, 3):
        move = game.legal_moves()[0]
        game.apply(move)
        await service.handle(ann, p.Move(seq=seq, move=move))
    await service.handle(ann, p.Move(seq=2, move="t1 c1"))  # a re-send: the same answer
    await settled()
    answers = [m for m in ann_out.messages() if isinstance(m, p.Accepted | p.Refused)]
    assert [(type(m).__name__, m.seq) for m in answers] == [
        ("Accepted", 1),
        ("Accepted", 2),
        ("Accepted", 3),
        ("Accepted", 2),
    ]
    # bo sees ann's progress, never her moves.
    seen = [m for m in bo_out.messages() if isinstance(m, p.Progress)]
    assert [(m.seat, m.moves, m.move) for m in seen] == [(0, 1, None), (0, 2, None), (0, 3, None)]
    await service.handle(bo, p.Resign())
    await service.handle(ann, p.Resign())
    await settled()
    assert any(isinstance(m, p.RaceFinished) for m in bo_out.messages())
    await hub.close()


async def test_a_join_in_flight_when_the_last_socket_leaves_gets_in_and_hears_the_room() -> None:
    """The room closed here when its last socket left while another socket's join was
    between opening the room and attaching to it: that join then waited for ever on the
    closed room's ordered task (no welcome, no snapshot, its socket's later close never
    handled), and the seat it took stayed connected for good (a tournament heat then ran
    to its time limit: tests/server/tournament/test_tournament_e2e.py)."""
    store, hub, service = world()
    config = RoomConfig(game="shaula", seats=2, countdown=0.0)
    await store.create(Race(room="mem2", config=config, seed=31, created_at=time.time()))
    (ann, _), (bo, bo_out) = connection("ann"), connection("bo")
    await service.handle(ann, p.Join(room="mem2", name="ann"))
    # bo's join has the room open here and waits for its write; meanwhile ann's socket,
    # the room's last one here, closes.
    real_transact, gate, held = store.transact, asyncio.Event(), asyncio.Event()

    async def slow_transact(*args: Any, **kwargs: Any) -> Any:
        if not held.is_set():
            held.set()
            await gate.wait()
        return await real_transact(*args, **kwargs)

    store.transact = slow_transact  # type: ignore[method-assign]
    joining = asyncio.create_task(service.handle(bo, p.Join(room="mem2", name="bo")))
    await held.wait()
    await service.closed(ann)
    gate.set()
    await asyncio.wait_for(joining, 5)
    await service.handle(bo, p.Ready())
    await settled()
    kinds = [type(m) for m in bo_out.messages()]
    assert kinds[:2] == [p.Welcome, p.Snapshot], kinds
    assert p.PlayerReady in kinds, kinds  # the room's events still reach bo
    await service.closed(bo)
    await settled()
    assert hub.rooms == {}  # and the room closes here once bo has gone too
    await hub.close()
