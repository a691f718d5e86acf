"""`GET /rooms/{id}/results` of a room that expired from Redis answers from the archive: the
very answer the live room gave (docs/protocol.md "GET /rooms/{id}/results"), on SQLite and
on PostgreSQL; its seed kept back as the replay's line is; 404 only when neither knows it."""

from __future__ import annotations

import asyncio
import json

import sqlalchemy as sa
from support.finished import archived_replay, expire_room
from support.http import create_room, get_json, get_text
from support.players import call, new_player
from support.records import migrated
from support.servers import MakeServer
from support.wsclient import WsClient

import core
import protocol as p
from records.schema import race_results

SEED = 1
# Shaula deal 1: after these moves no move is left (the seat is stuck, 0 cards up).
STUCK_LINE = ["t3 c2", "t4 c3", "t5 c4", "c3 c1", "t8 c3", "c2 t6", "t3 c2"]


async def varied_race(server: str) -> str:
    """A three-seat Shaula race on deal 1 whose results have every kind of line: ann (a
    player) stuck, bo (anonymous) past the first split then resigned, cy (a bot player)
    resigned with no move. Returns the room's id once the race has ended."""
    ann_key, _ = await new_player(server, "ann")
    cy_key, _ = await new_player(server, "cy", bot=True)
    room = str((await create_room(server, game="shaula", seed=SEED, seats=3, countdown=0))["id"])
    line = core.solve(core.new_game("shaula", SEED)).moves
    board = core.new_game("shaula", SEED)
    upto = 0
    while board.progress < 14:
        board.apply(line[upto])
        upto += 1
    async with (
        WsClient.connect(server) as ann,
        WsClient.connect(server) as bo,
        WsClient.connect(server) as cy,
    ):
        await ann.identify(ann_key)
        await cy.identify(cy_key)
        await ann.join(room)
        await bo.join(room, "bo")
        await cy.join(room)
        for client in (ann, bo, cy):
            await client.send(p.Ready())
        await ann.expect(p.RaceStarted)
        await ann.play(STUCK_LINE)
        await bo.play(line[:upto])
        await cy.send(p.Resign())
        await bo.send(p.Resign())
        await ann.expect(p.RaceFinished)
    return room


async def expired_varied_race(
    make_server: MakeServer, redis_url: str, database_url: str
) -> tuple[str, str, str]:
    """`varied_race` on a server over `database_url`, archived, then expired: the server,
    the room and the text of its results as the live room answered them."""
    # bo's 149 moves and resign at once: over the default burst, a resign refused
    # `rate_limited` (dropped, the race never over) would be the test's own doing.
    server = await make_server(database_url=database_url, rate_burst=1000.0)
    room = await varied_race(server)
    status, live = await get_text(f"{server}/rooms/{room}/results")
    assert status == 200
    await archived_replay(server, f"{room}.1")
    await expire_room(redis_url, room)
    assert (await get_json(f"{server}/rooms/{room}"))[0] == 404
    return server, room, live


async def test_an_expired_rooms_results_are_the_live_answer_from_the_archive(
    make_server: MakeServer, redis_url: str, database_url: str
) -> None:
    server, room, live = await expired_varied_race(make_server, redis_url, database_url)
    ranked = json.loads(live)["results"]
    assert [(r["name"], r["stuck"], r["out"], r["bot"]) for r in ranked] == [
        ("bo", False, "resigned", False),
        ("cy", False, "resigned", True),
        ("ann", True, None, False),
    ]
    assert ranked[0]["splits"][0] is not None and ranked[2]["player"] is not None
    status, archived = await get_text(f"{server}/rooms/{room}/results")
    assert (status, archived) == (200, live)


async def test_a_race_archived_before_stuck_and_out_were_kept_answers_them_as_documented(
    make_server: MakeServer, redis_url: str, database_url: str
) -> None:
    server, room, live = await expired_varied_race(make_server, redis_url, database_url)
    async with migrated(database_url) as engine, engine.begin() as conn:
        # What a row archived before they were kept holds.
        mine = race_results.c.race_id == f"{room}.1"
        await conn.execute(sa.update(race_results).where(mine).values(stuck=None, out=None))
    status, archived = await get_json(f"{server}/rooms/{room}/results")
    # `stuck` read from the replay (the seat's board after its last move), `out` unknown.
    before = json.loads(live)
    assert status == 200
    assert archived == {**before, "results": [{**r, "out": None} for r in before["results"]]}


async def test_only_a_room_neither_redis_nor_the_archive_knows_is_404(
    make_server: MakeServer, database_url: str
) -> None:
    server = await make_server(database_url=database_url)
    for room in ("0badc0de", "nope"):
        status, body = await get_json(f"{server}/rooms/{room}/results")
        assert status == 404 and body["error"]["code"] == "unknown_room", room
    room = str((await create_room(server, game="shaula", seats=2))["id"])
    status, body = await get_json(f"{server}/rooms/{room}/results")
    assert status == 409 and body["error"]["code"] == "not_finished"


async def test_an_expired_daily_attempts_seed_is_kept_as_its_replay_is(
    make_server: MakeServer, redis_url: str
) -> None:
    server = await make_server()
    (ann, _), (bo, _) = await new_player(server), await new_player(server)
    status, opened, _ = await call(server, "POST", "/daily/shaula", None, ann)
    assert status == 201
    room = opened["room"]["id"]
    async with WsClient.connect(server) as socket:
        await socket.join(room, token=opened["token"])
        await socket.send(p.Resign())
        seed = (await socket.expect(p.RaceFinished)).seed
    live = {
        who: (await call(server, "GET", f"/rooms/{room}/results", None, who))[1]
        for who in (ann, bo)
    }
    assert live[bo]["seed"] is None and live[ann]["seed"] == seed is not None
    async with asyncio.timeout(20):
        while (await call(server, "GET", f"/races/{room}.1/replay/boards", None, ann))[0] != 200:
            await asyncio.sleep(0.1)
    await expire_room(redis_url, room)
    for who in (ann, bo, None):
        status, archived, _ = await call(server, "GET", f"/rooms/{room}/results", None, who)
        assert status == 200
        assert archived == live[bo if who is None else who]
