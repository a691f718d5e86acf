"""A process cut off from Redis hands its players on (server/edge/redis_watch.py): three
`python -m server` processes behind the shipped HAProxy config, bots racing through it with
the terminal client's own reconnecting `Seat`, rooms with a short grace.

- One process's link to Redis is cut (a TCP relay between it and Redis stops relaying,
  without closing anything: a partition) for longer than the others take to reap it plus
  the grace, while the others reach Redis. The cut process closes its sockets with 1013,
  its players come back through the balancer to the others and race on; nobody is
  forfeited (one was, its socket still open, before the cut-off existed).
- Redis itself is killed for longer than the cutoff and started again from its
  append-only file: every process hands its players on, none can take them until Redis is
  back, then all are served again.

Afterwards each race finished with every racer having won (none forfeited), each seat is
held by its player (their token takes it back), and the server holds exactly the moves
acknowledged to each.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.fleet import Fleet, Racer, check_boards, fleet
from support.http import create_room, get_json
from support.own_redis import durable_redis
from support.server_processes import ServerProcess
from support.tcp_relay import tcp_relay

SEEDS = (2, 3, 6, 7, 8, 9)  # Shaula deals the solver wins in 88-144 moves
PACE = 0.25  # seconds between a racer's moves
GRACE = 10.0  # a player away longer than this is forfeited: the test would see it
# Beyond the others' reaping of a silent process (PROCESS_TTL + MISSING_FOR: 14 s) plus the
# grace: a player left on the cut process would be forfeited.
CUT_FOR = 26.0
DOWN_FOR = 12.0  # Redis killed for twice the cutoff (6 s)


async def rooms_on(running: Fleet, wanted: dict[ServerProcess, int]) -> dict[str, int]:
    """New rooms (and their deals), `wanted[server]` of them on each server (the balancer
    picks the server by the room)."""
    seeds: dict[str, int] = {}
    placed = {server: 0 for server in running.servers}
    for _ in range(60):
        if all(placed[server] >= n for server, n in wanted.items()):
            return seeds
        seed = SEEDS[len(seeds)]
        room = (await create_room(running.front, seed=seed, grace=GRACE))["id"]
        server = await running.server_of(room)
        if placed[server] < wanted.get(server, 0):
            placed[server] += 1
            seeds[room] = seed
    raise AssertionError(f"the balancer sent too few rooms where wanted: {placed}")


@contextlib.asynccontextmanager
async def racing(running: Fleet, rooms: dict[str, int]) -> AsyncIterator[list[Racer]]:
    """Two racers in each room, playing while the block runs (the fault); the block's end
    waits for every race to end."""
    everyone = [Racer(running.front, room, name) for room in rooms for name in ("ann", "bo")]
    play = asyncio.gather(*(racer.run(PACE) for racer in everyone))
    try:
        yield everyone
        await asyncio.wait_for(play, timeout=200)
    except BaseException:
        print(running.logs())
        raise
    finally:
        play.cancel()
        for racer in everyone:
            await racer.seat.close()


async def check(running: Fleet, everyone: list[Racer], rooms: dict[str, int]) -> None:
    """Every race finished, won by every racer (none forfeited), each seat held by its
    player's token, and the server holding exactly the moves acknowledged to each."""
    racers = {room: [r for r in everyone if r.room == room] for room in rooms}
    problems = []
    for room, deal in rooms.items():
        status, results = await get_json(f"{running.front}/rooms/{room}/results")
        assert status == 200, results  # every race finished
        for row in results["results"]:
            if row["out"] is not None:
                problems.append(f"{room} {row['name']} is out: {row['out']}")
            elif not row["won"]:
                problems.append(f"{room} {row['name']} did not win")
        problems += await check_boards(running.front, room, deal, racers[room])
    refused = [(r.room, r.name, r.refused) for r in everyone if r.refused]
    if problems:
        print(running.logs())
    assert problems == [], (problems, refused)


async def once_moved(racers: list[Racer], moves: int) -> None:
    """Until every racer has `moves` moves acknowledged: mid-race."""
    async with asyncio.timeout(120):
        while min(len(racer.acked) for racer in racers) < moves:
            await asyncio.sleep(0.05)


@pytest.mark.timeout(300)
async def test_a_process_cut_off_from_redis_hands_its_players_on(tmp_path: Path) -> None:
    with durable_redis(tmp_path) as redis:
        async with tcp_relay(redis.port) as relay:
            urls = [relay.redis_url, redis.url, redis.url]
            async with fleet(redis.url, tmp_path, redis_urls=urls) as running:
                cut, *others = running.servers
                on_cut = await rooms_on(running, {cut: 2})
                rooms = on_cut | await rooms_on(running, {others[0]: 1, others[1]: 1})
                async with racing(running, rooms) as everyone:
                    await once_moved(everyone, 10)
                    relay.mode = "hold"  # new connections go nowhere ...
                    relay.freeze()  # ... nor do the open ones, and nothing is closed
                    cut_at = time.monotonic()
                    await asyncio.sleep(CUT_FOR)
                    left_on_cut = await cut.connections()
                    relay.mode = "pass"
                    relay.cut()  # the dead connections end (the process's deadlines do too)
                assert left_on_cut == 0  # it had handed every player on
                for racer in [
                    r for r in everyone if r.room in on_cut
                ]:  # ... who raced on elsewhere meanwhile
                    assert racer.drops >= 1, racer.name
                    assert any(cut_at < t < cut_at + CUT_FOR for t in racer.acked_at)
                await check(running, everyone, rooms)


@pytest.mark.timeout(300)
async def test_a_redis_outage_longer_than_the_cutoff_forfeits_nobody(tmp_path: Path) -> None:
    with durable_redis(tmp_path) as redis:
        async with fleet(redis.url, tmp_path) as running:
            rooms = await rooms_on(running, {server: 1 for server in running.servers})
            async with racing(running, rooms) as everyone:
                await once_moved(everyone, 10)
                redis.stop()  # SIGKILL
                await asyncio.sleep(DOWN_FOR - 2)
                handed_on = [await server.connections() for server in running.servers]
                await asyncio.sleep(2)
                await asyncio.to_thread(redis.start)
            assert handed_on == [0, 0, 0]  # every process had handed its players on
            assert all(racer.drops >= 1 for racer in everyone)
            await check(running, everyone, rooms)
