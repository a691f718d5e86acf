"""Two servers on one Redis: a player on each, a spectator, quick match across them.

Each server is its own app with its own Redis clients, hub and pub/sub listener, as two
processes would be (tests/server/test_server_main.py runs real `python -m server` ones).
Every test runs twice: on one Redis node, and on a Redis Cluster of three primaries (the
same URL form: the servers find out for themselves).
"""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from support.http import create_room, get_json
from support.servers import MakeServer
from support.wsclient import WsClient, seat_two_and_watch

import core
import protocol as p


@pytest.fixture(params=["one node", "cluster"])
def make_server(request: pytest.FixtureRequest) -> MakeServer:
    """Servers over one Redis node, or over a Redis Cluster."""
    name = "make_server" if request.param == "one node" else "make_cluster_server"
    servers: MakeServer = request.getfixturevalue(name)
    return servers


async def test_a_race_across_two_servers(make_server: MakeServer) -> None:
    one, two = await make_server(), await make_server()
    room = (await create_room(one, seed=31, countdown=0.3))["id"]
    game_a, game_b = core.new_game("shaula", 31), core.new_game("shaula", 31)
    async with (
        WsClient.connect(one) as ann,
        WsClient.connect(two) as bo,
        WsClient.connect(two) as spy,
    ):
        await seat_two_and_watch(room, ann, bo, spy)
        for c in (ann, bo, spy):
            await c.expect(p.RaceStarted)
        for seq in range(1, 4):
            for client, game in ((ann, game_a), (bo, game_b)):
                move = game.legal_moves()[-1]
                game.apply(move)
                await client.send(p.Move(seq=seq, move=move))
                accepted = await client.expect(p.Accepted)
                assert accepted.moves == seq
        # Each sees the other's progress, wherever it was accepted.
        ann_sees = [m for m in await ann.everything() if isinstance(m, p.Progress)]
        assert sorted((m.seat, m.moves) for m in ann_sees if m.seat == 1) == [
            (1, 1),
            (1, 2),
            (1, 3),
        ]
        spy_sees = [m for m in await spy.everything() if isinstance(m, p.Progress)]
        assert len(spy_sees) == 6 and all(m.move for m in spy_sees)
        await ann.send(p.Resign())
        await bo.send(p.Resign())
        one_done = await ann.expect(p.RaceFinished)
        two_done = await spy.expect(p.RaceFinished)
        assert one_done == two_done  # the same event, the same version, on both servers
    status, body = await get_json(f"{two}/rooms/{room}/results")
    assert status == 200 and len(body["results"]) == 2


@asynccontextmanager
async def one_seat_on_two_servers(
    make_server: MakeServer,
) -> AsyncIterator[tuple[WsClient, WsClient]]:
    """A racer alone in a room on deal 32, with a socket on each of two servers, raced."""
    one, two = await make_server(), await make_server()
    room = (await create_room(one, seed=32, seats=1))["id"]
    async with WsClient.connect(one) as a1, WsClient.connect(two) as a2:
        token = (await a1.join(room, "ann")).token
        await a2.join(room, token=token)
        await a1.send(p.Start())
        await a1.expect(p.RaceStarted)
        await a2.expect(p.RaceStarted)
        yield a1, a2


async def test_the_same_seat_on_two_servers_never_double_applies(make_server: MakeServer) -> None:
    game = core.new_game("shaula", 32)
    async with one_seat_on_two_servers(make_server) as (a1, a2):
        first, second = game.legal_moves()[0], game.legal_moves()[-1]
        # Both sockets send a different move with the same seq at once: one wins.
        await asyncio.gather(
            a1.send(p.Move(seq=1, move=first)), a2.send(p.Move(seq=1, move=second))
        )
        r1 = await a1.expect(p.Accepted)
        r2 = await a2.expect(p.Accepted)
        assert r1 == r2  # the loser gets the winner's stored answer for seq 1
        # A new seq from the loser is checked against the board that really exists.
        game.apply(r1.move)
        move = game.legal_moves()[0]
        await a2.send(p.Move(seq=2, move=move))
        accepted = await a2.expect(p.Accepted)
        assert accepted.moves == 2


