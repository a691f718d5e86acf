"""GET /rooms/{room}/replay/boards: a finished race's boards, step by step, computed by the
engine for the replay page; each step applied in turn gives the engine's board."""

import copy

from support.finished import archived_replay
from support.http import create_room, get_json, get_text
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from core.replay import line_hash, verify


async def test_the_boards_of_every_step_are_the_engines(make_server: MakeServer) -> None:
    url = await make_server()
    room = (await create_room(url, game="stalactites", seed=16, seats=1))["id"]
    status, body = await get_json(f"{url}/rooms/{room}/replay/boards")
    assert status == 409 and body["error"]["code"] == "not_finished"
    async with WsClient.connect(url) as ann:
        await race_alone(ann, room)
        board = core.new_game("stalactites", 16)
        seq = 0
        for _ in range(6):
            move = board.legal_moves()[0]
            board.apply(move)
            seq += 1
            await ann.send(p.Move(seq=seq, move=move))
            assert isinstance(await ann.expect_any((p.Accepted, p.Refused)), p.Accepted)
        seq += 1
        await ann.send(p.Undo(seq=seq))
        assert isinstance(await ann.expect_any((p.Accepted, p.Refused)), p.Accepted)
        await ann.send(p.Resign())
        await ann.expect(p.RaceFinished)
    status, text = await get_text(f"{url}/rooms/{room}/replay")
    status, boards = await get_json(f"{url}/rooms/{room}/replay/boards")
    assert status == 200
    replay = verify(text)
    assert boards["replay_hash"] == line_hash(text.splitlines()[-1])
    assert len(boards["steps"]) == len(replay.moves) == 7
    shown = copy.deepcopy(boards["start"])
    engine = core.new_game("stalactites", 16)
    assert shown == engine.state(view="player")
    for step, (seat, move, _t) in zip(boards["steps"], replay.moves, strict=True):
        assert step["seat"] == seat == 0
        shown["piles"].update(step["piles"])
        engine.undo() if move == "undo" else engine.apply(move)
        assert shown["piles"] == engine.state(view="player")["piles"]
        assert (step["progress"], step["moves"]) == (engine.progress, engine.moves)
    assert boards["splits"] == {"0": [None, None, None, None]}
    status, body = await get_json(f"{url}/rooms/0badc0de/replay/boards")
    assert status == 404 and body["error"]["code"] == "unknown_room"
    # Once archived, the race's boards by its id are the same.
    await archived_replay(url, f"{room}.1")
    status, by_id = await get_json(f"{url}/races/{room}.1/replay/boards")
    assert status == 200 and by_id == boards
    # A race's id in any case names it, as a room's code does.
    status, by_upper = await get_json(f"{url}/races/{room.upper()}.1/replay/boards")
    assert status == 200 and by_upper == boards
    status, text = await get_text(f"{url}/races/{room.upper()}.1/replay")
    assert status == 200 and line_hash(text.splitlines()[-1]) == boards["replay_hash"]
    status, body = await get_json(f"{url}/races/{room}.9/replay/boards")
    assert status == 404 and body["error"]["code"] == "unknown_race"
