"""SIGTERM drains: /healthz says so (503) while everything is still served, HAProxy takes
the process out, and only then are the sockets closed with 1001 (GOING_AWAY)."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

from balancers import haproxy, haproxy_config, server_states
from server_processes import ServerProcess, environment
from tests_support import free_port
from wsclient import WsClient, create_room, get_json

import protocol as p

DRAIN = 6.0  # seconds: well beyond HAProxy's two failed checks a second apart


async def wait_for_state(sock: Path, server: str, state: str, limit: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + limit
    while not (states := server_states(sock))[server].startswith(state):
        assert asyncio.get_running_loop().time() < deadline, states
        await asyncio.sleep(0.1)


async def test_sigterm_drains_then_closes_with_1001(redis_url: str, tmp_path: Path) -> None:
    port, front = free_port(), free_port()
    env = environment(REDIS_URL=redis_url, SOLRACE_DRAIN=str(DRAIN))
    server = ServerProcess(port, env, log=tmp_path / "server.log")
    config = haproxy_config(tmp_path, front, [port, free_port(), free_port()])
    sock = tmp_path / "stats.sock"
    await server.start()
    try:
        with haproxy(config, sock, front, tmp_path / "haproxy.log"):
            await wait_for_state(sock, "s1", "UP")
            room = (await create_room(server.url, seed=617, seats=2))["id"]
            async with WsClient.connect(server.url) as ann:
                await ann.join(room, "ann")
                assert server.process is not None
                server.process.send_signal(signal.SIGTERM)
                status, health = await get_json(f"{server.url}/healthz")
                assert status == 503 and health["draining"] is True
                assert "draining" in health["reason"]
                await wait_for_state(sock, "s1", "DOWN")
                # Out of the balancer, and still serving: the open socket, a new socket,
                # plain HTTP.
                assert server.process.returncode is None
                await ann.send(p.Ready())
                assert (await ann.expect(p.PlayerReady)).ready is True
                async with WsClient.connect(server.url) as bo:
                    assert (await bo.join(room, "bo")).seat == 1
                status, _ = await get_json(f"{server.url}/rooms/{room}")
                assert status == 200
                # Then the sockets close with GOING_AWAY and the process exits.
                await asyncio.wait_for(ann.ws.wait_closed(), DRAIN + 10)
                assert ann.ws.close_code == 1001
            assert await asyncio.wait_for(server.process.wait(), 20) == 0
    finally:
        await server.stop()
        print(server.text())
    assert "draining for 6 s" in server.text()


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
