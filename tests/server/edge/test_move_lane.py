"""Moves judged as their frames are read (server/edge/move_lane.py), on a real server over
a real Redis: they take that lane, and a socket's messages are still answered in the order
they were sent, whether the client waits for each answer or not."""

from __future__ import annotations

import json

import msgpack
from support.http import create_room
from support.servers import served_app
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from server.edge.app_keys import METRICS

SEED = 4


def walk(count: int) -> list[str]:
    """`count` legal moves of the room's deal, each on the board the ones before left."""
    game = core.new_game("shaula", SEED)
    moves = []
    for _ in range(count):
        move = game.legal_moves()[0]
        game.apply(move)
        moves.append(game.history[-1])
    return moves


async def test_moves_answered_one_by_one_are_judged_as_they_are_read(redis_url: str) -> None:
    async with served_app(redis_url) as (app, url):
        room = (await create_room(url, seed=SEED, seats=1, countdown=0))["id"]
        metrics = app[METRICS]
        async with WsClient.connect(url, binary=False) as ann:
            await race_alone(ann, room)
            moves = walk(10)
            await ann.play(moves[:5])
            assert metrics.moves_on_read.value == 5
            ann.binary = True  # JSON and msgpack frames alike
            await ann.play(moves[5:], first_seq=6)
            assert metrics.moves_on_read.value == 10
            assert metrics.moves_accepted.value == 10


async def test_a_burst_of_moves_is_answered_in_order_without_the_task(redis_url: str) -> None:
    """A client that does not wait for each answer: every move but the first waits for the
    verdict on the one before it, in the lane."""
    async with served_app(redis_url) as (app, url):
        room = (await create_room(url, seed=SEED, seats=1, countdown=0))["id"]
        async with WsClient.connect(url) as ann:
            await race_alone(ann, room)
            moves = walk(12)
            for seq, move in enumerate(moves, 1):
                await ann.send(p.Move(seq=seq, move=move))
            answers = [await ann.expect(p.Accepted) for _ in moves]
            assert [a.seq for a in answers] == list(range(1, 13))
            assert [a.move for a in answers] == moves
            assert app[METRICS].moves_on_read.value == 12
            await ann.send(p.Resync())
            snapshot = await ann.expect(p.Snapshot)
            assert snapshot.moves == moves


async def test_a_message_sent_behind_moves_is_answered_after_them(redis_url: str) -> None:
    """A ping and an illegal move sent right behind moves still waiting for Redis are
    answered after those moves, in the order sent."""
    async with served_app(redis_url) as (_app, url):
        room = (await create_room(url, seed=SEED, seats=1, countdown=0))["id"]
        async with WsClient.connect(url) as ann:
            await race_alone(ann, room)
            first, second = walk(2)
            frames = [
                msgpack.packb({"type": "move", "v": 1, "seq": 1, "move": first}),
                msgpack.packb({"type": "ping", "v": 1, "id": 7}),
                msgpack.packb({"type": "move", "v": 1, "seq": 2, "move": "no such move"}),
                msgpack.packb({"type": "move", "v": 1, "seq": 3, "move": second}),
            ]
            for frame in frames:
                await ann.send_raw(frame)
            answers = []
            while len(answers) < 4:
                message = await ann.recv()
                if isinstance(message, p.Accepted | p.Refused | p.Pong):
                    answers.append(message)
            assert [type(a) for a in answers] == [p.Accepted, p.Pong, p.Refused, p.Accepted]
            assert isinstance(answers[2], p.Refused) and answers[2].code == "illegal_move"
            assert [answers[0].seq, answers[3].seq] == [1, 3]  # type: ignore[union-attr]


async def test_a_move_refused_as_it_is_read_leaves_the_board_as_it_was(redis_url: str) -> None:
    async with served_app(redis_url) as (app, url):
        room = (await create_room(url, seed=SEED, seats=1, countdown=0))["id"]
        async with WsClient.connect(url, binary=False) as ann:
            await race_alone(ann, room)
            first, second = walk(2)
            await ann.send_raw(json.dumps({"type": "move", "v": 1, "seq": 1, "move": "t9 c9"}))
            refused = await ann.expect(p.Refused)
            assert (refused.seq, refused.code) == (1, "illegal_move")
            await ann.play([first, second], first_seq=2)
            await ann.send(p.Resync())
            assert (await ann.expect(p.Snapshot)).moves == [first, second]
            assert app[METRICS].moves_on_read.value == 3


async def test_a_move_is_answered_in_its_own_format_whatever_follows_it(redis_url: str) -> None:
    """Each answer in the format of the frame it answers: a msgpack move still waiting
    for Redis when a JSON message comes behind it is answered in msgpack."""
    async with served_app(redis_url) as (_app, url):
        room = (await create_room(url, seed=SEED, seats=1, countdown=0))["id"]
        async with WsClient.connect(url) as ann:
            await race_alone(ann, room)
            (first,) = walk(1)
            await ann.send_raw(msgpack.packb({"type": "move", "v": 1, "seq": 1, "move": first}))
            await ann.send_raw(json.dumps({"type": "ping", "v": 1, "id": 4}))
            formats: dict[str, type] = {}
            while len(formats) < 2:
                raw = await ann.ws.recv()
                data = msgpack.unpackb(raw) if isinstance(raw, bytes) else json.loads(raw)
                if data["type"] in ("accepted", "pong"):
                    formats[data["type"]] = type(raw)
            assert formats == {"accepted": bytes, "pong": str}
