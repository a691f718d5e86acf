"""A server on a Redis reached over a Unix socket (REDIS_URL=unix://...: the lean TCP
pieces step aside and redis-py carries everything, pub/sub included) through a Redis
restart: the race goes on, and the outage is a WARNING line, not an ERROR with a traceback
every half second from the pub/sub listener ("a client's fault is never an ERROR line",
and a Redis outage is one WARNING line per failing job: deploy/README.md)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

import pytest
from support.http import create_room
from support.own_redis import OwnRedis
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.wsclient import WsClient

import protocol as p


@pytest.mark.timeout(90)
async def test_a_redis_restart_over_a_unix_socket_is_a_warning_and_the_race_goes_on(
    tmp_path: Path,
) -> None:
    with tempfile.TemporaryDirectory(prefix="sr", dir="/tmp") as short:  # 108-byte limit
        sock = Path(short) / "redis.sock"
        redis = OwnRedis(tmp_path, "--unixsocket", str(sock), "--appendonly", "yes")
        redis.start()
        env = environment(REDIS_URL=f"unix://{sock}")
        server = ServerProcess(free_port(), env, log=tmp_path / "server.log")
        try:
            await server.start()
            room = (await create_room(server.url, game="shaula", seed=617, seats=2, countdown=0))[
                "id"
            ]
            async with WsClient.connect(server.url) as ann, WsClient.connect(server.url) as bo:
                ann_seat = (await ann.join(room, "ann")).seat
                await bo.join(room, "bo")
                for c in (ann, bo):
                    await c.send(p.Ready())
                await ann.expect(p.RaceStarted, timeout=10)
                await ann.send(p.Move(seq=1, move="t2 t5"))
                await ann.expect(p.Accepted)
                assert (await bo.expect(p.Progress)).seat == ann_seat

                redis.stop()  # SIGKILL
                await asyncio.sleep(2.0)  # the listener fails, and fails again
                await asyncio.to_thread(redis.start)

                await ann.move_until_accepted(p.Move(seq=2, move="t2 c1"), within=30)
                progress = await bo.expect(p.Progress, timeout=10)
                assert (progress.seat, progress.moves) == (ann_seat, 2)
        finally:
            await server.stop()
            redis.stop()
    log = server.text()
    print(log)
    assert " ERROR " not in log and "Traceback" not in log
    assert "server.storage.feed: pub/sub" in log  # the outage is said, once, as a WARNING
