"""Reconnecting mid-race: exactly the missed events, or a snapshot; the board is the server's."""

import contextlib

from support.http import create_room
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from server.live.seats import replay


async def start_race(server_url: str, room: str, a: WsClient, b: WsClient) -> tuple[str, str]:
    wa, wb = await a.join(room, "ann"), await b.join(room, "bo")
    assert wa.token and wb.token
    await a.send(p.Ready())
    await b.send(p.Ready())
    await a.expect(p.RaceStarted)
    await b.expect(p.RaceStarted)
    return wa.token, wb.token


async def play(client: WsClient, game: core.Game, seq: int) -> str:
    move = game.legal_moves()[-1]
    game.apply(move)
    await client.send(p.Move(seq=seq, move=move))
    accepted, _ = await client.expect_both(p.Accepted, p.Progress)
    assert accepted.seq == seq
    return move


async def test_reconnect_gets_exactly_the_missed_events(server_url: str) -> None:
    room = (await create_room(server_url, seed=4242, grace=30))["id"]
    game = core.new_game("shaula", 4242)
    other = core.new_game("shaula", 4242)
    async with WsClient.connect(server_url) as bo:
        async with WsClient.connect(server_url) as ann:
            token, _ = await start_race(server_url, room, ann, bo)
            await play(ann, game, 1)
            seen = ann.version
        # ann is gone; bo plays on and the room notes the absence.
        presence = await bo.expect(p.Presence)
        assert presence.seat == 0 and not presence.connected and presence.grace_until
        for seq in (1, 2):
            await play(bo, other, seq)
        async with WsClient.connect(server_url) as ann:
            ann.version = seen
            welcome = await ann.join(room, token=token, since=seen)
            assert welcome.seat == 0 and welcome.token is None
            missed = await ann.quiet(0.5)
            kinds = [(type(m).__name__, getattr(m, "seat", None)) for m in missed]
            assert kinds == [
                ("Presence", 0),  # gone
                ("Progress", 1),
                ("Progress", 1),
                ("Presence", 0),  # back
            ]
            assert all(m.move is None for m in missed if isinstance(m, p.Progress))
            # And the board is exactly the server's: the next legal move is accepted.
            await play(ann, game, 2)


async def test_reconnect_without_a_version_gets_a_snapshot_with_the_board(
    server_url: str,
) -> None:
    room = (await create_room(server_url, seed=99))["id"]
    game = core.new_game("shaula", 99)
    async with WsClient.connect(server_url) as bo:
        async with WsClient.connect(server_url) as ann:
            token, _ = await start_race(server_url, room, ann, bo)
            for seq in (1, 2, 3):
                await play(ann, game, seq)
            await ann.send(p.Undo(seq=4))
            await ann.expect(p.Accepted)
            game.undo()
        async with WsClient.connect(server_url, binary=False) as ann:
            await ann.join(room, token=token)
            snap = await ann.expect(p.Snapshot)
            assert snap.board == game.state(view="player")
            assert snap.moves is not None and snap.moves[-1] == "undo"
            assert replay("shaula", 99, snap.moves).state() == game.state()
            assert snap.room["seed"] == 99
            # A re-sent seq from before the drop gets the same answer again.
            await ann.send(p.Move(seq=2, move="t1 t1"))
            again = await ann.expect(p.Accepted)
            assert again.seq == 2 and again.moves == 2


async def test_a_bad_token_is_refused_and_the_socket_stays_open(server_url: str) -> None:
    room = (await create_room(server_url))["id"]
    async with WsClient.connect(server_url) as c:
        await c.send(p.Join(room=room, token="not-a-token"))
        err = await c.expect(p.Error)
        assert err.code == "bad_token"
        welcome = await c.join(room, "ann")
        assert welcome.seat == 0


async def test_a_moojub_spectator_back_with_since_gets_the_boards(server_url: str) -> None:
    # Catch-up events carry no boards, and Moojub boards cannot be rebuilt from moves.
    room = (await create_room(server_url, game="moojub", seed=845, seats=1))["id"]
    game = core.new_game("moojub", 845)
    async with WsClient.connect(server_url) as ann:
        await ann.join(room, "ann")
        async with WsClient.connect(server_url) as spy:
            await spy.send(p.Watch(room=room))
            await spy.expect(p.Welcome)
            await ann.send(p.Start())
            await ann.expect(p.RaceStarted)
            await spy.expect(p.RaceStarted)
            seen = spy.version
        for seq in (1, 2, 3):
            move = game.legal_moves()[0]
            game.apply(move)
            await ann.send(p.Move(seq=seq, move=move))
            await ann.expect_both(p.Accepted, p.Progress)
        async with WsClient.connect(server_url) as spy:
            await spy.send(p.Watch(room=room, since=seen))
            await spy.expect(p.Welcome)
            snap = await spy.expect(p.Snapshot)
            assert snap.boards == {"0": game.state(view="player")}


