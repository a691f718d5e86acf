"""A whole race on a real server (started by the test suite): a player on the race
screen against the bot, from the lobby to the results table."""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.client_screen import screen_text
from support.finished import finish_race
from support.servers import served_app
from support.signals import interruptible
from support.wsclient import WsClient
from textual.pilot import Pilot

import protocol as p
from client_cli.__main__ import build_parser, parse_args
from client_cli.account import ensure_player
from client_cli.bot import play_race
from client_cli.cards import CardStyle
from client_cli.commands import choose_seat, create_room, default_name, get_room, list_rooms, run
from client_cli.memory import remember_seat, stored_seats
from client_cli.race_app import RaceApp, ResultsScreen, racer_status
from client_cli.seat import Seat
from client_cli.widgets import RaceBars
from server.edge.app_keys import STORE


async def until(pilot: Pilot[Any], done: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not done():
            await pilot.pause(0.05)
    await pilot.pause()


async def test_a_whole_race_against_the_bot(server_url: str) -> None:
    room = await create_room(
        server_url, {"game": "stalactites", "seed": 2, "seats": 2, "countdown": 0.5}
    )
    assert room["id"] in [r["id"] for r in await list_rooms(server_url)]
    said: list[str] = []
    spectator = Seat(server_url, room["id"], spectator=True)
    await spectator.start()
    seat = Seat(server_url, room["id"], "ann")
    app = RaceApp(seat)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: seat.view.seat is not None)
        assert f"solrace play {room['id']}" in screen_text(app)
        bot = asyncio.create_task(
            play_race(Seat(server_url, room["id"], "robot"), 0.05, said.append)
        )
        await until(pilot, lambda: len(seat.view.racers) == 2)
        await pilot.press("r")  # ready: with the bot ready too, the countdown starts
        await until(pilot, lambda: seat.view.phase == "running" and seat.view.board is not None)
        assert "t8" in screen_text(app)

        # Our move, typed, goes through the server; a refused one shows its reason.
        move = seat.view.legal_moves()[0]  # type: ignore[index]
        await pilot.press(*move, "enter")
        await until(pilot, lambda: seat.view.board is not None and seat.view.board["moves"] == 1)
        await pilot.press(*"c1 t1", "enter")
        await until(pilot, lambda: "✗ c1 t1" in screen_text(app))

        # The bot's bar moves as it plays, live.
        bars = app.query_one(RaceBars)
        await until(
            pilot, lambda: any(p.name == "robot" and p.progress >= 10 for p in bars.players)
        )

        # The bot wins; we resign: the race ends and the results come up.
        await until(pilot, lambda: seat.view.racers[1 - seat.view.seat].won)  # type: ignore[operator]
        await pilot.press(*"resign", "enter")
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        shown = screen_text(app)
        assert "robot" in shown and "ann (you)" in shown and "resigned" in shown
        assert seat.view.results[0]["name"] == "robot"
        assert await asyncio.wait_for(bot, 10) == 0
    assert any("playing with the" in line for line in said)
    assert said[-1].startswith("#2 ann")
    # The spectator replayed both boards from the moves alone, to the very end.
    watched = spectator.view
    assert watched.phase == "finished"
    assert watched.boards[1 - seat.view.seat]["won"]  # type: ignore[operator]
    assert watched.boards[seat.view.seat]["moves"] == 1  # type: ignore[index]
    await spectator.close()


