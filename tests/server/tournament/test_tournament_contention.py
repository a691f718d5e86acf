"""Many players registering at the same moment, on two server processes: every one of them
gets a place. (Each change is a compare-and-set of the whole tournament; 64 registrations
at once ran out of retries and answered 'internal: the tournament is too busy'.)"""

from __future__ import annotations

import asyncio

from support.http import get_json
from support.servers import MakeServer
from support.tour_bots import create, register

PLAYERS = 160


async def test_a_crowd_registering_at_once_on_two_processes_all_get_places(
    make_server: MakeServer,
) -> None:
    one, two = await make_server(), await make_server()
    tid, _ = await create(one, max_players=PLAYERS)
    names = [f"p{i:03d}" for i in range(PLAYERS)]
    tokens = await asyncio.gather(
        *(register(one if i % 2 else two, tid, n) for i, n in enumerate(names))
    )
    assert len(set(tokens)) == PLAYERS
    status, data = await get_json(f"{one}/tournaments/{tid}")
    assert status == 200 and data["tournament"]["players"] == PLAYERS
