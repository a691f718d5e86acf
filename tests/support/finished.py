"""Finished races on real servers, for the archive's tests: `finish_race` plays one to its
end over WebSockets; `archived_replay` waits for the archive to serve its replay."""

from __future__ import annotations

import asyncio

import core
import protocol as p
from support.wsclient import WsClient, create_room, get_text

__all__ = ["archived_replay", "finish_race"]


async def finish_race(one: str, two: str | None = None, **room: object) -> str:
    """A two-seat room on server `one` (ann there, bo on `two`, or `one` too): ann makes a
    legal move, both resign. Returns the room's id once both saw the end."""
    made = await create_room(one, countdown=0.1, **room)
    async with WsClient.connect(one) as ann, WsClient.connect(two or one) as bo:
        await ann.join(made["id"], "ann")
        await bo.join(made["id"], "bo")
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        started = await ann.expect(p.RaceStarted)
        await bo.expect(p.RaceStarted)
        assert started.seed is not None
        first = core.new_game(started.game, started.seed).legal_moves()[0]
        await ann.send(p.Move(seq=1, move=first))
        await ann.expect(p.Accepted)
        await ann.send(p.Resign())
        await bo.send(p.Resign())
        await ann.expect(p.RaceFinished)
        await bo.expect(p.RaceFinished)
    return str(made["id"])


async def archived_replay(server: str, race: str, within: float = 30.0) -> str:
    """The replay `GET /races/{race}/replay` serves, once it does (AssertionError if not
    within `within` seconds)."""
    async with asyncio.timeout(within):
        while True:
            status, text = await get_text(f"{server}/races/{race}/replay")
            if status == 200:
                return text
            assert status == 404, text
            await asyncio.sleep(0.1)