async def test_a_race_ended_by_its_time_limit_says_so(server_url: str) -> None:
    # The end's reason (`time_up`) was kept and shown nowhere: the results of a race the
    # clock ended read like any other, every racer "unfinished"; nor did the bot say it.
    room = await create_room(
        server_url, {"game": "shaula", "seats": 2, "countdown": 0, "time_limit": 2}
    )
    said: list[str] = []
    seat = Seat(server_url, room["id"], "ann")
    app = RaceApp(seat)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: seat.view.seat is not None)
        bot = asyncio.create_task(play_race(Seat(server_url, room["id"], "robot"), 5, said.append))
        await until(pilot, lambda: len(seat.view.racers) == 2)
        await pilot.press("r")
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        assert "Results · Shaula" in screen_text(app) and "· time up" in screen_text(app)
        await pilot.press("escape")
        await until(pilot, lambda: "Race over (time up)" in screen_text(app))
        assert await asyncio.wait_for(bot, 10) == 0
    assert "race over: time up" in said, said
    watcher = Seat(server_url, room["id"], spectator=True)  # the room's snapshot says it too
    await watcher.start()
    try:
        async with asyncio.timeout(10):
            while watcher.view.phase != "finished":
                await asyncio.sleep(0.05)
        assert watcher.view.finish_reason == "time_up"
    finally:
        await watcher.close()


