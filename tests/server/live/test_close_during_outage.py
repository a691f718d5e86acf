"""A player whose socket closes while Redis is down must still be seen to have gone.

The close could not be written then (the cleanup's transition failed: an outage), so the
seat kept the socket in Redis as if it were open, in a process that is alive: the reaper
only let go of sockets of dead processes. The player was then never away, never
forfeited, and a race without a time limit waited for them forever. The fault is done for
real: Redis is killed, the socket closed, Redis started again from its append-only file.
And a `lobby_watch` asked while Redis is killed or frozen is answered soon, not held.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable

import pytest
from support.http import create_room
from support.own_redis import OwnRedis
from support.wsclient import WsClient

import protocol as p
from server.edge.sweeper import OpenSockets


async def seen(client: WsClient, wanted: Callable[[p.Message], bool], timeout: float) -> p.Message:
    """The first message `wanted` (whatever comes before it, catch-up snapshots too)."""
    async with asyncio.timeout(timeout):
        while not wanted(message := await client.recv(timeout)):
            pass
    return message


@pytest.mark.timeout(60)
async def test_a_socket_closed_during_an_outage_is_let_go_once_redis_is_back(
    own_redis: OwnRedis, own_server_url: str
) -> None:
    room = (await create_room(own_server_url, seats=2, countdown=0, grace=1))["id"]
    async with WsClient.connect(own_server_url) as bo, contextlib.AsyncExitStack() as stack:
        ann = await stack.enter_async_context(WsClient.connect(own_server_url))
        ann_seat = (await ann.join(room, "ann")).seat
        await bo.join(room, "bo")
        for c in (ann, bo):
            await c.send(p.Ready())
        await bo.expect(p.RaceStarted, timeout=10)

        own_redis.stop()  # SIGKILL
        await stack.aclose()  # ann's socket closes during the outage
        await asyncio.sleep(1.0)  # the server's cleanup of that socket has failed by now
        await asyncio.to_thread(own_redis.start)

        # Once Redis answers again, ann is seen to have gone: away, then out after the
        # grace. bo, who kept playing, is not touched.
        away = await seen(
            bo, lambda m: isinstance(m, p.Presence) and m.seat == ann_seat, timeout=20
        )
        assert isinstance(away, p.Presence) and not away.connected and away.grace_until
        out = await seen(
            bo, lambda m: isinstance(m, p.PlayerOut) and m.seat == ann_seat, timeout=10
        )
        assert isinstance(out, p.PlayerOut) and out.reason == "forfeit"


def test_a_socket_opened_after_the_reading_is_not_taken_for_a_closed_one() -> None:
    """The reaper reads this process's open sockets once a sweep; one opened since (and
    seated meanwhile) must count as open, not be let go."""

    class Socket:
        def __init__(self, id: str) -> None:
            self.id = id

    sockets = {Socket("p-1")}
    open_here = OpenSockets(sockets)  # type: ignore[arg-type]
    sockets.add(Socket("p-2"))
    assert "p-1" in open_here and "p-2" in open_here
    assert "p-3" not in open_here


@pytest.mark.timeout(90)
@pytest.mark.parametrize("fault", ["killed", "frozen"])
async def test_lobby_watch_in_an_outage_is_answered_unavailable_soon(
    own_redis: OwnRedis, own_server_url: str, fault: str
) -> None:
    """`lobby_watch` while Redis is away is answered `unavailable` within seconds, and the
    socket's next message is not held behind it (it was answered only as the cut-off
    closed the socket, and a `ping` sent after it waited as long)."""
    assert own_redis.proc is not None
    if fault == "killed":
        own_redis.stop()
    else:
        own_redis.proc.send_signal(signal.SIGSTOP)
    try:
        async with WsClient.connect(own_server_url) as watcher:
            started = asyncio.get_running_loop().time()
            await watcher.send(p.LobbyWatch())
            await watcher.send(p.Ping(id=7))
            answer = await watcher.expect_any((p.Error, p.LobbyState), timeout=5)
            assert isinstance(answer, p.Error) and answer.code == "unavailable", answer
            pong = await watcher.expect(p.Pong, timeout=2)
            assert pong.id == 7
            assert asyncio.get_running_loop().time() - started < 5
    finally:
        if fault == "killed":
            await asyncio.to_thread(own_redis.start)
        else:
            own_redis.proc.send_signal(signal.SIGCONT)
    # Redis back: the lobby is read again for the next watcher.
    async with asyncio.timeout(30):
        while True:
            async with WsClient.connect(own_server_url) as watcher:
                await watcher.send(p.LobbyWatch())
                if isinstance(await watcher.expect_any((p.Error, p.LobbyState)), p.LobbyState):
                    break
            await asyncio.sleep(0.5)
