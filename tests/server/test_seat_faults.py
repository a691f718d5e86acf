"""Seat faults that need a fault done for real: a server process SIGKILLed while
its player already has a socket elsewhere (1), and Redis going away under a move (4)."""

from __future__ import annotations

import asyncio
import contextlib
import signal

from aiohttp import web
from support.databases import scratch_database_url
from support.http import create_room, get_json
from support.own_redis import OwnRedis
from support.ports import free_port
from support.server_processes import environment, server_process
from support.servers import MakeServer
from support.wsclient import WsClient

import core
import protocol as p
from server.edge.app import create_app
from server.edge.sweeper import reap_every
from server.settings import Settings

TTL = 4.0  # seconds a process is thought alive after its last heartbeat (process_ttl)


async def test_1_a_player_on_a_second_process_is_not_forfeited_when_the_first_dies(
    redis_url: str, make_server: MakeServer
) -> None:
    # Processes taken for dead after TTL seconds (not the default's 10): the test plays on
    # past the reaping without waiting out the default periods.
    survivor = await make_server(process_ttl=TTL)
    room = (await create_room(survivor, seed=31, seats=1, grace=1.0))["id"]
    game = core.new_game("shaula", 31)
    port = free_port()
    env = environment(REDIS_URL=redis_url, SOLRACE_PROCESS_TTL=str(TTL))
    async with server_process(port, env) as process, contextlib.AsyncExitStack() as stack:
        old = await stack.enter_async_context(WsClient.connect(f"http://127.0.0.1:{port}"))
        token = (await old.join(room, "ann")).token
        async with WsClient.connect(survivor) as new:
            # The normal path after a network change: a new socket, the old not gone yet.
            await new.join(room, token=token)
            await old.send(p.Start())
            await new.expect(p.RaceStarted)
            process.send_signal(signal.SIGKILL)
            await process.wait()
            # Plays on past the reaping of the dead process and the grace period after it.
            loop = asyncio.get_running_loop()
            until = loop.time() + TTL + 2 * reap_every(TTL) + 2.5  # seen missing twice
            seq = 0
            while loop.time() < until:
                seq += 1
                move = game.legal_moves()[0] if seq % 2 else "undo"
                if move == "undo":
                    game.undo()
                else:
                    game.apply(move)
                await new.send(p.Move(seq=seq, move=move) if move != "undo" else p.Undo(seq=seq))
                answer = await new.expect(p.Accepted | p.Refused)  # type: ignore[arg-type]
                assert isinstance(answer, p.Accepted), (seq, answer)
                await asyncio.sleep(1.0)
            assert not [m for m in await new.everything() if isinstance(m, p.PlayerOut)]
    status, body = await get_json(f"{survivor}/rooms/{room}")
    assert status == 200 and body["room"]["players"][0]["out"] is None


# ------------------------------------------------------------------ symptom 4


async def test_4_a_move_during_a_redis_outage_is_refused_unavailable_then_accepted(
    own_redis: OwnRedis,
) -> None:
    port = free_port()
    runner = web.AppRunner(
        create_app(
            Settings(database_url=scratch_database_url(), port=port, redis_url=own_redis.url)
        )
    )
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    base = f"http://127.0.0.1:{port}"
    try:
        room = (await create_room(base, seed=31, seats=1))["id"]
        game = core.new_game("shaula", 31)
        async with WsClient.connect(base) as a:
            await a.join(room, "ann")
            await a.send(p.Start())
            await a.expect(p.RaceStarted)
            first = game.legal_moves()[0]
            game.apply(first)
            await a.send(p.Move(seq=1, move=first))
            assert (await a.expect(p.Accepted)).moves == 1
            own_redis.stop()
            second = game.legal_moves()[0]
            await a.send(p.Move(seq=2, move=second))
            refused = await a.expect(p.Refused | p.Error, timeout=15)  # type: ignore[arg-type]
            assert isinstance(refused, p.Refused), refused
            assert (refused.seq, refused.code) == (2, p.ErrorCode.UNAVAILABLE)
            own_redis.start()  # from its append-only file: move 1 is still there
            # The same seq, on the same socket, until Redis answers.
            answer = await a.move_until_accepted(p.Move(seq=2, move=second), 15, pause=0.2)
            assert (answer.seq, answer.moves, answer.move) == (2, 2, second)
            game.apply(second)
            third = game.legal_moves()[0]
            await a.send(p.Move(seq=3, move=third))
            assert (await a.expect(p.Accepted)).moves == 3
    finally:
        await runner.cleanup()
