"""Seat faults, over real sockets and a real Redis: the room owns its seats.

One test per symptom (numbered as in the issue); each failed on the server before the
seat session (server/live/seats.py) took the seat away from the socket.
"""

from __future__ import annotations

import asyncio

from support.http import create_room, get_json
from support.servers import MakeServer
from support.wsclient import WsClient

import core
import protocol as p


async def start_alone(client: WsClient) -> None:
    await client.send(p.Start())
    await client.expect(p.RaceStarted)


def a_move_only_legal_after(game: core.Game, first: str) -> str:
    """A move legal once `first` is played and not before (the board tells them apart)."""
    before = set(game.legal_moves())
    after = game.copy()
    after.apply(first)
    return next(m for m in after.legal_moves() if m not in before)


# ------------------------------------------------------------------ symptom 1


async def test_1_closing_one_of_two_sockets_keeps_the_player_racing(server_url: str) -> None:
    room = (await create_room(server_url, seed=31, seats=1, grace=0.5))["id"]
    game = core.new_game("shaula", 31)
    async with WsClient.connect(server_url) as keeper:
        async with WsClient.connect(server_url) as first:
            token = (await first.join(room, "ann")).token
            await keeper.join(room, token=token)  # the new socket, the old one still open
            await start_alone(first)
            await keeper.expect(p.RaceStarted)
        await asyncio.sleep(1.2)  # the old socket is gone; more than the grace period
        for seq in (1, 2):
            move = game.legal_moves()[0]
            game.apply(move)
            await keeper.send(p.Move(seq=seq, move=move))
            answer = await keeper.expect(p.Accepted | p.Refused)  # type: ignore[arg-type]
            assert isinstance(answer, p.Accepted), answer
        seen = await keeper.everything()
        assert not [m for m in seen if isinstance(m, p.PlayerOut)]
        assert not [m for m in seen if isinstance(m, p.Presence) and not m.connected]
    status, body = await get_json(f"{server_url}/rooms/{room}")
    assert status == 200 and body["room"]["players"][0]["out"] is None


# ------------------------------------------------------------------ symptom 2


async def test_2_a_socket_loses_the_seat_its_player_gave_up(server_url: str) -> None:
    room = (await create_room(server_url, seed=32, seats=2, countdown=0.1))["id"]
    async with (
        WsClient.connect(server_url) as a1,
        WsClient.connect(server_url) as a2,
        WsClient.connect(server_url) as bo,
        WsClient.connect(server_url) as cy,
    ):
        token = (await a1.join(room, "ann")).token
        await a2.join(room, token=token)
        await bo.join(room, "bo")
        await a1.send(p.Leave())
        left = await a2.expect(p.PlayerLeft)
        assert left.seat == 0
        assert (await cy.join(room, "cy")).seat == 0  # cy takes ann's old seat number
        # ann's other socket cannot act for cy: not ready, not leave, not resign, not move.
        for message in (p.Ready(), p.Leave(), p.Resign(), p.Start()):
            await a2.send(message)
            error = await a2.expect(p.Error)
            assert error.code == p.ErrorCode.NOT_JOINED, error
        await cy.send(p.Ready())
        await bo.send(p.Ready())
        await cy.expect(p.RaceStarted)
        game = core.new_game("shaula", 32)
        move = game.legal_moves()[0]
        await a2.send(p.Move(seq=1, move=move))
        refused = await a2.expect(p.Refused)
        assert refused.seq == 1 and refused.code == p.ErrorCode.NOT_JOINED
        await cy.send(p.Move(seq=1, move=move))
        await cy.expect(p.Accepted)
        # ... and hears nothing of cy's race.
        heard = await a2.everything()
        assert not [m for m in heard if isinstance(m, p.RaceStarted | p.Progress | p.Countdown)]
    status, body = await get_json(f"{server_url}/rooms/{room}")
    players = body["room"]["players"]
    assert status == 200 and [(pl["name"], pl["moves"]) for pl in players] == [
        ("cy", 1),
        ("bo", 0),
    ]


# ------------------------------------------------------------------ symptom 3


async def test_3_a_second_socket_judges_moves_on_the_true_board(server_url: str) -> None:
    room = (await create_room(server_url, seed=31, seats=1))["id"]
    game = core.new_game("shaula", 31)
    first = game.legal_moves()[0]
    second = a_move_only_legal_after(game, first)
    async with WsClient.connect(server_url) as a, WsClient.connect(server_url) as b:
        token = (await a.join(room, "ann")).token
        await b.join(room, token=token)
        await start_alone(a)
        await a.send(p.Move(seq=1, move=first))
        assert (await a.expect(p.Accepted)).moves == 1
        await b.send(p.Move(seq=2, move=second))
        answer = await b.expect(p.Accepted | p.Refused)  # type: ignore[arg-type]
        assert isinstance(answer, p.Accepted), answer
        assert answer.moves == 2


async def test_3_across_processes_too(make_server: MakeServer) -> None:
    one, two = await make_server(), await make_server()
    room = (await create_room(one, seed=31, seats=1))["id"]
    game = core.new_game("shaula", 31)
    first = game.legal_moves()[0]
    second = a_move_only_legal_after(game, first)
    async with WsClient.connect(one) as a, WsClient.connect(two) as b:
        token = (await a.join(room, "ann")).token
        await b.join(room, token=token)
        await start_alone(a)
        await b.expect(p.RaceStarted)
        await a.send(p.Move(seq=1, move=first))
        await a.expect(p.Accepted)
        await b.expect(p.Progress)  # the other process has heard of it
        await b.send(p.Move(seq=2, move=second))
        answer = await b.expect(p.Accepted | p.Refused)  # type: ignore[arg-type]
        assert isinstance(answer, p.Accepted), answer


