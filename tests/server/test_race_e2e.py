"""Whole races over real WebSockets against a real Redis."""

from collections.abc import Callable

import pytest
import websockets
from redis.exceptions import ConnectionError as RedisConnectionError
from support.databases import scratch_database_url
from support.http import create_room, get_json
from support.ports import free_port
from support.servers import MakeServer
from support.wsclient import WsClient

import core
import protocol as p
from server.room.race import Outcome, Race
from server.storage.store import Applied, RedisRoomStore


async def test_two_players_race_and_a_spectator_watches(server_url: str) -> None:
    room = (await create_room(server_url, seed=617))["id"]
    async with (
        WsClient.connect(server_url) as ann,
        WsClient.connect(server_url, binary=False) as bo,
        WsClient.connect(server_url) as spy,
    ):
        w_ann = await ann.join(room, "ann")
        assert (w_ann.role, w_ann.seat) == ("player", 0) and w_ann.token
        w_bo = await bo.join(room, "bo")
        assert w_bo.seat == 1
        await spy.send(p.Watch(room=room))
        assert (await spy.expect(p.Welcome)).role == "spectator"
        snap = await spy.expect(p.Snapshot)
        assert snap.room["seed"] is None  # not before the start

        await ann.send(p.Ready())
        await bo.send(p.Ready())
        countdown = await ann.expect(p.Countdown)
        started = await ann.expect(p.RaceStarted)
        assert started.seed == 617 and started.at >= countdown.start_at
        await bo.expect(p.RaceStarted)

        game = core.new_game("shaula", 617)
        first = game.legal_moves()[0]
        await ann.send(p.Move(seq=1, move=first))
        accepted, own = await ann.expect_both(p.Accepted, p.Progress)  # in either order
        assert (accepted.seq, accepted.move, accepted.moves) == (1, first, 1)
        assert own.move == first and own.version == accepted.version
        other = await bo.expect(p.Progress)
        assert other.seat == 0 and other.move is None and other.board is None
        seen = await spy.expect(p.Progress)
        assert seen.move == first

        await ann.send(p.Move(seq=2, move="t1 t1"))
        refused = await ann.expect(p.Refused)
        assert (refused.seq, refused.code) == (2, "illegal_move") and refused.reason

        await ann.send(p.Resign())
        await bo.send(p.Resign())
        finished = await spy.expect(p.RaceFinished)
        assert finished.seed == 617 and finished.reason == "all_done"
        # Same progress (no card up yet): fewer moves ranks first.
        assert [(r["seat"], r["rank"]) for r in finished.results] == [(1, 1), (0, 2)]
        assert (await bo.expect(p.RaceFinished)).results == finished.results

    status, body = await get_json(f"{server_url}/rooms/{room}/results")
    assert status == 200 and body["results"] == finished.results
    status, body = await get_json(f"{server_url}/rooms/{room}")
    assert status == 200 and body["room"]["status"] == "finished"


async def test_shutdown_closes_sockets_with_going_away(redis_url: str) -> None:
    from aiohttp import web

    from server.edge.app import create_app
    from server.settings import Settings

    port = free_port()
    runner = web.AppRunner(
        create_app(Settings(database_url=scratch_database_url(), port=port, redis_url=redis_url)),
        shutdown_timeout=1.0,
    )
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    url = f"http://127.0.0.1:{port}"
    room = (await create_room(url))["id"]
    async with WsClient.connect(url) as ann:
        await ann.join(room, "ann")
        await ann.expect(p.Snapshot)
        await runner.cleanup()
        with pytest.raises(websockets.ConnectionClosed) as closed:
            while True:  # her own `joined` may still come before the close
                await ann.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1001


async def test_the_race_finishes_when_its_finishing_write_first_fails(
    make_server: MakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The last racer's winning move is stored; the transition that ends the race then finds
    # Redis out of reach (as in a restart). It must be tried again: nothing else is due in
    # a race whose every seat is done, and it stayed `running` for ever.
    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    room = (await create_room(url, seed=617, seats=1))["id"]
    line = core.solve(core.new_game("shaula", 617)).moves
    failing = [0]
    real = RedisRoomStore._transact

    async def transact(
        self: RedisRoomStore, room: str, action: Callable[[Race], Outcome], now: float
    ) -> Applied:
        if failing[0] > 0:
            failing[0] -= 1
            raise RedisConnectionError("Connection reset by peer")
        return await real(self, room, action, now)

    monkeypatch.setattr(RedisRoomStore, "_transact", transact)
    async with WsClient.connect(url) as ann:
        await ann.join(room, "ann")
        await ann.send(p.Start())
        await ann.expect(p.RaceStarted)
        for seq, move in enumerate(line[:-1], start=1):
            await ann.send(p.Move(seq=seq, move=move))
            await ann.expect(p.Accepted)
        failing[0] = 2
        await ann.send(p.Move(seq=len(line), move=line[-1]))
        assert (await ann.expect(p.Accepted)).won
        finished = await ann.expect(p.RaceFinished, timeout=15)
    assert failing[0] == 0 and finished.reason == "all_done"
    status, body = await get_json(f"{url}/rooms/{room}")
    assert status == 200 and body["room"]["status"] == "finished"


async def test_a_race_played_to_the_win_ranks_winners_by_time(make_server: MakeServer) -> None:
    # Two racers play the solver's winning line (Ann first, then Bo); Cy turns a card up
    # and resigns. Winners rank by finishing time, then the rest by progress.
    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    room = (await create_room(url, seed=617, seats=3))["id"]
    line = core.solve(core.new_game("shaula", 617)).moves
    async with (
        WsClient.connect(url) as ann,
        WsClient.connect(url, binary=False) as bo,
        WsClient.connect(url) as cy,
        WsClient.connect(url) as spy,
    ):
        for client, name in ((ann, "ann"), (bo, "bo"), (cy, "cy")):
            await client.join(room, name)
        await spy.send(p.Watch(room=room))
        await ann.send(p.Start())
        for client in (ann, bo, cy, spy):
            await client.expect(p.RaceStarted)

        async def play_out(client: WsClient) -> p.Accepted:
            for seq, move in enumerate(line, start=1):
                await client.send(p.Move(seq=seq, move=move))
                answer = await client.expect(p.Accepted)
                assert answer.seq == seq and answer.won == (seq == len(line))
            return answer

        won = await play_out(ann)
        assert (won.progress, won.moves) == (52, len(line))
        await play_out(bo)
        game = core.new_game("shaula", 617)
        while game.progress == 0:  # Cy plays the line until a card is up
            move = line[game.moves]
            game.apply(move)
            await cy.send(p.Move(seq=game.moves, move=move))
            await cy.expect(p.Accepted)
        await cy.send(p.Resign())
        finished = await spy.expect(p.RaceFinished, timeout=10)
        for client in (ann, bo, cy):  # read what is queued (a full queue slows the close)
            assert (await client.expect(p.RaceFinished)).results == finished.results
    assert finished.reason == "all_done"
    results = [(r["name"], r["rank"], r["won"], r["out"]) for r in finished.results]
    assert results == [
        ("ann", 1, True, None),
        ("bo", 1 if finished.results[0]["time"] == finished.results[1]["time"] else 2, True, None),
        ("cy", 3, False, "resigned"),
    ]
    assert 0 < finished.results[0]["time"] <= finished.results[1]["time"]
    assert finished.results[2]["time"] is None and finished.results[2]["progress"] >= 1
    assert spy.seen.count(finished) == 1 and any(
        isinstance(m, p.Progress) and m.won and m.seat == 0 for m in spy.seen
    )