async def test_a_moojub_spectator_inside_the_delay_gets_boards_with_the_moves(
    server_url: str,
) -> None:
    # Joining while moves are still held back: each delayed progress carries its board.
    room = (await create_room(server_url, game="moojub", seed=845, seats=1, spectator_delay=1.0))[
        "id"
    ]
    game = core.new_game("moojub", 845)
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as spy:
        await race_alone(ann, room)
        for seq in (1, 2, 3):
            move = game.legal_moves()[0]
            game.apply(move)
            await ann.send(p.Move(seq=seq, move=move))
            await ann.expect_both(p.Accepted, p.Progress)
        await spy.send(p.Watch(room=room))
        snap = await spy.expect(p.Snapshot)
        board = (snap.boards or {}).get("0")
        while board != game.state(view="player"):
            progress = await spy.expect(p.Progress)
            assert progress.board is not None
            board = progress.board


async def test_resyncing_within_the_delay_repeats_no_event(server_url: str) -> None:
    # The events a delayed spectator still waits for are replaced by the resync's, never
    # sent twice (two resyncs once gave snapshot, snapshot, 5, 6, 5, 6).
    room = (await create_room(server_url, seed=617, seats=1, spectator_delay=1.5))["id"]
    game = core.new_game("shaula", 617)
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as spy:
        await race_alone(ann, room)
        await spy.send(p.Watch(room=room))
        await spy.expect(p.Snapshot)
        for seq in (1, 2):
            move = game.legal_moves()[0]
            game.apply(move)
            await ann.send(p.Move(seq=seq, move=move))
            await ann.expect_both(p.Accepted, p.Progress)
        await spy.send(p.Resync())
        await spy.send(p.Resync())
        # WsClient checks that each event is the one after the last: a repeat fails there.
        while spy.version < ann.version:
            await spy.expect(p.Progress)
        with contextlib.suppress(TimeoutError):
            while True:
                await spy.recv(timeout=2.5)  # what still comes within the delay


async def test_too_far_behind_gets_a_snapshot_near_enough_gets_the_events(
    make_server: MakeServer,
) -> None:
    # The room's log keeps 8 events; the second process never saw the room, so all it has
    # is that log.
    first, second = await make_server(event_log=8), await make_server(event_log=8)
    room = (await create_room(first, seed=4242, seats=1))["id"]
    game = core.new_game("shaula", 4242)
    async with WsClient.connect(first) as ann:
        token = (await ann.join(room, "ann")).token
        await ann.send(p.Start())
        await ann.expect(p.RaceStarted)
        for seq in range(1, 21):
            await play(ann, game, seq)
        last = ann.version
    async with WsClient.connect(second) as back:
        await back.join(room, token=token, since=1)
        snapshot = await back.expect(p.Snapshot)
        assert snapshot.version >= last and snapshot.moves == game.history
        assert snapshot.board == game.state(view="player")
    async with WsClient.connect(second) as back:
        back.version = last - 3
        await back.join(room, token=token, since=last - 3)
        missed = await back.quiet(0.5)
        assert not any(isinstance(m, p.Snapshot) for m in missed)
        assert [m.version for m in missed if isinstance(m, p.Event)][:3] == [
            last - 2,
            last - 1,
            last,
        ]
        await play(back, game, 21)  # the board is the server's


async def test_welcome_says_where_the_seats_seqs_carry_on(server_url: str) -> None:
    # A client that lost its counter (restarted) learns the last accepted seq from welcome.
    room = (await create_room(server_url, seed=4242, seats=1))["id"]
    game = core.new_game("shaula", 4242)
    async with WsClient.connect(server_url) as ann:
        welcome = await ann.join(room, "ann")
        assert welcome.last_seq == 0 and welcome.token
        token = welcome.token
        await ann.send(p.Start())
        await ann.expect(p.RaceStarted)
        await play(ann, game, 5)
        await play(ann, game, 9)
    async with WsClient.connect(server_url) as back:
        assert (await back.join(room, token=token)).last_seq == 9
        await back.expect(p.Snapshot)
        await play(back, game, 10)
    async with WsClient.connect(server_url) as spy:
        await spy.send(p.Watch(room=room))
        assert (await spy.expect(p.Welcome)).last_seq is None  # players only
