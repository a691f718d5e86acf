"""A reconnect whose `join` the server refuses for now (`unavailable`: Redis is down) must
not strand the terminal client: it joins again, with backoff, once the server can take it,
and a move refused `not_joined` meanwhile is played after the rejoin, exactly once.

The fault is done for real: Redis is killed while the player's socket is dropped, so the
reconnect's join reaches a server that cannot read the room. Another socket on the same
process keeps the room open there, so the join fails at once (no subscribe to wait for).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import pytest
from support.http import create_room
from support.own_redis import OwnRedis
from support.wsclient import WsClient

import core
import protocol as p
from client_cli.seat import Seat


async def until(done: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not done():
            await asyncio.sleep(0.02)


@pytest.mark.timeout(60)
async def test_a_refused_rejoin_is_tried_again_and_the_move_is_played_once(
    own_redis: OwnRedis, own_server_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    room = (await create_room(own_server_url, seed=617, seats=1, countdown=0))["id"]
    seat = Seat(own_server_url, room, "ann")
    await seat.start()
    await seat.start_now()
    await until(lambda: seat.view.phase == "running" and seat.view.board is not None)
    game = core.new_game("shaula", 617)
    async with WsClient.connect(own_server_url) as spectator:  # keeps the room open on the process
        await spectator.send(p.Watch(room=room))
        await spectator.expect(p.Snapshot)
        assert (await seat.move("t8 c1")).ok
        game.apply("t8 c1")

        own_redis.stop()
        errors = len(seat.errors)
        await seat.link.drop()
        # The move waits for the link, goes out right after the reconnect's join, which
        # the server refuses (`unavailable`); the move is then refused `not_joined`.
        move = asyncio.create_task(seat.move("t2 t5"))
        await until(lambda: any(e.request == "join" for e in seat.errors[errors:]))
        refused = next(e for e in seat.errors[errors:] if e.request == "join")
        assert refused.code == p.ErrorCode.UNAVAILABLE
        await asyncio.sleep(0.5)  # a rejoin or two while Redis is still down
        await asyncio.to_thread(own_redis.start)  # from its append-only file

        outcome = await asyncio.wait_for(move, 20)
        assert outcome.ok, outcome
        assert outcome.moves == ["t2 t5"]
        game.apply("t2 t5")
        then = await seat.move("t1 c2")  # and the seat plays on
        assert then.ok, then
        game.apply("t1 c2")

    # What the server holds: each move once, in order, and the board they make.
    async with WsClient.connect(own_server_url) as again:
        await again.join(room, token=seat.view.token)
        snapshot = await again.expect(p.Snapshot)
    assert snapshot.moves == ["t8 c1", "t2 t5", "t1 c2"]
    assert snapshot.board == game.state("player")
    await seat.close()
    # The outage is the server's WARNING lines (the socket closed while Redis was down
    # among them), never an ERROR with a traceback.
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@pytest.mark.timeout(60)
async def test_a_first_join_refused_for_now_is_tried_again(
    own_redis: OwnRedis, own_server_url: str
) -> None:
    # `solrace play ROOM` while the server's Redis is down: the join waits for it
    # (within the answer deadline) instead of failing at once.
    room = (await create_room(own_server_url, seed=617, seats=2))["id"]
    async with WsClient.connect(own_server_url) as spectator:  # keeps the room open on the process
        await spectator.send(p.Watch(room=room))
        await spectator.expect(p.Snapshot)
        own_redis.stop()
        seat = Seat(own_server_url, room, "ann")
        starting = asyncio.create_task(seat.start())
        await until(lambda: any(e.request == "join" for e in seat.errors))
        assert seat.errors[0].code == p.ErrorCode.UNAVAILABLE
        assert not starting.done()
        await asyncio.to_thread(own_redis.start)
        await asyncio.wait_for(starting, 20)
        assert seat.view.seat == 0 and seat.view.token
        assert (await spectator.expect(p.PlayerJoined)).name == "ann"
    await seat.close()
