"""A player waiting for a quick match on a process that dies (SIGKILL) is not waiting any
more: their socket is gone with it. A player who asks for a quick match after the dead
process's heartbeat has run out must not be paired with that ticket (they raced nobody,
and the one who left was seated in a race they never heard of), but wait for a live one.
Done for real, with two server processes on one Redis."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.players import new_player
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


@pytest.mark.timeout(120)
async def test_a_player_paired_as_their_process_died_is_sent_to_that_race(
    redis_url: str, tmp_path: Path
) -> None:
    """Between a process's death and the end of its heartbeat a partner can still be
    paired with the ticket of a player waiting there, and seated with them in a race
    their socket never heard of. When that player asks again (as a client does after a
    lost connection), they are sent to that race's seat, not queued for another one
    while the first forfeits them for an outage."""
    env = environment(REDIS_URL=redis_url, SOLRACE_PROCESS_TTL="30", SOLRACE_GRACE="60")
    dying = ServerProcess(free_port(), env, log=tmp_path / "dying.log")
    other = ServerProcess(free_port(), env, log=tmp_path / "other.log")
    await asyncio.gather(dying.start(), other.start())
    try:
        key, ann = await new_player(other.url, "ann")
        async with WsClient.connect(dying.url) as first:
            await first.send(p.Identify(key=key))
            await first.expect(p.Identified)
            await first.send(p.QuickMatch(game="stalactites"))
            await first.expect(p.Queued)
            dying.kill()
        async with WsClient.connect(other.url) as bo:
            await bo.send(p.QuickMatch(game="stalactites", name="bo"))
            matched_bo = await bo.expect(p.Matched, timeout=10)  # with ann's dead ticket
            async with WsClient.connect(other.url) as again:
                await again.send(p.Identify(key=key))
                await again.expect(p.Identified)
                await again.send(p.QuickMatch(game="stalactites"))
                await again.expect(p.Queued)
                matched_ann = await again.expect(p.Matched, timeout=10)
                assert (matched_ann.room, matched_ann.seat) == (
                    matched_bo.room,
                    1 - matched_bo.seat,
                )
                welcome = await again.expect(p.Welcome)
                assert (welcome.room, welcome.seat) == (matched_bo.room, matched_ann.seat)
                snapshot = await again.expect(p.Snapshot)
                [mine] = [s for s in snapshot.room["players"] if s["seat"] == matched_ann.seat]
                assert (mine["player"], mine["connected"], mine["out"]) == (ann["id"], True, None)
                seen = await bo.quiet(0.5)
                assert not [m for m in seen if isinstance(m, p.PlayerOut)], seen
    finally:
        dying.kill()
        await other.stop()
