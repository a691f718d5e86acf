"""Race rules over the wire: hidden information, spectator delay, grace, time limit, rematch."""

import json
import time

from support.http import create_room, get_json
from support.servers import MakeServer
from support.wsclient import WsClient, finished_pair, race_alone, seat_two_and_watch

import core
import protocol as p
from server.room.view import shown_board


def no_talon(messages: list[p.Message]) -> bool:
    """Neither the talon nor the seed (which gives the talon's order) was sent."""
    text = json.dumps([p.to_wire(m) for m in messages])
    return '"talon"' not in text and '"seed": 845' not in text


async def test_moojub_never_sends_the_talon_or_the_seed_during_the_race(server_url: str) -> None:
    room = (await create_room(server_url, game="moojub", seed=845))["id"]
    game = core.new_game("moojub", 845)
    async with (
        WsClient.connect(server_url) as ann,
        WsClient.connect(server_url) as bo,
        WsClient.connect(server_url) as spy,
    ):
        await seat_two_and_watch(room, ann, bo, spy)
        started = await ann.expect(p.RaceStarted)
        assert started.seed is None and started.board == game.state(view="player")
        await ann.send(p.Move(seq=1, move="deal"))
        accepted = await ann.expect(p.Accepted)
        game.apply("deal")
        assert accepted.board == game.state(view="player")
        watched = await spy.expect(p.Progress)
        # bo has not been dealt the cards ann was: spectators see them face down.
        undealt = frozenset(core.new_game("moojub", 845).state(view="full")["talon"])
        assert watched.move == "deal"
        assert watched.board == shown_board(game.state(view="player"), undealt)
        other = await bo.expect(p.Progress)
        assert other.board is None and other.move is None
        for c in (ann, bo, spy):
            await c.quiet(0.2)
            assert no_talon(c.seen)
            assert all(m.room["seed"] is None for m in c.seen if isinstance(m, p.Snapshot))
        await ann.send(p.Resign())
        await bo.send(p.Resign())
        assert (await spy.expect(p.RaceFinished)).seed == 845


async def test_spectators_see_boards_after_the_delay(server_url: str) -> None:
    room = (await create_room(server_url, seed=77, seats=1, spectator_delay=0.6))["id"]
    game = core.new_game("shaula", 77)
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as spy:
        await race_alone(ann, room)
        move = game.legal_moves()[0]
        await ann.send(p.Move(seq=1, move=move))
        accepted = await ann.expect(p.Accepted)
        moved_at = time.time()
        await spy.send(p.Watch(room=room))
        snap = await spy.expect(p.Snapshot)
        if time.time() < moved_at + 0.5:  # still within the delay: the old board
            assert snap.version < accepted.version
            if snap.boards is not None:  # the start is older than the delay: the deal
                assert snap.boards["0"] == core.new_game("shaula", 77).state(view="player")
            else:  # the start is within the delay too: the room as it was, then the deal
                assert snap.room["status"] in ("lobby", "countdown"), snap.room
                assert (await spy.expect(p.RaceStarted)).seed == 77
            progress = await spy.expect(p.Progress)
            assert time.time() >= progress.at + 0.6 - 0.05
            assert progress.move == move


async def test_a_racer_who_stays_away_forfeits_after_the_grace(server_url: str) -> None:
    room = (await create_room(server_url, grace=0.5))["id"]
    async with WsClient.connect(server_url) as ann:
        await ann.join(room, "ann")
        async with WsClient.connect(server_url) as bo:
            await bo.join(room, "bo")
            await ann.send(p.Ready())
            await bo.send(p.Ready())
            await ann.expect(p.RaceStarted)
        gone = await ann.expect(p.Presence)
        assert gone.seat == 1 and gone.grace_until is not None
        out = await ann.expect(p.PlayerOut)
        assert (out.seat, out.reason) == (1, "forfeit")
        assert out.at >= gone.grace_until
        await ann.send(p.Resign())
        finished = await ann.expect(p.RaceFinished)
        assert [r["out"] for r in finished.results] == ["resigned", "forfeit"]