async def test_rooms_are_listed_and_a_seat_is_remembered(
    server_url: str,
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    room = (await create_room(server_url, {"game": "moojub", "seats": 3}))["id"]
    args = build_parser().parse_args(["--server", server_url, "--no-color", "rooms"])
    assert await asyncio.to_thread(run, args, CardStyle(color=False)) == 0
    listed = capsys.readouterr().out
    assert room in listed and "moojub" in listed and "lobby" in listed

    first = Seat(server_url, room, "ann")
    first.on_token = lambda t: remember_seat(server_url, room, "ann", t, first.view.seat)
    await first.start()
    assert first.view.token
    assert stored_seats(server_url, room)[0].token == first.view.token
    await first.close()

    # Back with the remembered token: the same seat. With a token the server does not
    # know: dropped, and a fresh seat taken.
    again = Seat(server_url, room, "ann", token=stored_seats(server_url, room)[0].token)
    await again.start()
    assert again.view.seat == first.view.seat
    stranger = Seat(server_url, room, "bo", token="not-a-token")
    await stranger.start()
    assert stranger.view.seat not in (None, first.view.seat) and stranger.view.token
    await again.close()
    await stranger.close()


async def racing_alone(server_url: str) -> Seat:
    """Ann, alone in a Shaula room (deal 617), racing."""
    room = (
        await create_room(server_url, {"game": "shaula", "seed": 617, "seats": 1, "countdown": 0})
    )["id"]
    seat = Seat(server_url, room, "ann")
    await seat.start()
    await seat.start_now()
    async with asyncio.timeout(10):
        while seat.view.phase != "running" or seat.view.board is None:
            await asyncio.sleep(0.05)
    return seat


async def test_a_restarted_client_moves_again_on_its_seat(server_url: str) -> None:
    # Its seq must start above the first run's, or the server answers old moves again.
    first = await racing_alone(server_url)
    room = first.view.room
    assert (await first.move("t8 c1")).ok
    assert (await first.move("t2 t5")).ok
    await first.close()
    again = Seat(server_url, room, "ann", token=first.view.token)
    await again.start()
    async with asyncio.timeout(10):
        while again.view.board is None:
            await asyncio.sleep(0.05)
    outcome = await again.move("t1 c2")
    assert outcome.ok and outcome.moves == ["t1 c2"]
    assert again.view.board is not None and again.view.board["piles"]["c2"] == ["4S"]


async def test_one_who_comes_in_while_a_racer_is_away_sees_when_they_forfeit(
    server_url: str,
) -> None:
    # The snapshot's seats carry `grace_until` (docs/protocol.md, the ROOM object): the
    # client read it only from `presence`, so a spectator (or a player back with a fresh
    # snapshot) saw "offline" with no "out in" countdown.
    ann = await racing_alone(server_url)
    await ann.close()
    watcher = Seat(server_url, ann.view.room, spectator=True)
    await watcher.start()
    try:
        async with asyncio.timeout(10):
            while not watcher.view.racers or watcher.view.racers[0].connected:
                await asyncio.sleep(0.05)
        view = watcher.view
        assert racer_status(view, view.racers[0], time.time()).startswith("offline, out in ")
    finally:
        await watcher.close()


async def test_a_quick_match_pairs_two_players_and_races(
    server_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    seat = Seat(server_url, "", "ann", quick="stalactites")
    app = RaceApp(seat)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: seat.view.phase == "queue")
        assert "Looking for an opponent for Stalactites" in screen_text(app)
        other = Seat(server_url, "", "bo", quick="stalactites")
        await other.start()
        await until(pilot, lambda: seat.view.phase == "running" and seat.view.board is not None)
        assert seat.view.room and seat.view.room == other.view.room
        assert {r.name for r in seat.view.racers.values()} == {"ann", "bo"}
        assert "t8" in screen_text(app)
        await other.close()


async def test_quitting_the_queue_as_an_opponent_is_found_keeps_the_player_in_the_race(
    redis_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """q in the queue cancels and waits for the server's word: a partner's process took
    ann's ticket a moment before (its pairing on its way to her), so no `unqueued` comes
    but the `matched`: ann is in the race and told so, where the program used to quit at
    once and leave her seated in a race she would forfeit."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    async with served_app(redis_url) as (server, url):
        store: Any = server[STORE]
        gate, told = asyncio.Event(), asyncio.Event()
        real_tell = store.tell_ticket

        async def held_tell(ticket: str, pairing: dict[str, Any]) -> None:
            told.set()
            await gate.wait()
            await real_tell(ticket, pairing)

        store.tell_ticket = held_tell
        seat = Seat(url, "", "ann", quick="shaula")
        app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot, WsClient.connect(url) as bo:
            await until(pilot, lambda: seat.view.phase == "queue")
            await bo.send(p.QuickMatch(game="shaula", name="bo"))
            await asyncio.wait_for(told.wait(), 5.0)  # ann's ticket is out of the queue
            await pilot.press("q")
            await pilot.pause(0.3)
            gate.set()
            await until(pilot, lambda: seat.view.phase in ("countdown", "running"))
            assert app.is_running
            assert "found as you cancelled" in " ".join(screen_text(app).split())


async def test_ctrl_c_stops_the_bot_cleanly(
    server_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))  # the bot's player key goes there
    room = (await create_room(server_url, {"game": "shaula", "seats": 2}))["id"]
    bot = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_cli",
        "bot",
        room.upper(),  # room codes are case-insensitive
        "--server",  # and --server may come after the subcommand
        server_url,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=interruptible,
    )
    assert bot.stdout is not None
    first = await asyncio.wait_for(bot.stdout.readline(), 20)
    # People count seats from 1: the first seat is seat 1.
    assert first.decode().startswith(f"bot: joined room {room} as seat 1;"), first
    bot.send_signal(signal.SIGINT)
    _, err = await asyncio.wait_for(bot.communicate(), 20)
    assert bot.returncode == 130
    assert b"Traceback" not in err and err.decode().strip() == "solrace bot: stopped"
    view = (await list_rooms(server_url))[0]
    assert view["id"] == room and view["players"][0]["connected"] is False  # it left
    # A bot of its own, labelled a bot on its seat.
    assert view["players"][0]["bot"] is True and view["players"][0]["name"].startswith("Bot-")


async def test_the_same_bot_run_twice_in_a_room_is_told_to_name_the_second_one(
    server_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second `solrace bot ROOM` was given the first one's seat (one bot player holds
    # one seat of a room): both played it, each one's plan spoilt by the other's moves,
    # their logs full of refused moves.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    room = (await create_room(server_url, {"game": "stalactites", "seats": 2}))["id"]
    first = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client_cli", "bot", room, "--server", server_url,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        preexec_fn=interruptible,
    )  # fmt: skip
    bots = [first]
    try:
        assert first.stdout is not None
        await asyncio.wait_for(first.stdout.readline(), 20)  # joined
        second = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client_cli", "bot", room, "--server", server_url,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        bots.append(second)
        out, err = await asyncio.wait_for(second.communicate(), 20)
        assert second.returncode == 1, out
        said = " ".join(err.decode().split())
        assert f"is playing in room {room} already" in said and "--name" in said, said
    finally:
        for bot in bots:
            with contextlib.suppress(ProcessLookupError):
                bot.kill()
            await bot.wait()


async def test_two_bots_of_one_machine_named_apart_race_each_other(
    server_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`solrace bot ROOM --name NAME` plays as the machine's bot of that name: two of them
    take a seat each and race, where one bot player for the machine took one seat twice
    and the race never started."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    room = (await create_room(server_url, {"game": "stalactites", "seats": 2}))["id"]
    bots = []
    for name in ("robo", "droid"):
        bot = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client_cli", "bot", room, "--name", name,
            "--pace", "0.05", "--server", server_url,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            preexec_fn=interruptible,
        )  # fmt: skip
        assert bot.stdout is not None
        await asyncio.wait_for(bot.stdout.readline(), 20)  # joined: then the next one
        bots.append(bot)
    try:
        async with asyncio.timeout(20):
            while True:
                view = await get_room(server_url, room)
                if view["status"] != "lobby":
                    break
                await asyncio.sleep(0.1)
        players = sorted((r["name"], r["seat"], r["bot"]) for r in view["players"])
        assert players == [("droid", 1, True), ("robo", 0, True)], players
    finally:
        for bot in bots:
            if bot.returncode is None:
                bot.send_signal(signal.SIGINT)
            await asyncio.wait_for(bot.communicate(), 20)


async def test_two_players_on_one_machine_keep_their_own_seats(
    server_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two quick-match clients of one account, no --name: different names, two stored
    # seats; a third run for the room takes a seat back without --name, asking which.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.setenv("USER", "ann")
    seats = []
    for _ in range(2):
        seat = Seat(server_url, "", default_name(), quick="stalactites")
        seat.on_token = lambda t, s=seat: remember_seat(  # type: ignore[misc]
            server_url, s.view.room, s.name, t, s.view.seat
        )
        await seat.start()
        seats.append(seat)
    async with asyncio.timeout(10):
        while not all(s.view.phase == "running" and s.view.board for s in seats):
            await asyncio.sleep(0.05)
    room = seats[0].view.room
    assert sorted(r.name for r in seats[0].view.racers.values()) == ["ann", "ann 2"]
    assert {s.seat for s in stored_seats(server_url, room)} == {0, 1}
    second = next(s for s in seats if s.view.seat == 1)
    assert (await second.move(second.view.legal_moves()[0])).ok  # type: ignore[index]
    await second.close()

    asked: list[list[str]] = []

    def pick_second(options: list[str]) -> int:
        asked.append(options)
        return 1

    view = await get_room(server_url, room)
    token = choose_seat(server_url, view, None, None, pick_second)
    assert asked == [["seat 1: ann", "seat 2: ann 2"]]
    back = Seat(server_url, room, default_name(), token=token)
    await back.start()
    async with asyncio.timeout(10):
        while back.view.board is None:
            await asyncio.sleep(0.05)
    assert back.view.seat == 1 and back.view.board["moves"] == 1
    await back.close()
    await seats[0].close()


async def test_two_windows_on_one_moojub_seat_show_the_same_board(server_url: str) -> None:
    room = (await create_room(server_url, {"game": "moojub", "seats": 1, "countdown": 0}))["id"]
    one = Seat(server_url, room, "ann")
    await one.start()
    two = Seat(server_url, room, "ann", token=one.view.token)
    await two.start()
    await one.start_now()
    async with asyncio.timeout(10):
        while not (one.view.board and two.view.board and one.view.phase == "running"):
            await asyncio.sleep(0.05)
    for _ in range(3):
        assert (await one.move("deal")).ok
    async with asyncio.timeout(10):
        while two.view.board != one.view.board:
            await asyncio.sleep(0.05)
    assert two.view.board["talon_count"] == 36  # type: ignore[index]
    # The second window plays on the true board too.
    legal = two.view.legal_moves()
    assert legal is not None and legal != ["deal"]
    outcome = await two.move(next(m for m in legal if m != "deal"))
    assert outcome.ok
    await one.close()
    await two.close()


async def test_the_window_opened_first_still_moves_after_the_other_one(server_url: str) -> None:
    # Two windows on one seat: the one opened later counts its seqs from a later clock, so
    # the first one's next seq was below the seat's last and every move was refused
    # "seq N is not above M" for as long as both were open.
    room = (
        await create_room(server_url, {"game": "shaula", "seed": 617, "seats": 1, "countdown": 0})
    )["id"]
    first = Seat(server_url, room, "ann")
    await first.start()
    await asyncio.sleep(0.2)
    second = Seat(server_url, room, "ann", token=first.view.token)
    await second.start()
    await first.start_now()
    async with asyncio.timeout(10):
        while not (first.view.board and second.view.board and first.view.phase == "running"):
            await asyncio.sleep(0.05)
    assert (await second.move("t8 c1")).ok
    outcome = await first.move("t2 t5")
    assert outcome.ok, outcome.reason
    assert (await second.move("t1 c2")).ok
    outcome = await first.undo()
    assert outcome.ok, outcome.reason
    await first.close()
    await second.close()


async def test_an_error_for_another_request_does_not_answer_a_waiting_move(
    server_url: str,
) -> None:
    # A `ready` mid-race is answered by an `error` naming it, ahead of the move's
    # `accepted`: the move was played, and must be reported played, not refused.
    seat = await racing_alone(server_url)
    errors = len(seat.errors)
    await seat.ready(True)
    outcome = await seat.move("t8 c1")
    assert [e.request for e in seat.errors[errors:]] == ["ready"]
    assert outcome.ok and outcome.moves == ["t8 c1"]
    await seat.close()


async def solrace(server_url: str, *words: str) -> tuple[int, str]:
    """`solrace WORDS` as a newcomer runs it (no terminal): its exit status and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_cli",
        "--server",
        server_url,
        *words,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 30)
    assert process.returncode is not None
    return process.returncode, err.decode()


@pytest.mark.timeout(90)
async def test_a_full_or_unknown_room_says_so_and_how_to_watch(
    server_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    room = (await create_room(server_url, {"game": "moojub", "seats": 1}))["id"]
    ann = Seat(server_url, room, "ann")
    await ann.start()
    status, err = await solrace(server_url, "play", room, "--name", "bo")
    assert status == 1 and "Traceback" not in err
    assert err.strip() == (
        f"solrace play: every seat of room {room} is taken (1/1): "
        f"watch it instead: solrace watch {room}"
    )
    # A race about to start: said in words (the room's status "countdown" is not one).
    starting = await create_room(server_url, {"game": "shaula", "seats": 1, "countdown": 60})
    cy = Seat(server_url, starting["id"], "cy")
    await cy.start()
    await cy.ready()
    async with asyncio.timeout(10):
        while cy.view.phase != "countdown":
            await asyncio.sleep(0.05)
    status, err = await solrace(server_url, "play", starting["id"], "--name", "bo")
    assert status == 1
    assert f"the race in room {starting['id']} is about to start and this machine" in err, err
    await cy.close()
    status, err = await solrace(server_url, "watch", "deadbeef")
    assert status == 1
    assert err.strip().endswith("solrace watch: no room 'deadbeef' (unknown_room)"), err
    await ann.close()


@pytest.mark.timeout(90)
async def test_a_ghost_seat_the_race_had_not_is_refused_counting_from_1(
    server_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server counts seats from 0, as the wire does; a terminal user counts from 1.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    source = await finish_race(server_url)
    status, err = await solrace(server_url, "play", "--ghost", source, "--ghost-seat", "3")
    assert status == 1 and "Traceback" not in err
    assert err.strip() == (
        f"solrace play: race {source} had seats 1 and 2: --ghost-seat 3 is none of them"
    )


async def test_a_ghost_race_offers_no_rematch(server_url: str) -> None:
    # protocol.md: a ghost race has no rematch; "m rematch" was offered, and m did nothing.
    source = await finish_race(server_url)
    room = await create_room(server_url, {"ghost": source, "countdown": 0})
    seat = Seat(server_url, room["id"], "bo")
    app = RaceApp(seat)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: seat.view.seat is not None)
        await pilot.press("r")
        await until(pilot, lambda: seat.view.phase == "running" and seat.view.board is not None)
        await pilot.press(*"resign", "enter")
        await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
        shown = screen_text(app)
        assert "rematch" in shown and "m rematch" not in shown and "m to vote" not in shown
        assert f"race it anew: solrace play --ghost {source}" in shown
        await pilot.press("escape")
        await pilot.pause()
        assert "m rematch" not in screen_text(app)
        assert "m rematch" not in app.move_input.placeholder
        await pilot.press("m")
        await pilot.pause()
        assert "a ghost race has no rematch" in screen_text(app)


class Terminals:
    """`solrace play ...` run as in several terminals at once, each in a thread of its own,
    through the command's own code; the race screen's app only takes its seat (no screen),
    says where, and holds it until `release`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seated: list[tuple[str, int | None, str]] = []  # room, seat, name
        self.release = threading.Event()
        self.lock = threading.Lock()
        terminals = self

        def run(app: RaceApp) -> None:
            async def seated() -> None:
                seat = app.seat
                await seat.start()
                async with asyncio.timeout(20):
                    while seat.view.phase == "queue" or seat.view.seat is None:
                        await asyncio.sleep(0.05)
                    while seat.view.seat not in seat.view.racers:
                        await asyncio.sleep(0.05)
                with terminals.lock:
                    me = seat.view.racers[seat.view.seat]
                    terminals.seated.append((seat.view.room, seat.view.seat, me.name))
                await asyncio.to_thread(terminals.release.wait, 30)
                await seat.close()

            asyncio.run(seated())

        monkeypatch.setattr(RaceApp, "run", run)

    def start(self, server_url: str, *words: str) -> threading.Thread:
        args = parse_args(["--server", server_url, "play", *words])
        thread = threading.Thread(target=run, args=(args, CardStyle(color=False)), daemon=True)
        thread.start()
        return thread

    async def wait(self, count: int) -> None:
        async with asyncio.timeout(20):
            while len(self.seated) < count:
                await asyncio.sleep(0.05)


@pytest.mark.timeout(90)
async def test_two_terminals_of_one_machine_race_each_other(
    server_url: str, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's two-terminal flows: both terminals are this machine's one saved player,
    # whom the server never pairs with themself, and whose seat it gives back to them. The
    # second terminal plays an anonymous seat under the player's name, numbered by the
    # server ("ann 2"), not under the system's user name.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.setenv("USER", "osuser")
    me = await ensure_player(server_url)
    terminals = Terminals(monkeypatch)
    threads = [terminals.start(server_url, "--quick", "--game", "moojub") for _ in range(2)]
    await terminals.wait(2)
    (room_1, seat_1, name_1), (room_2, seat_2, name_2) = terminals.seated
    assert room_1 == room_2 and {seat_1, seat_2} == {0, 1}
    assert {name_1, name_2} == {me["name"], f"{me['name']} 2"}
    terminals.release.set()
    for thread in threads:
        thread.join(30)

    # A room made in one terminal, joined from another: a seat each.
    terminals = Terminals(monkeypatch)
    threads = [terminals.start(server_url, "--game", "shaula")]
    await terminals.wait(1)
    room = terminals.seated[0][0]
    threads.append(terminals.start(server_url, room))
    await terminals.wait(2)
    assert [(r, s) for r, s, _ in terminals.seated] == [(room, 0), (room, 1)]
    names = [name for _, _, name in terminals.seated]
    assert names == [me["name"], f"{me['name']} 2"]
    view = await get_room(server_url, room)
    assert [p["player"] is not None for p in view["players"]] == [True, False]
    terminals.release.set()
    for thread in threads:
        thread.join(30)