async def test_the_same_seat_on_two_servers_is_judged_through_both_sockets_bursts(
    make_server: MakeServer,
) -> None:
    # Both sockets of the seat send a burst at once, seqs counting up together: each move
    # is judged on the seat's board as the other process left it, however often that moved
    # first; none is refused as a failure of the server (`internal`).
    async with one_seat_on_two_servers(make_server) as (a1, a2):
        seqs = iter(range(1, 1000))
        pairs = 25

        async def burst(client: WsClient, move: str) -> list[p.Accepted | p.Refused]:
            for _ in range(pairs):
                await client.send(p.Move(seq=next(seqs), move=move))
                await client.send(p.Undo(seq=next(seqs)))
            kinds = (p.Accepted, p.Refused)
            answers = [await client.expect_any(kinds, timeout=15) for _ in range(2 * pairs)]
            return [a for a in answers if isinstance(a, kinds)]

        answers = await asyncio.gather(burst(a1, "t1 c1"), burst(a2, "t2 c2"))
    refusals = {a.code for side in answers for a in side if isinstance(a, p.Refused)}
    assert refusals <= {"stale_seq", "illegal_move"}, refusals
    assert sum(isinstance(a, p.Accepted) for side in answers for a in side) > pairs


async def test_quick_match_pairs_players_on_different_servers(make_server: MakeServer) -> None:
    one, two = await make_server(), await make_server()
    async with WsClient.connect(one) as ann, WsClient.connect(two) as bo:
        game = "stalactites"
        await ann.send(p.QuickMatch(game=game, name="ann"))
        await ann.expect(p.Queued)
        await bo.send(p.QuickMatch(game=game, name="bo"))
        m_bo = await bo.expect(p.Matched)
        m_ann = await ann.expect(p.Matched)
        assert m_ann.room == m_bo.room and {m_ann.seat, m_bo.seat} == {0, 1}
        assert m_ann.token != m_bo.token
        for c in (ann, bo):
            await c.expect(p.Welcome)
            started = await c.expect(p.RaceStarted)
            assert started.game == game
        status, body = await get_json(f"{one}/rooms/{m_ann.room}")
        names = [pl["name"] for pl in body["room"]["players"]]
        assert status == 200 and names == ["ann", "bo"]


async def test_a_quick_match_ticket_leaves_with_its_socket(make_server: MakeServer) -> None:
    one = await make_server()
    async with WsClient.connect(one) as ann:
        await ann.send(p.QuickMatch(game="moojub", name="ann"))
        await ann.expect(p.Queued)
    async with WsClient.connect(one) as bo, WsClient.connect(one) as cy:
        await bo.send(p.QuickMatch(game="moojub", name="bo"))
        await bo.expect(p.Queued)  # ann's ticket is gone: bo waits
        await cy.send(p.QuickMatch(game="moojub", name="cy"))
        assert (await cy.expect(p.Matched)).room == (await bo.expect(p.Matched)).room


async def test_a_quick_match_player_gone_as_they_are_paired_forfeits_after_the_grace(
    make_server: MakeServer,
) -> None:
    # ann's socket closes as she is paired, before her seat is taken up: the seat is away
    # like any other and forfeits after the grace (it stayed "connected" for good, the race
    # never ended, never archived).
    url = await make_server(grace=1.0)
    async with WsClient.connect(url) as bo:
        async with WsClient.connect(url) as ann:
            await ann.send(p.QuickMatch(game="shaula", name="ann"))
            await ann.expect(p.Queued)
            await bo.send(p.QuickMatch(game="shaula", name="bo"))
            room = (await bo.expect(p.Matched)).room
        async with asyncio.timeout(20):
            while True:
                _, body = await get_json(f"{url}/rooms/{room}")
                seat = body["room"]["players"][0]
                if seat["out"] == "forfeit":
                    break
                await asyncio.sleep(0.2)
        assert not seat["connected"]
