"""A server process that stalls (SIGSTOP: a stuck host, a VM paused, a swap storm) for
longer than its heartbeat lives is taken for dead by the others, who let go of its sockets:
the seats of its players go away, and their grace clocks run. When it runs again its
sockets are still open and its players play on, so it must not leave them racing on
sockets the room no longer counts: they were forfeited when the grace ran out, while
their moves were being accepted. Done for real, with two processes on one Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

import pytest
from support.http import create_room
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.wsclient import WsClient
from websockets.exceptions import ConnectionClosed

import protocol as p

GRACE = 8.0
LINE = ["t2 c1", "t8 t2", "t8 t6", "t4 c3", "t4 t5", "t4 c2", "t4 c4"]  # Shaula 617


@pytest.mark.timeout(120)
async def test_a_player_on_a_process_taken_for_dead_is_not_forfeited_once_it_runs_again(
    redis_url: str, tmp_path: Path
) -> None:
    # Taken for dead after 4 s of silence (process_ttl; the default is 10 s).
    env = environment(REDIS_URL=redis_url, SOLRACE_PROCESS_TTL="4")
    stalling = ServerProcess(free_port(), env, log=tmp_path / "stalling.log")
    other = ServerProcess(free_port(), env, log=tmp_path / "other.log")
    try:
        await asyncio.gather(stalling.start(), other.start())
        assert stalling.process is not None
        room = (
            await create_room(other.url, game="shaula", seed=617, seats=2, countdown=0, grace=GRACE)
        )["id"]
        async with WsClient.connect(other.url) as bo, contextlib.AsyncExitStack() as sockets:
            ann = await sockets.enter_async_context(WsClient.connect(stalling.url))
            welcome = await ann.join(room, "ann")
            ann_seat, token = welcome.seat, welcome.token
            await bo.join(room, "bo")
            for c in (ann, bo):
                await c.send(p.Ready())
            await ann.expect(p.RaceStarted, timeout=10)
            await bo.expect(p.RaceStarted, timeout=10)
            await ann.send(p.Move(seq=1, move="t2 t5"))
            await ann.expect(p.Accepted)

            os.kill(stalling.process.pid, signal.SIGSTOP)
            try:
                # The other process reaps the silent one: ann's seat is away.
                while True:
                    event = await bo.expect(p.Presence, timeout=40)
                    if event.seat == ann_seat and not event.connected:
                        break
            finally:
                os.kill(stalling.process.pid, signal.SIGCONT)

            # ann plays on as the protocol says: on her socket while it is open; after a
            # close, on a new one with her token (any process will do).
            seq = 1
            for move in LINE:
                seq += 1
                while True:
                    try:
                        await ann.send(p.Move(seq=seq, move=move))
                        answer = await ann.expect_any((p.Accepted, p.Refused), timeout=10)
                        break
                    except ConnectionClosed as closed:
                        assert closed.rcvd is not None and closed.rcvd.code == 1001, closed
                        ann = await sockets.enter_async_context(WsClient.connect(other.url))
                        await ann.join(room, token=token, since=0)
                assert isinstance(answer, p.Accepted), answer
                await asyncio.sleep(GRACE / 4)  # all in all well past the grace period

            seen = await bo.everything(timeout=1.0)
            outs = [m for m in seen if isinstance(m, p.PlayerOut) and m.seat == ann_seat]
            assert outs == [], outs
            back = [m for m in seen if isinstance(m, p.Presence) and m.seat == ann_seat]
            assert back and back[-1].connected, back
            # End the race: a running room with sockets of a killed process would be reaped
            # by other tests' reapers on the session's Redis.
            for c in (ann, bo):
                await c.send(p.Resign())
            await bo.expect(p.RaceFinished, timeout=10)
    finally:
        stalling.kill()
        await asyncio.gather(stalling.stop(), other.stop())
        print(stalling.text()[-4000:])
