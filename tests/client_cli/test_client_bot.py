"""The bot as a newcomer meets it (`solrace bot ROOM`), on a real server: it says truly how
it plays, and with `--rematch` it takes the rematch a player asks for."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from support.client_screen import screen_text
from support.redis_cluster import command
from textual.pilot import Pilot

from client_cli.__main__ import build_parser
from client_cli.bot import play_race
from client_cli.commands import create_room
from client_cli.race_app import RaceApp, ResultsScreen
from client_cli.seat import Seat
from client_cli.widgets import RaceBars
from protocol import Message, Snapshot


async def until(pilot: Pilot[Any], done: Callable[[], bool], timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not done():
            await pilot.pause(0.05)
    await pilot.pause()


@pytest.mark.timeout(60)
async def test_in_moojub_the_bot_says_it_plays_simply(server_url: str) -> None:
    # A race hides Moojub's talon: the bot cannot use the solver there, and must not say so.
    room = (await create_room(server_url, {"game": "moojub", "seats": 1, "countdown": 0}))["id"]
    said: list[str] = []
    seat = Seat(server_url, room, "robot")

    async def slowly(msg: Message) -> None:
        # The room (its game) comes in the snapshot, after the welcome: on a slow link,
        # later than the join itself is over.
        if isinstance(msg, Snapshot):
            await asyncio.sleep(0.3)
        await seat.receive(msg)

    seat.link.on_message = slowly
    task = asyncio.create_task(play_race(seat, 0.05, said.append))
    async with asyncio.timeout(20):
        while not said:
            await asyncio.sleep(0.05)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert "playing with the simple player" in said[0], said[0]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("seed", "verdict"),
    [(1, "playing the solver's winning line"), (84, "no winning line found")],
)
async def test_the_bot_says_whether_the_solver_found_a_line(
    server_url: str, seed: int, verdict: str
) -> None:
    # Joining, it only knows the game; once the deal is dealt and solved it says which.
    room = (
        await create_room(
            server_url, {"game": "stalactites", "seats": 1, "seed": seed, "countdown": 0}
        )
    )["id"]
    said: list[str] = []
    task = asyncio.create_task(play_race(Seat(server_url, room, "robot"), 0.05, said.append))
    try:
        async with asyncio.timeout(20):
            while not any(verdict in line for line in said):
                await asyncio.sleep(0.05)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    other = "no winning line found" if seed == 1 else "winning line"
    assert not any(other in line for line in said if verdict not in line), said


def test_the_bot_command_takes_rematch() -> None:
    args = build_parser().parse_args(["bot", "abc", "--rematch"])
    assert args.rematch is True
    assert build_parser().parse_args(["bot", "abc"]).rematch is False


@pytest.mark.timeout(90)
async def test_a_rematch_against_the_bot_starts_a_new_round(server_url: str) -> None:
    room = await create_room(
        server_url, {"game": "stalactites", "seed": 2, "seats": 2, "countdown": 0.5}
    )
    seat = Seat(server_url, room["id"], "ann")
    app = RaceApp(seat)
    said: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: seat.view.seat is not None)
        bot = asyncio.create_task(
            play_race(Seat(server_url, room["id"], "robot"), 0.05, said.append, rematch=True)
        )
        try:
            await until(pilot, lambda: len(seat.view.racers) == 2)
            await pilot.press("r")
            await until(pilot, lambda: seat.view.phase == "running")
            await pilot.press(*"resign", "enter")
            await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
            await pilot.press("m")  # the bot takes the rematch: round 2 starts
            await until(pilot, lambda: seat.view.round == 2 and seat.view.phase == "running")
            bars = app.query_one(RaceBars)
            await until(pilot, lambda: any(p.name == "robot" and p.moves > 0 for p in bars.players))
            assert not bot.done()
            assert "round 2" in screen_text(app)
            await pilot.press(*"resign", "enter")
            await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        except BaseException:
            bot.cancel()
            raise
    # Ann has gone without voting: the bot leaves too.
    assert await asyncio.wait_for(bot, 20) == 0
    assert any("rematch" in line for line in said), said
    assert said[-1] == "the others have gone: leaving"


async def test_the_rematch_line_says_who_has_left() -> None:
    from client_cli.race import Racer, RaceView
    from client_cli.race_app import rematch_text

    view = RaceView(room="r", seat=0, phase="finished")
    view.racers = {0: Racer(0, "ann", rematch=True), 1: Racer(1, "robot", connected=False)}
    assert "robot (gone)" in rematch_text(view)


@pytest.mark.timeout(60)
async def test_the_bot_stops_when_the_server_will_not_take_its_seat_back(
    server_url: str, redis_url: str
) -> None:
    # The room is gone while the link is down (Redis lost it): the bot's rejoin is refused
    # for good. It kept sending moves the server refused ("join or watch a room first"),
    # forever; it says why it stops and stops, as a first join refused does.
    room = await create_room(
        server_url, {"game": "stalactites", "seed": 2, "seats": 1, "countdown": 0}
    )
    said: list[str] = []
    seat = Seat(server_url, room["id"], "robot")
    bot = asyncio.create_task(play_race(seat, 0.3, said.append))
    async with asyncio.timeout(20):
        while not (seat.view.me is not None and seat.view.me.moves > 0):
            await asyncio.sleep(0.05)
    command(int(redis_url.rsplit(":", 1)[1].split("/")[0]), "FLUSHALL")
    await seat.link.drop()
    with pytest.raises(ConnectionError) as stopped:
        await asyncio.wait_for(bot, 20)
    assert "did not take this seat back" in str(stopped.value), str(stopped.value)
    assert "unknown_room" in str(stopped.value), str(stopped.value)
    assert not any("refused" in line for line in said), said


@pytest.mark.timeout(60)
async def test_the_bot_says_when_its_connection_drops_and_comes_back(server_url: str) -> None:
    # A server gone mid-race left the bot silent, its last line some progress, for as long
    # as the outage lasted: whoever runs it could not tell a waiting bot from a hung one.
    room = await create_room(
        server_url, {"game": "stalactites", "seed": 2, "seats": 1, "countdown": 0}
    )
    said: list[str] = []
    seat = Seat(server_url, room["id"], "robot")
    bot = asyncio.create_task(play_race(seat, 0.3, said.append))
    try:
        async with asyncio.timeout(20):
            while not (seat.view.me is not None and seat.view.me.moves > 0):
                await asyncio.sleep(0.05)
            await seat.link.drop()
            while "reconnected" not in said:
                await asyncio.sleep(0.05)
    finally:
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)
    drops = [line for line in said if line.startswith("reconnecting: ")]
    assert len(drops) == 1, said
    assert said.index(drops[0]) < said.index("reconnected"), said


@pytest.mark.timeout(90)
async def test_the_bot_taking_rematches_leaves_a_room_that_has_none(server_url: str) -> None:
    # A ghost race has no rematch, and its ghost never leaves: with --rematch the bot
    # waited after the race for ever, for a vote that cannot come.
    room = await create_room(
        server_url, {"game": "stalactites", "seed": 2, "seats": 1, "countdown": 0}
    )
    assert (
        await asyncio.wait_for(
            play_race(Seat(server_url, room["id"], "robot"), 0.05, [].append), 30
        )
        == 0
    )
    ghost = await create_room(server_url, {"ghost": room["id"], "countdown": 0})
    said: list[str] = []
    seat = Seat(server_url, ghost["id"], "robot")
    assert await asyncio.wait_for(play_race(seat, 0.05, said.append, rematch=True), 30) == 0
    assert seat.view.phase == "finished"
    assert said[-1] == f"leaving: {seat.view.no_rematch}", said


@pytest.mark.timeout(60)
async def test_the_bots_lines_count_moves_as_people_do(server_url: str) -> None:
    # Its first line of progress read "1/48 cards after 1 moves".
    room = await create_room(
        server_url, {"game": "stalactites", "seed": 2, "seats": 1, "countdown": 0}
    )
    said: list[str] = []
    assert (
        await asyncio.wait_for(
            play_race(Seat(server_url, room["id"], "robot"), 0.05, said.append), 30
        )
        == 0
    )
    assert any(line.endswith("cards after 1 move") for line in said), said


@pytest.mark.timeout(90)
async def test_the_bot_says_when_it_is_out_and_how_each_racer_ended(server_url: str) -> None:
    # Forfeited while its link was down, the bot went on in silence; and its results said
    # "(won)" or nothing: a racer who resigned read like one still racing at the end.
    room = await create_room(
        server_url, {"game": "stalactites", "seed": 2, "seats": 2, "countdown": 0, "grace": 1}
    )
    ann = Seat(server_url, room["id"], "ann")
    await ann.start()
    said: list[str] = []
    seat = Seat(server_url, room["id"], "robot")
    bot = asyncio.create_task(play_race(seat, 0.3, said.append))
    try:
        await ann.ready(True)
        async with asyncio.timeout(20):
            while not (seat.view.me is not None and seat.view.me.moves > 0):
                await asyncio.sleep(0.05)
            url, seat.link.url = seat.link.url, "ws://127.0.0.1:9/ws"  # the network is cut
            await seat.link.drop()
            while not any(r.out for r in ann.view.racers.values()):
                await asyncio.sleep(0.05)
            seat.link.url = url  # back
            while "out of the race: forfeit" not in said:
                await asyncio.sleep(0.05)
        await ann.resign()
        assert await asyncio.wait_for(bot, 20) == 0
    finally:
        bot.cancel()
        await ann.close()
    assert any(line.startswith("#") and "ann" in line and "(resigned)" in line for line in said)
    assert any(line.startswith("#") and "robot" in line and "(forfeit)" in line for line in said)
