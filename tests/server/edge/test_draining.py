"""SIGTERM drains: /healthz says so (503) while the open sockets and HTTP are still served
and new WebSockets are sent elsewhere (503, which HAProxy retries on another process),
HAProxy takes the process out, and only then are the sockets closed with 1001."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path

import pytest
from support.balancers import haproxy, haproxy_config, server_states, wait_for_state
from support.http import create_room, get_json
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.wsclient import WsClient
from websockets.exceptions import InvalidStatus

import protocol as p

DRAIN = 6.0  # seconds: well beyond HAProxy's two failed checks a second apart


async def test_sigterm_drains_then_closes_with_1001(redis_url: str, tmp_path: Path) -> None:
    front = free_port()
    env = environment(REDIS_URL=redis_url, SOLRACE_DRAIN=str(DRAIN))
    going = ServerProcess(free_port(), env, log=tmp_path / "going.log")
    staying = ServerProcess(free_port(), env, log=tmp_path / "staying.log")
    config = haproxy_config(tmp_path, front, [going.port, staying.port, free_port()])
    sock = tmp_path / "stats.sock"
    await going.start()
    await staying.start()
    try:
        with haproxy(config, sock, front, tmp_path / "haproxy.log"):
            await wait_for_state(sock, "s1", "UP")
            await wait_for_state(sock, "s2", "UP")
            room = (await create_room(going.url, seed=617, seats=2))["id"]
            async with WsClient.connect(going.url) as ann:
                await ann.join(room, "ann")
                assert going.process is not None
                going.process.send_signal(signal.SIGTERM)
                status, health = await get_json(f"{going.url}/healthz")
                assert status == 503 and health["draining"] is True
                assert "draining" in health["reason"]
                # Before HAProxy's checks notice (two failures a second apart), new players
                # reach it: each is answered 503 and sent to the other process at once.
                assert server_states(sock)["s1"].startswith("UP")
                async with contextlib.AsyncExitStack() as watchers:
                    for _ in range(6):
                        spy = await watchers.enter_async_context(
                            WsClient.connect(f"http://127.0.0.1:{front}")
                        )
                        await spy.send(p.Watch(room=room))
                        await spy.expect(p.Snapshot)
                    assert await going.connections() == 1  # ann alone
                    assert await staying.connections() == 6
                with pytest.raises(InvalidStatus) as refused:
                    async with WsClient.connect(going.url):
                        pass
                assert refused.value.response.status_code == 503
                await wait_for_state(sock, "s1", "DOWN")
                # Out of the balancer, and still serving what it has: the open socket, HTTP.
                assert going.process.returncode is None
                await ann.send(p.Ready())
                assert (await ann.expect(p.PlayerReady)).ready is True
                status, _ = await get_json(f"{going.url}/rooms/{room}")
                assert status == 200
                # Then the sockets close with GOING_AWAY and the process exits.
                await asyncio.wait_for(ann.ws.wait_closed(), DRAIN + 10)
                assert ann.ws.close_code == 1001
            assert await asyncio.wait_for(going.process.wait(), 20) == 0
    finally:
        await going.stop()
        await staying.stop()
        print(going.text())
    assert "draining for 6 s" in going.text()
    assert " closed: code 1001 " in going.text()  # the code it closed them with


async def test_a_second_signal_cuts_the_drain_short(redis_url: str, tmp_path: Path) -> None:
    env = environment(REDIS_URL=redis_url, SOLRACE_DRAIN="600")
    server = ServerProcess(free_port(), env, log=tmp_path / "server.log")
    await server.start()
    try:
        assert server.process is not None
        server.process.send_signal(signal.SIGTERM)
        while (await get_json(f"{server.url}/healthz"))[0] != 503:
            await asyncio.sleep(0.05)
        server.process.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(server.process.wait(), 20) == 0
    finally:
        await server.stop()