async def test_3_an_undo_from_a_second_socket_takes_back_the_other_sockets_move(
    make_server: MakeServer,
) -> None:
    """The undo is judged on the seat's true board too, in the same process and in another."""
    one, two = await make_server(), await make_server()
    room = (await create_room(one, seed=31, seats=1, undo=True))["id"]
    game = core.new_game("shaula", 31)
    first = game.legal_moves()[0]
    async with (
        WsClient.connect(one) as a,
        WsClient.connect(one) as b,
        WsClient.connect(two) as c,
    ):
        token = (await a.join(room, "ann")).token
        await b.join(room, token=token)
        await c.join(room, token=token)
        await start_alone(a)
        await c.expect(p.RaceStarted)
        await a.send(p.Move(seq=1, move=first))
        assert (await a.expect(p.Accepted)).moves == 1
        await b.send(p.Undo(seq=2))  # b never played `first`: the seat did
        undone = await b.expect(p.Accepted | p.Refused)  # type: ignore[arg-type]
        assert isinstance(undone, p.Accepted) and undone.move == "undo", undone
        await a.send(p.Move(seq=3, move=first))  # legal again only if it was taken back
        assert (await a.expect(p.Accepted)).move == first
        for _ in range(3):
            await c.expect(p.Progress)  # the other process has heard of all three
        await c.send(p.Undo(seq=4))
        undone = await c.expect(p.Accepted | p.Refused)  # type: ignore[arg-type]
        assert isinstance(undone, p.Accepted) and undone.move == "undo", undone
        game.apply(first)
        game.undo()
        game.apply(first)
        game.undo()
        assert undone.moves == game.moves and undone.progress == game.progress


# ------------------------------------------------------------------ symptom 7


async def test_7_a_dead_lobby_player_loses_the_seat_and_the_host_passes_on(
    server_url: str,
) -> None:
    room = (await create_room(server_url, seats=3, grace=0.5))["id"]
    async with WsClient.connect(server_url) as bo:
        async with WsClient.connect(server_url) as ann:
            assert (await ann.join(room, "ann")).seat == 0
            await bo.join(room, "bo")
            await bo.expect(p.Snapshot)  # bo is in the room before ann goes
        away = await bo.expect(p.Presence)
        assert away.seat == 0 and not away.connected
        assert away.grace_until is not None  # shown to the others: when the seat goes
        left = await bo.expect(p.PlayerLeft, timeout=3)
        assert left.seat == 0
        status, body = await get_json(f"{server_url}/rooms/{room}")
        assert status == 200 and body["room"]["host"] == 1
        assert [pl["name"] for pl in body["room"]["players"]] == ["bo"]
        # bo is the host now: bo can start.
        await bo.send(p.Start())
        await bo.expect(p.Countdown)


async def test_7_coming_back_within_the_lobby_grace_keeps_the_seat(server_url: str) -> None:
    room = (await create_room(server_url, seats=3, grace=1.0))["id"]
    async with WsClient.connect(server_url) as bo:
        async with WsClient.connect(server_url) as ann:
            token = (await ann.join(room, "ann")).token
            await bo.join(room, "bo")
            await bo.expect(p.Snapshot)
        await bo.expect(p.Presence)
        async with WsClient.connect(server_url) as ann:
            assert (await ann.join(room, token=token)).seat == 0
            back = await bo.expect(p.Presence)
            assert back.connected and back.seat == 0
            await asyncio.sleep(1.3)
            assert not [m for m in await bo.everything() if isinstance(m, p.PlayerLeft)]


# ------------------------------------------------------------------ symptom 8


async def test_8_seqs_above_2_to_the_53_are_compared_exactly(server_url: str) -> None:
    room = (await create_room(server_url, seed=31, seats=1, undo=True))["id"]
    game = core.new_game("shaula", 31)
    async with WsClient.connect(server_url) as a:
        await a.join(room, "ann")
        await start_alone(a)
        for seq in (2**60, 2**60 + 1, 2**63 - 1):
            move = game.legal_moves()[0]
            game.apply(move)
            await a.send(p.Move(seq=seq, move=move))
            answer = await a.expect(p.Accepted | p.Refused)  # type: ignore[arg-type]
            assert isinstance(answer, p.Accepted) and answer.seq == seq, answer
        await a.send(p.Move(seq=2**63 - 2, move=game.legal_moves()[0]))
        assert (await a.expect(p.Refused)).code == p.ErrorCode.STALE_SEQ


# ------------------------------------------------------------------ symptom 9


def nested(depth: int) -> str:
    """A JSON list `depth` levels deep, written out (json.dumps would recurse)."""
    return "[" * depth + "1" + "]" * depth


async def test_9_a_deeply_nested_value_is_an_error_not_a_closed_socket(server_url: str) -> None:
    async with WsClient.connect(server_url) as a:
        for depth in (985, 1000, 1022, 5000):
            await a.send_raw('{"type":"ping","v":' + nested(depth) + "}")
            error = await a.expect(p.Error)
            assert error.code in (p.ErrorCode.BAD_VERSION, p.ErrorCode.BAD_FRAME), error
        for depth in (985, 1022):
            await a.send_raw('{"type":"ping","v":1,"id":' + nested(depth) + "}")
            error = await a.expect(p.Error)
            assert error.code in (p.ErrorCode.BAD_MESSAGE, p.ErrorCode.BAD_FRAME), error
        await a.send(p.Ping(id=7))
        assert (await a.expect(p.Pong)).id == 7
