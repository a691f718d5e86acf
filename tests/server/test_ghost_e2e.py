"""A ghost race on a real server over real WebSockets: the ghost of a finished race moves
by its recorded times, cannot be sat in, and the race ends with the result those recorded
times imply."""

import asyncio

from support.finished import archived_replay, finish_race
from support.http import create_room, get_json, get_text, post_json
from support.players import new_player
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from core import splits
from core.replay import verify
from server.edge.routes import UNKNOWN_GAME
from server.room.ghost import steps_of

SEED = 617


async def test_a_ghost_race_ends_as_the_recorded_times_imply(make_server: MakeServer) -> None:
    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    # The recorded race: ann wins it.
    source = (await create_room(url, seed=SEED, seats=1))["id"]
    status, body = await post_json(f"{url}/rooms", {"ghost": source})
    assert status == 409 and body["error"]["code"] == "not_finished"  # type: ignore[index]
    line = core.solve(core.new_game("shaula", SEED)).moves
    async with WsClient.connect(url) as ann:
        await ann.join(source, "ann")
        await ann.send(p.Start())
        await ann.expect(p.RaceStarted)
        for seq, move in enumerate(line, start=1):
            await ann.send(p.Move(seq=seq, move=move))
            assert isinstance(await ann.expect_any((p.Accepted, p.Refused)), p.Accepted)
        await ann.expect(p.RaceFinished)
    _, text = await get_text(f"{url}/rooms/{source}/replay")
    recorded = verify(text)
    steps = steps_of(recorded, 0)

    status, created = await post_json(f"{url}/rooms", {"ghost": source.upper(), "countdown": 0})
    assert status == 201, created
    room = created["room"]
    assert isinstance(room, dict) and room["ghost"] == source and room["seed"] is None
    assert [(pl["seat"], pl["name"], pl["ghost"]) for pl in room["players"]] == [
        (1, "ann's ghost", True)
    ]
    async with WsClient.connect(url) as bo, WsClient.connect(url) as thief:
        welcome = await bo.join(room["id"], "bo")
        assert welcome.seat == 0
        # Nobody takes the ghost's seat: the room is full.
        await thief.send(p.Join(room=room["id"], name="thief"))
        refused = await thief.expect(p.Error)
        assert refused.code == "room_full"
        await bo.send(p.Ready())
        started = await bo.expect(p.RaceStarted)
        assert started.seed == SEED
        # The ghost's progress comes by its recorded times, one event per recorded move,
        # each at its move's recorded time.
        first = await bo.expect(p.Progress)
        second = await bo.expect(p.Progress)
        assert first.seat == second.seat == 1 and first.move is None
        snapshot = await get_json(f"{url}/rooms/{room['id']}")
        start_at = snapshot[1]["room"]["start_at"]
        for event, step in zip((first, second), steps, strict=False):
            assert (event.progress, event.moves) == (step[1], step[2])
            assert abs(event.at - start_at - step[0]) < 0.002
        await bo.send(p.Resign())
        finished = await bo.expect(p.RaceFinished)
    by_seat = {r["seat"]: r for r in finished.results}
    assert (by_seat[1]["rank"], by_seat[1]["won"]) == (1, True)
    assert by_seat[1]["time"] == recorded.results[0]["time"]
    assert by_seat[1]["splits"] == list(splits.of_replay(recorded)[0])
    assert (by_seat[0]["rank"], by_seat[0]["out"]) == (2, "resigned")
    # A ghost of the archived race, by its id: the same run.
    await archived_replay(url, f"{source}.1")
    status, again = await post_json(f"{url}/rooms", {"ghost": f"{source}.1"})
    assert status == 201 and again["room"]["ghost"] == f"{source}.1"  # type: ignore[index]
    status, body = await post_json(f"{url}/rooms", {"ghost": f"{source}.1", "seed": SEED + 1})
    assert status == 400 and body["error"]["code"] == "bad_request"  # type: ignore[index]
    status, body = await post_json(f"{url}/rooms", {"ghost": f"{source}.7"})
    assert status == 404 and body["error"]["code"] == "unknown_race"  # type: ignore[index]


async def test_a_ghost_race_refuses_a_rating_and_an_unknown_game_in_its_own_terms(
    server_url: str,
) -> None:
    source = await finish_race(server_url)
    status, body = await post_json(f"{server_url}/rooms", {"ghost": source, "rated": True})
    assert status == 400, body
    assert body["error"] == {"code": "bad_request", "message": "a ghost race is never rated"}
    # An unknown game is `bad_game` wherever a game is named, a ghost race's too.
    status, body = await post_json(f"{server_url}/rooms", {"ghost": source, "game": "bogus"})
    assert status == 400 and body["error"]["code"] == "bad_game", body
    # Of one's "best" too: the game given is named no game, not said to be missing.
    for game in ("bogus", "SHAULA"):
        status, body = await post_json(f"{server_url}/rooms", {"ghost": "best", "game": game})
        assert status == 400 and body["error"] == {"code": "bad_game", "message": UNKNOWN_GAME}
    status, body = await post_json(f"{server_url}/rooms", {"ghost": "best"})
    assert status == 400 and body["error"] == {
        "code": "bad_game",
        "message": 'a ghost of your "best" needs the game',
    }
    status, body = await post_json(f"{server_url}/rooms", {"ghost": source, "rated": False})
    assert status == 201 and body["room"]["rated"] is False, body
    # A ghost's seat without a ghost race to take it from is refused, not dropped.
    status, body = await post_json(f"{server_url}/rooms", {"game": "shaula", "ghost_seat": 1})
    assert status == 400 and body["error"] == {
        "code": "bad_request",
        "message": "ghost_seat picks a racer of the race in ghost: give ghost too",
    }


