"""Whole races over real WebSockets against a real Redis."""

import pytest
import websockets
from tests_support import free_port
from wsclient import WsClient, create_room, get_json

import core
from server import protocol as p


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

    from server.app import create_app
    from server.settings import Settings

    port = free_port()
    runner = web.AppRunner(
        create_app(Settings(port=port, redis_url=redis_url)), shutdown_timeout=1.0
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