async def test_a_player_away_when_a_rematch_counts_down_is_told_their_grace(
    server_url: str,
) -> None:
    """ann voted for the rematch and closed her page: when bo's vote starts the new round,
    the room says when she forfeits (a `presence` with `grace_until`), as it does for a
    racer who drops during a countdown, before she forfeits at that time."""
    room = (await create_room(server_url, grace=1.0, countdown=0.5))["id"]
    async with WsClient.connect(server_url) as bo:
        async with WsClient.connect(server_url) as ann:
            await finished_pair(room, ann, bo)
            await ann.send(p.Rematch())
            await bo.expect(p.RematchVote)
        gone = await bo.expect(p.Presence)
        assert (gone.seat, gone.connected, gone.grace_until) == (0, False, None)  # no race on
        await bo.send(p.Rematch())
        countdown = await bo.expect(p.Countdown)
        told = await bo.expect_any((p.Presence, p.RaceStarted))
        assert isinstance(told, p.Presence), told
        assert (told.seat, told.connected) == (0, False)
        assert told.grace_until == countdown.at + 1.0
        status, shown = await get_json(f"{server_url}/rooms/{room}")
        assert status == 200 and shown["room"]["players"][0]["grace_until"] == told.grace_until
        out = await bo.expect(p.PlayerOut)
        assert (out.seat, out.reason) == (0, "forfeit") and out.at >= told.grace_until


async def test_the_time_limit_ends_the_race(make_server: MakeServer) -> None:
    url = await make_server()
    room = (await create_room(url, seats=1, time_limit=1))["id"]
    async with WsClient.connect(url) as ann:
        await ann.join(room, "ann")
        await ann.send(p.Start())
        started = await ann.expect(p.RaceStarted)
        assert started.ends_at is not None
        finished = await ann.expect(p.RaceFinished)
        assert finished.reason == "time_up" and finished.at >= started.ends_at


async def test_rematch_deals_a_new_seed_to_the_same_players(server_url: str) -> None:
    room = (await create_room(server_url, seed=12))["id"]
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as bo:
        await ann.join(room, "ann")
        await bo.join(room, "bo")
        await ann.send(p.Rematch())
        assert (await ann.expect(p.Error)).code == "not_finished"
        await ann.send(p.Ready())
        await bo.send(p.Ready())
        await ann.expect(p.RaceStarted)
        await ann.send(p.Move(seq=1, move=core.new_game("shaula", 12).legal_moves()[0]))
        await ann.expect(p.Accepted)
        await ann.send(p.Resign())
        await bo.send(p.Resign())
        await ann.expect(p.RaceFinished)
        await bo.send(p.Leave())  # after the end the seat stays, and the refusal says so
        refused = await bo.expect(p.Error)
        assert refused.code == "not_running" and "over" in refused.message, refused
        await ann.send(p.Rematch())
        await bo.send(p.Rematch())
        new_round = await ann.expect(p.NewRound)
        assert new_round.round == 2
        await bo.expect(p.NewRound)
        started = await bo.expect(p.RaceStarted)
        assert started.seed is not None and started.seed != 12
        # A fresh board, and seq numbers go on from where they were.
        game = core.new_game("shaula", started.seed)
        await ann.send(p.Move(seq=2, move=game.legal_moves()[0]))
        accepted = await ann.expect(p.Accepted)
        assert accepted.moves == 1


async def test_moojub_spectators_keep_their_boards_after_a_rematch(server_url: str) -> None:
    room = (await create_room(server_url, game="moojub", seed=845, seats=1))["id"]
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as spy:
        await ann.join(room, "ann")
        await spy.send(p.Watch(room=room))
        await spy.expect(p.Snapshot)
        await ann.send(p.Start())
        await ann.expect(p.RaceStarted)
        await ann.send(p.Resign())
        await ann.expect(p.RaceFinished)
        await ann.send(p.Rematch())
        await spy.expect(p.NewRound)
        await spy.expect(p.RaceStarted)
        await ann.expect(p.RaceStarted)
        await ann.send(p.Move(seq=1, move="deal"))
        accepted = await ann.expect(p.Accepted)
        watched = await spy.expect(p.Progress)
        assert watched.board is not None and watched.board == accepted.board