async def test_a_ghost_of_ones_best_is_ones_own_run(make_server: MakeServer) -> None:
    # ann's fastest win is a race that bo won faster: her "best" ghost is her own run,
    # not the race's fastest winner.
    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    key, ann_player = await new_player(url, "ann")
    room = (await create_room(url, seed=SEED, seats=2, countdown=0, rated=False))["id"]
    line = core.solve(core.new_game("shaula", SEED)).moves
    async with WsClient.connect(url) as ann, WsClient.connect(url) as bo:
        await ann.send(p.Identify(key=key))
        await ann.expect(p.Identified)
        assert (await ann.join(room)).seat == 0
        await bo.join(room, "bo")
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        await ann.expect(p.RaceStarted)
        for who in (bo, ann):  # bo wins first, then ann
            for seq, move in enumerate(line, start=1):
                await who.send(p.Move(seq=seq, move=move))
                assert isinstance(await who.expect_any((p.Accepted, p.Refused)), p.Accepted)
        finished = await ann.expect(p.RaceFinished)
    assert [(r["seat"], r["won"]) for r in finished.results] == [(1, True), (0, True)]
    await archived_replay(url, f"{room}.1")
    headers = {"Authorization": f"Bearer {key}"}
    status, body = await post_json(f"{url}/rooms", {"ghost": "best", "game": "shaula"}, headers)
    assert status == 201, body
    ghost = body["room"]["players"]
    assert [(pl["seat"], pl["name"]) for pl in ghost] == [(1, f"{ann_player['name']}'s ghost")]
    # Another racer of that race, named: theirs.
    status, body = await post_json(
        f"{url}/rooms", {"ghost": "best", "game": "shaula", "ghost_seat": 1}, headers
    )
    assert status == 201 and body["room"]["players"][0]["name"] == "bo's ghost", body


async def test_a_ghost_race_keeps_its_time_limit(make_server: MakeServer) -> None:
    # The recorded run wins after 1.5 s; its ghost race has a 1 s limit. The live player
    # resigns at once: the ghost runs on only as far as the limit lets it, so it has not
    # won, and the race ends at once, time up, with no move of the ghost's after the limit.
    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    source = (await create_room(url, seed=SEED, seats=1))["id"]
    line = core.solve(core.new_game("shaula", SEED)).moves
    async with WsClient.connect(url) as ann:
        await race_alone(ann, source)
        await ann.play(line[:-1])
        await asyncio.sleep(1.5)
        await ann.play(line[-1:], first_seq=len(line))
        recorded = await ann.expect(p.RaceFinished)
    assert recorded.results[0]["won"] and recorded.results[0]["time"] > 1.5
    _, text = await get_text(f"{url}/rooms/{source}/replay")
    within = [step for step in steps_of(verify(text), 0) if step[0] <= 1.0]

    status, created = await post_json(
        f"{url}/rooms", {"ghost": source, "countdown": 0, "time_limit": 1}
    )
    assert status == 201, created
    room = created["room"]["id"]
    async with WsClient.connect(url) as bo:
        await race_alone(bo, room, "bo")  # the ghost is always ready
        await bo.send(p.Resign())
        finished = await bo.expect(p.RaceFinished)
    assert finished.reason == "time_up"
    ghost = next(r for r in finished.results if r["seat"] == 1)
    assert (ghost["won"], ghost["time"], ghost["out"]) == (False, None, None)
    assert (ghost["progress"], ghost["moves"]) == tuple(within[-1][1:3])
    status, replay_text = await get_text(f"{url}/rooms/{room}/replay")
    assert status == 200
    again = verify(replay_text)
    assert again.header["finish_reason"] == "time_up"
    assert [t for seat, _, t in again.moves if seat == 1] == [step[0] for step in within]
    replayed = next(r for r in again.results if r["seat"] == 1)
    assert (replayed["won"], replayed["progress"]) == (False, ghost["progress"])


async def test_a_delayed_spectator_sees_the_ghost_where_it_was_in_the_race_shown(
    make_server: MakeServer,
) -> None:
    """Section 5: with a spectator delay, a snapshot's players are the race's as of its
    `version`. The ghost has no board, so it was shown as far as it had run by now (moves,
    progress, splits), ahead of the race shown, and then taken back by its own pending
    `progress` events as each came due."""
    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    source = (await create_room(url, seed=SEED, seats=1, countdown=0))["id"]
    line = core.solve(core.new_game("shaula", SEED)).moves
    async with WsClient.connect(url) as ann:
        await race_alone(ann, source)
        await ann.play(line[:1])
        await asyncio.sleep(1.5)  # the rest of the recorded run comes 1.5 s after its start
        await ann.play(line[1:], first_seq=2)
        await ann.expect(p.RaceFinished)
    _, text = await get_text(f"{url}/rooms/{source}/replay")
    first_step = steps_of(verify(text), 0)[0]

    status, created = await post_json(
        f"{url}/rooms", {"ghost": source, "countdown": 0, "spectator_delay": 1.0}
    )
    assert status == 201, created
    room = created["room"]["id"]
    async with WsClient.connect(url) as bo, WsClient.connect(url) as late:
        await race_alone(bo, room, "bo")
        while (await bo.expect(p.Progress)).moves < 5:  # the ghost's run went on, 1.5 s in
            pass
        await late.send(p.Watch(room=room))  # the race shown: about 0.5 s in
        snapshot = await late.expect(p.Snapshot)
        ghost = next(pl for pl in snapshot.room["players"] if pl["ghost"])
        assert (ghost["moves"], ghost["progress"]) == (1, first_step[1]), ghost
        assert ghost["splits"] == [None, None, None, None]
        pending = await late.expect(p.Progress)
        assert (pending.seat, pending.moves) == (ghost["seat"], 2)
