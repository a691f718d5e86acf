"""Every finished race is archived once, with its one replay, by whichever process gets
to it (server/edge/archiving.py); the replay stays available after the room is gone."""

from __future__ import annotations

import asyncio

import pytest
import sqlalchemy as sa
from support.finished import archived_replay, finish_race, resigned_with_a_bot
from support.http import create_room, get_json, get_text
from support.players import new_player
from support.records import migrated
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from core.replay import verify
from records.schema import race_results, races

SEED = 617


@pytest.fixture(params=["one node", "cluster"])
def make_server(request: pytest.FixtureRequest) -> MakeServer:
    """Servers over one Redis node, or over a Redis Cluster (the outbox crosses slots)."""
    name = "make_server" if request.param == "one node" else "make_cluster_server"
    servers: MakeServer = request.getfixturevalue(name)
    return servers


async def _metric(server: str, result: str) -> float:
    _, text = await get_text(f"{server}/metrics")
    line = f'solrace_races_archived_total{{result="{result}"}} '
    found = [row for row in text.splitlines() if row.startswith(line)]
    return float(found[0].split()[-1]) if found else 0.0


async def test_a_finished_race_is_archived_with_the_rooms_one_replay(
    make_server: MakeServer, sqlite_url: str
) -> None:
    server = await make_server()
    room = await finish_race(server)
    archived = await archived_replay(server, f"{room}.1")
    status, live = await get_text(f"{server}/rooms/{room}/replay")
    assert status == 200 and archived == live
    checked = verify(archived)
    assert [r["name"] for r in checked.results] == ["ann", "bo"]
    async with migrated(sqlite_url) as engine, engine.connect() as conn:
        # (other tests' races may be archived here too: the session's Redis is shared)
        race = (await conn.execute(sa.select(races).where(races.c.room == room))).one()
        assert (race.id, race.kind, race.rated, race.finish_reason) == (
            f"{room}.1",
            "room",
            True,
            "all_done",
        )
        mine = race_results.c.race_id == race.id
        query = sa.select(race_results).where(mine).order_by(race_results.c.seat)
        results = (await conn.execute(query)).all()
    _, ranked = await get_json(f"{server}/rooms/{room}/results")
    by_seat = {r["seat"]: r for r in ranked["results"]}
    assert [(r.seat, r.name, r.place, r.moves, r.progress, r.player_id) for r in results] == [
        (seat, by_seat[seat]["name"], by_seat[seat]["rank"], moves, by_seat[seat]["progress"], None)
        for seat, moves in ((0, 1), (1, 0))
    ]


async def test_two_processes_see_one_race_end_and_it_is_archived_once(
    make_server: MakeServer, sqlite_url: str
) -> None:
    one, two = await make_server(), await make_server()
    room = await finish_race(one, two)
    await archived_replay(two, f"{room}.1")
    await archived_replay(one, f"{room}.1")
    count = sa.select(sa.func.count())
    async with migrated(sqlite_url) as engine, engine.connect() as conn:
        assert await conn.scalar(count.select_from(races).where(races.c.room == room)) == 1
        mine = race_results.c.race_id == f"{room}.1"
        assert await conn.scalar(count.select_from(race_results).where(mine)) == 2
    # Both processes looked at the outbox; neither holds the race there any more.
    assert await _metric(one, "archived") + await _metric(two, "archived") >= 1


async def test_the_rooms_replay_url_serves_the_archive_once_the_room_expired(
    make_server: MakeServer,
) -> None:
    server = await make_server(room_ttl=1.0)
    room = await finish_race(server)
    _, live = await get_text(f"{server}/rooms/{room}/replay")
    await archived_replay(server, f"{room}.1")
    async with asyncio.timeout(30):
        while (await get_json(f"{server}/rooms/{room}"))[0] != 404:
            await asyncio.sleep(0.2)  # Redis lets the room expire
    status, text = await get_text(f"{server}/rooms/{room}/replay")
    assert status == 200 and text == live


async def test_unknown_races_and_rooms_are_404_with_a_code(make_server: MakeServer) -> None:
    server = await make_server()
    status, body = await get_json(f"{server}/races/nope.1/replay")
    assert status == 404 and body["error"]["code"] == "unknown_race"
    status, body = await get_json(f"{server}/rooms/nope/replay")
    assert status == 404 and body["error"]["code"] == "unknown_room"


async def test_the_rooms_replay_serves_its_last_race_while_the_next_round_runs(
    make_server: MakeServer,
) -> None:
    # Right after a rematch the last race is in the outbox, not archived yet: it is the
    # room's latest finished race all the same, never `not_finished`.
    server = await make_server()
    room = (await create_room(server, seed=SEED, seats=1, countdown=0))["id"]
    line = core.solve(core.new_game("shaula", SEED)).moves
    async with WsClient.connect(server) as ann:
        await race_alone(ann, room)
        await ann.play(line[:3])
        await ann.send(p.Resign())
        await ann.expect(p.RaceFinished)
        await ann.send(p.Rematch())
        await ann.expect(p.NewRound)
        await ann.expect(p.RaceStarted)
        status, text = await get_text(f"{server}/rooms/{room}/replay")
        assert status == 200, text
        status, boards = await get_json(f"{server}/rooms/{room}/replay/boards")
        assert status == 200, boards
    checked = verify(text)
    assert checked.header["seed"] == SEED and [m for _, m, _ in checked.moves] == line[:3]
    assert await archived_replay(server, f"{room}.1") == text


async def test_a_bots_seat_is_marked_in_the_replays_header(server_url: str) -> None:
    """A replay says which of its racers were bots, as the room and the results do: the
    header's player entry of a bot's seat has `bot: true`; a person's has no `bot`."""
    bot_key, bot = await new_player(server_url, bot=True)
    room = await resigned_with_a_bot(server_url, bot_key)
    status, text = await get_text(f"{server_url}/rooms/{room}/replay")
    assert status == 200
    assert verify(text).header["players"] == [
        {"seat": 0, "name": "ann"},
        {"seat": 1, "name": bot["name"], "bot": True},
    ]
