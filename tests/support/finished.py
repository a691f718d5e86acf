"""Finished races on real servers, for the archive's tests: `finish_race` plays one to its
end over WebSockets (anonymous seats), `finish_identified_race` one of identified players
placed as asked, `resigned_with_a_bot` ann and a bot player resigning at once,
`archived_alone` one player's race on a player's page, `won_daily_attempt` a player's
ranked attempt at today's deal won; `archived_replay` waits for the
archive to serve its replay; `expire_room` does to a finished room what Redis does after
`room_ttl`."""

from __future__ import annotations

import asyncio
import contextlib
import json

from redis.asyncio import Redis

import core
import protocol as p
from server.storage.keys import RoomKeys
from support.http import create_room, get_text
from support.players import call
from support.wsclient import WsClient, race_alone

__all__ = [
    "archived_alone",
    "archived_replay",
    "expire_room",
    "finish_identified_race",
    "finish_race",
    "quiet_moves",
    "resigned_with_a_bot",
    "won_daily_attempt",
]


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


async def resigned_with_a_bot(server: str, bot_key: str) -> str:
    """A two-seat Shaula race of "ann" (anonymous, seat 0) and the bot player whose key
    this is (seat 1), both resigning at once; the room's id."""
    room = str((await create_room(server, game="shaula", seed=617, seats=2, countdown=0))["id"])
    async with WsClient.connect(server) as ann, WsClient.connect(server) as machine:
        await ann.join(room, "ann")
        await machine.send(p.Identify(key=bot_key))
        await machine.expect(p.Identified)
        await machine.join(room)
        for client in (ann, machine):
            await client.send(p.Ready())
        await ann.expect(p.RaceStarted)
        for client in (ann, machine):
            await client.send(p.Resign())
        await ann.expect(p.RaceFinished)
    return room


async def archived_alone(server: str, key: str, moves: int, seed: int = 617) -> str:
    """A one-seat Shaula race of the player whose key this is: the first `moves` moves of
    the solver's line on `seed`, each accepted at once (50 at most: the rate limit's
    burst), then resigned; its room once archived (on the player's page)."""
    room = str((await create_room(server, game="shaula", seed=seed, seats=1, countdown=0))["id"])
    line = core.solve(core.new_game("shaula", seed)).moves
    async with WsClient.connect(server) as ws:
        await ws.identify(key)
        await race_alone(ws, room, name="")
        await ws.play(line[:moves])
        await ws.send(p.Resign())
        await ws.expect(p.RaceFinished)
    await archived_replay(server, f"{room}.1")
    return room


async def dealt_seed(redis_url: str, room: str) -> int:
    """The deal of a room's race as Redis keeps it, whoever may see it on the wire."""
    redis = Redis.from_url(redis_url)
    try:
        raw = await redis.get(RoomKeys(room).race)
    finally:
        await redis.aclose()
    assert raw is not None, room
    return int(json.loads(raw)["seed"])


async def expire_room(redis_url: str, room: str) -> None:
    """What Redis does to a finished room after `room_ttl`: its keys go."""
    redis = Redis.from_url(redis_url)
    try:
        await redis.delete(*[key async for key in redis.scan_iter(match=f"{{room:{room}}}*")])
    finally:
        await redis.aclose()


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


def quiet_moves(game: str, seed: int, count: int) -> list[str]:
    """`count` legal moves from the deal that put no card on a foundation (so that the
    results rank by moves alone)."""
    board = core.new_game(game, seed)
    chosen: list[str] = []
    while len(chosen) < count:
        for move in board.legal_moves():
            trial = core.new_game(game, seed)
            for earlier in [*chosen, move]:
                trial.apply(earlier)
            if trial.progress == 0:
                board.apply(move)
                chosen.append(move)
                break
        else:
            raise AssertionError(f"no quiet move left on {game} {seed}")
    return chosen


async def finish_identified_race(servers: list[str], keys: list[str], moves: list[int]) -> str:
    """A room of len(keys) seats, player i (acting by `keys[i]`) on `servers[i % n]`; seat i
    makes `moves[i]` moves that put no card up, then everyone resigns: places follow the
    counts (fewer moves first, equal counts tie). Returns the room's id."""
    made = await create_room(servers[0], seats=len(keys), countdown=0.1)
    async with contextlib.AsyncExitStack() as stack:
        clients = []
        for index, key in enumerate(keys):
            client = await stack.enter_async_context(
                WsClient.connect(servers[index % len(servers)])
            )
            await client.send(p.Identify(key=key))
            await client.expect(p.Identified)
            await client.join(made["id"])
            clients.append(client)
        for client in clients:
            await client.send(p.Ready())
        starts = [await client.expect(p.RaceStarted) for client in clients]
        started = starts[0]
        assert started.seed is not None
        for client, count in zip(clients, moves, strict=True):
            for seq, move in enumerate(quiet_moves(started.game, started.seed, count), 1):
                await client.send(p.Move(seq=seq, move=move))
                await client.expect(p.Accepted)
        for client in clients:
            await client.send(p.Resign())
        for client in clients:
            await client.expect(p.RaceFinished)
    return str(made["id"])


async def won_daily_attempt(server: str, key: str, game: str = "shaula") -> p.RaceFinished:
    """The ranked attempt at today's `game` of the player whose key this is, won by the
    solver's line from the board its snapshot gives (the deal's number is kept back), as
    fast as the server takes the moves; its `finished` event."""
    status, opened, _ = await call(server, "POST", f"/daily/{game}", {}, key)
    assert status == 201, opened
    async with WsClient.connect(server) as ws:
        await ws.join(opened["room"]["id"], token=opened["token"])
        board = (await ws.expect(p.Snapshot)).board
        assert board is not None
        await ws.play(core.solve(core.from_state(board)).moves)
        return await ws.expect(p.RaceFinished)
