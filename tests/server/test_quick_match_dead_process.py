"""A player waiting for a quick match on a process that dies (SIGKILL) is not waiting any
more: their socket is gone with it. A player who asks for a quick match after the dead
process's heartbeat has run out must not be paired with that ticket (they raced nobody,
and the one who left was seated in a race they never heard of), but wait for a live one.
Done for real, with two server processes on one Redis."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.wsclient import WsClient

import protocol as p

TTL = 2.0  # process_ttl: a silent process is taken for dead after this (the default is 10 s)


@pytest.mark.timeout(90)
async def test_a_ticket_of_a_dead_process_is_not_paired(redis_url: str, tmp_path: Path) -> None:
    env = environment(REDIS_URL=redis_url, SOLRACE_PROCESS_TTL=str(TTL))
    dying = ServerProcess(free_port(), env, log=tmp_path / "dying.log")
    other = ServerProcess(free_port(), env, log=tmp_path / "other.log")
    await asyncio.gather(dying.start(), other.start())
    try:
        async with WsClient.connect(dying.url) as ann:
            await ann.send(p.QuickMatch(game="stalactites", name="ann"))
            await ann.expect(p.Queued)
            dying.kill()
        await asyncio.sleep(TTL + 1.0)  # its heartbeat is gone
        async with WsClient.connect(other.url) as bo, WsClient.connect(other.url) as cy:
            await bo.send(p.QuickMatch(game="stalactites", name="bo"))
            await bo.expect(p.Queued)
            early = await bo.quiet(1.0)
            assert not [m for m in early if isinstance(m, p.Matched)], early
            await cy.send(p.QuickMatch(game="stalactites", name="cy"))
            matched_bo = await bo.expect(p.Matched, timeout=10)
            matched_cy = await cy.expect(p.Matched, timeout=10)
            assert matched_bo.room == matched_cy.room
            assert {matched_bo.seat, matched_cy.seat} == {0, 1}
    finally:
        dying.kill()
        await other.stop()