async def test_a_player_who_stays_away_without_voting_does_not_hold_the_rematch_up(
    server_url: str,
) -> None:
    """bo closed his page after the end without voting: once everyone else has voted he
    has the room's grace to come back (a `presence` with `grace_until`); then his seat is
    freed (`player_left`) and the rematch deals to those who voted."""
    room = (await create_room(server_url, grace=1.0, countdown=0.5))["id"]
    async with WsClient.connect(server_url) as ann:
        async with WsClient.connect(server_url) as bo:
            await finished_pair(room, ann, bo)
        gone = await ann.expect(p.Presence)
        assert (gone.seat, gone.connected, gone.grace_until) == (1, False, None)  # no vote yet
        await ann.send(p.Rematch())
        vote = await ann.expect(p.RematchVote)
        told = await ann.expect(p.Presence)
        assert (told.seat, told.connected, told.grace_until) == (1, False, vote.at + 1.0)
        status, shown = await get_json(f"{server_url}/rooms/{room}")
        assert status == 200 and shown["room"]["players"][1]["grace_until"] == told.grace_until
        left = await ann.expect(p.PlayerLeft)
        assert left.seat == 1 and left.at >= told.grace_until
        assert (await ann.expect(p.NewRound)).round == 2
        await ann.expect(p.Countdown)
        assert (await ann.expect(p.RaceStarted)).seed is not None
    status, shown = await get_json(f"{server_url}/rooms/{room}")
    assert [pl["name"] for pl in shown["room"]["players"]] == ["ann"]
    assert shown["room"]["round"] == 2


async def test_a_player_back_within_the_grace_after_the_end_is_waited_for(
    server_url: str,
) -> None:
    """bo went away after ann's vote (his grace runs from then), came back in time (no
    grace: the rematch waits for his vote again), and voted: both race the new round."""
    room = (await create_room(server_url, grace=1.5, countdown=0.5))["id"]
    async with WsClient.connect(server_url) as ann:
        async with WsClient.connect(server_url) as bo:
            _, token = await finished_pair(room, ann, bo)
            await ann.send(p.Rematch())
            await bo.expect(p.RematchVote)
        gone = await ann.expect(p.Presence)
        assert (gone.seat, gone.connected) == (1, False) and gone.grace_until is not None
        async with WsClient.connect(server_url) as bo:
            await bo.join(room, token=token)
            back = await ann.expect(p.Presence)
            assert (back.seat, back.connected, back.grace_until) == (1, True, None)
            meanwhile = await ann.quiet(2.0)  # past the grace he had: his seat, no new round
            assert not [m for m in meanwhile if isinstance(m, (p.PlayerLeft, p.NewRound))]
            await bo.send(p.Rematch())
            assert (await ann.expect(p.NewRound)).round == 2
    status, shown = await get_json(f"{server_url}/rooms/{room}")
    assert status == 200 and [pl["name"] for pl in shown["room"]["players"]] == ["ann", "bo"]


async def test_a_rematch_with_every_voter_away_deals_once_one_is_back(server_url: str) -> None:
    """ann voted and left; bo, who never voted, stayed away past his grace: his seat is
    freed, but the round is not dealt to nobody (ann would forfeit it); her return deals it."""
    room = (await create_room(server_url, grace=1.0, countdown=0.5))["id"]
    async with WsClient.connect(server_url) as ann, WsClient.connect(server_url) as bo:
        token, _ = await finished_pair(room, ann, bo)
    async with WsClient.connect(server_url) as spy:
        await spy.send(p.Watch(room=room))
        await spy.expect(p.Snapshot)
        async with WsClient.connect(server_url) as ann:
            await ann.join(room, token=token)
            await ann.send(p.Rematch())
            await spy.expect(p.RematchVote)
        left = await spy.expect(p.PlayerLeft)  # bo's grace ran out
        assert left.seat == 1
        meanwhile = await spy.quiet(1.5)
        assert not [m for m in meanwhile if isinstance(m, p.NewRound)], meanwhile
        status, shown = await get_json(f"{server_url}/rooms/{room}")
        assert status == 200 and shown["room"]["status"] == "finished"
        async with WsClient.connect(server_url) as ann:
            await ann.join(room, token=token)
            assert (await spy.expect(p.NewRound)).round == 2
            await spy.expect(p.Countdown)
            assert (await ann.expect(p.RaceStarted)).seed is not None
