"""Splits on the live path: a race over real WebSockets and a real Redis records each
racer's splits, and they are exactly those recomputed from the race's replay."""

from support.finished import archived_replay
from support.http import create_room, get_json, get_text
from support.players import new_player
from support.servers import MakeServer
from support.wsclient import WsClient, seat_two_and_watch

import core
import protocol as p
from core import splits
from core.replay import verify
from core.solver import solve


async def test_a_races_splits_equal_those_recomputed_from_its_replay(
    make_server: MakeServer,
) -> None:
    server_url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    room = (await create_room(server_url, seed=617))["id"]
    line = solve(core.new_game("shaula", 617)).moves
    async with (
        WsClient.connect(server_url) as ann,
        WsClient.connect(server_url) as bo,
        WsClient.connect(server_url) as spy,
    ):
        await seat_two_and_watch(room, ann, bo, spy)
        await ann.expect(p.RaceStarted)
        board = core.new_game("shaula", 617)
        seq = 0
        undone = False
        for move in line:
            seq += 1
            await ann.send(p.Move(seq=seq, move=move))
            assert isinstance(await ann.expect_any((p.Accepted, p.Refused)), p.Accepted)
            board.apply(move)
            if board.progress == 14 and not undone:
                # Back below the first mark and up again: the split stays the first time.
                undone = True
                seq += 1
                await ann.send(p.Undo(seq=seq))
                assert isinstance(await ann.expect_any((p.Accepted, p.Refused)), p.Accepted)
                seq += 1
                await ann.send(p.Move(seq=seq, move=move))
                assert isinstance(await ann.expect_any((p.Accepted, p.Refused)), p.Accepted)
        # bo gets past the first mark too, then resigns.
        bo_board = core.new_game("shaula", 617)
        for index, move in enumerate(line, start=1):
            await bo.send(p.Move(seq=index, move=move))
            assert isinstance(await bo.expect_any((p.Accepted, p.Refused)), p.Accepted)
            bo_board.apply(move)
            if bo_board.progress >= 20:
                break
        await bo.send(p.Resign())
        finished = await spy.expect(p.RaceFinished)

    assert undone
    # The live events: a progress event carries the splits on each move that reached one.
    live = [m for m in spy.seen if isinstance(m, p.Progress) and m.splits is not None]
    ann_live = [m.splits for m in live if m.seat == 0]
    assert len(ann_live) == 4 and ann_live[-1] is not None and None not in ann_live[-1]

    status, text = await get_text(f"{server_url}/rooms/{room}/replay")
    assert status == 200
    recomputed = splits.of_replay(verify(text))
    by_seat = {r["seat"]: r for r in finished.results}
    assert by_seat[0]["splits"] == list(recomputed[0]) == ann_live[-1]
    assert by_seat[1]["splits"] == list(recomputed[1])
    assert by_seat[0]["splits"][3] is not None and by_seat[1]["splits"][0] is not None
    assert bo_board.progress < 52 and by_seat[1]["splits"][3] is None
    # The room view and the results endpoint carry the same.
    status, body = await get_json(f"{server_url}/rooms/{room}")
    assert [pl["splits"] for pl in body["room"]["players"]] == [
        list(recomputed[0]),
        list(recomputed[1]),
    ]


async def test_a_seated_player_is_told_their_own_best_splits_and_nobody_else_is(
    make_server: MakeServer,
) -> None:
    """The `welcome` of an identified player's seat carries their best run in the room's
    game (the profile's `best`, in seconds like the live splits); another player's, a
    spectator's and an anonymous seat's carry none of it."""
    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    (ann_key, _), (bo_key, _) = await new_player(url), await new_player(url)
    first = (await create_room(url, seed=617, seats=1))["id"]
    line = solve(core.new_game("shaula", 617)).moves
    async with WsClient.connect(url) as ann:
        await ann.send(p.Identify(key=ann_key))
        await ann.expect(p.Identified)
        welcome = await ann.join(first)
        assert welcome.best is None  # nothing on record yet
        await ann.send(p.Start())
        await ann.expect(p.RaceStarted)
        for seq, move in enumerate(line, start=1):
            await ann.send(p.Move(seq=seq, move=move))
            assert isinstance(await ann.expect_any((p.Accepted, p.Refused)), p.Accepted)
        finished = await ann.expect(p.RaceFinished)
    await archived_replay(url, f"{first}.1")
    [result] = finished.results
    expected = {
        "game": "shaula",
        "race": f"{first}.1",
        "time": result["time"],
        "splits": result["splits"],
    }
    room = (await create_room(url, seed=617, seats=3))["id"]
    moojub = (await create_room(url, game="moojub", seats=2))["id"]
    async with (
        WsClient.connect(url) as ann,
        WsClient.connect(url) as bo,
        WsClient.connect(url) as anonymous,
        WsClient.connect(url) as spy,
    ):
        for client, key in ((ann, ann_key), (bo, bo_key)):
            await client.send(p.Identify(key=key))
            await client.expect(p.Identified)
        assert (await ann.join(room)).best == expected
        assert (await bo.join(room)).best is None  # bo has no race on record
        assert (await anonymous.join(room, "cy")).best is None
        await spy.send(p.Watch(room=room))
        assert (await spy.expect(p.Welcome)).best is None
        seen = [m for c in (bo, anonymous, spy) for m in await c.everything()]
        assert f"{first}.1" not in repr(seen)  # ann's best went to ann alone
    async with WsClient.connect(url) as ann:
        await ann.send(p.Identify(key=ann_key))
        await ann.expect(p.Identified)
        assert (await ann.join(room)).best == expected  # back in her seat: again
    async with WsClient.connect(url) as ann:
        await ann.send(p.Identify(key=ann_key))
        await ann.expect(p.Identified)
        assert (await ann.join(moojub)).best is None  # her best is Shaula's
