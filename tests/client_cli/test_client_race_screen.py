"""The race and watch screens against a scripted server over a real WebSocket."""

from __future__ import annotations

import time

from support.client_fake_server import FakeServer
from support.client_screen import results, screen_text, two_players_racing, until

from client_cli.help_screen import HelpScreen
from client_cli.race_app import RaceApp, ResultsScreen
from client_cli.seat import Seat
from client_cli.watch_app import BoardsView
from client_cli.widgets import RaceBars
from protocol import (
    Countdown,
    Join,
    Leave,
    PlayerJoined,
    Progress,
    RaceFinished,
    RaceStarted,
    Ready,
)
from protocol import (
    Move as MoveMsg,
)


async def test_a_race_from_lobby_to_results() -> None:
    async with FakeServer() as fake:
        seat = Seat(fake.url, fake.room, "ann")
        app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.seat == 0)
            assert "solrace play ABCD" in screen_text(app)
            await pilot.press("r")
            await fake.wait_for(Ready)

            fake.players.append({"seat": 1, "name": "bob"})
            await fake.push(PlayerJoined(version=0, at=0.0, seat=1, name="bob"))
            await fake.push(Countdown(version=0, at=0.0, start_at=time.time() + 0.3))
            await until(pilot, lambda: "starts in" in screen_text(app))

            fake.begin()
            await fake.push(RaceStarted(version=0, at=0.0, game="shaula", seed=2))
            await until(pilot, lambda: "t8" in screen_text(app))

            # A typed move goes to the server and comes back accepted.
            await pilot.press(*"t2 f", "enter")
            await until(
                pilot,
                lambda: seat.view.board is not None and seat.view.board["piles"]["f1"] == ["AD"],
            )
            assert "AD" in fake.moves[0] or fake.moves == ["t2 f1"]

            # A refused move shows the server's reason; the board stays.
            board_before = screen_text(app).splitlines()[1:12]
            await pilot.press(*"t5 t1", "enter")
            await until(pilot, lambda: "does not go on" in screen_text(app))
            assert screen_text(app).splitlines()[1:12] == board_before

            # The opponent's bar follows their progress.
            await fake.push(
                Progress(version=0, at=0.0, seat=1, progress=7, moves=12, won=False, stuck=False)
            )
            await until(pilot, lambda: "7/52" in screen_text(app))
            bars = app.query_one(RaceBars)
            assert [(p.name, p.progress, p.moves) for p in bars.players] == [
                ("ann", 1, 1),
                ("bob", 7, 12),
            ]

            # A dropped connection comes back by itself, with the token and version.
            version = seat.view.version
            await fake.drop_all()
            await fake.wait_for(Join, count=2)
            rejoin = [m for m in fake.received if isinstance(m, Join)][-1]
            assert rejoin.token == "tok" and rejoin.since == version
            await until(pilot, lambda: seat.link.connected.is_set())
            assert seat.link.drops == 1
            await until(pilot, lambda: "reconnected" in screen_text(app))

            # The end: the results table.
            await fake.push(
                RaceFinished(
                    version=0, at=0.0, results=results(["ann", "bob"]), seed=2, reason="all done"
                )
            )
            await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
            shown = screen_text(app)
            assert "Results" in shown and "finished 1:01" in shown and "ann (you)" in shown
            await pilot.press("escape")
            await until(pilot, lambda: "placed #1" in screen_text(app))


async def test_watching_shows_boards_side_by_side_and_replays_moves() -> None:
    async with FakeServer() as fake:
        wide = two_players_racing(fake)
        view = wide.seat.view
        async with wide.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: len(view.boards) == 2)
            top = screen_text(wide).splitlines()[1]
            assert "ann" in top and "bob" in top
            fake.game = None  # the spectator replays moves itself
            await fake.push(
                Progress(
                    version=0,
                    at=0.0,
                    seat=1,
                    progress=1,
                    moves=1,
                    won=False,
                    stuck=False,
                    move="t2 f1",
                )
            )
            await until(pilot, lambda: view.boards[1]["piles"]["f1"] == ["AD"])
            assert view.boards[0]["piles"]["f1"] == []
            await until(pilot, lambda: "1/52 · 1 mv" in screen_text(wide))


async def test_watching_on_80_columns_shows_one_board_at_a_time() -> None:
    async with FakeServer() as fake:
        narrow = two_players_racing(fake)
        async with narrow.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: len(narrow.seat.view.boards) == 2)
            boards = narrow.query_one(BoardsView)
            assert boards.shown() == [0]
            assert "ann" in screen_text(narrow).splitlines()[1]
            await pilot.press("tab")
            await until(pilot, lambda: boards.shown() == [1])
            assert "bob" in screen_text(narrow).splitlines()[1]
            await pilot.press("1")
            await until(pilot, lambda: boards.shown() == [0])


async def test_the_screen_stays_live_while_a_move_waits_for_its_answer() -> None:
    async with FakeServer() as fake:
        fake.players = [{"seat": 0, "name": "ann"}]
        fake.begin()
        seat = Seat(fake.url, fake.room, "ann", token="tok")
        app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.board is not None)
            fake.hold_moves = True
            await pilot.press(*"t2 f", "enter")
            await fake.wait_for(MoveMsg)
            await pilot.press("question_mark")  # keys still work while the move waits
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.press("escape")
            await fake.release()
            await until(
                pilot,
                lambda: seat.view.board is not None and seat.view.board["piles"]["f1"] == ["AD"],
            )
            # Quitting mid-race asks once more: the seat would be lost after the grace.
            await pilot.press("ctrl+q")
            await until(pilot, lambda: "ctrl+q again" in screen_text(app))
            assert app.is_running


async def test_quitting_in_the_lobby_gives_the_seat_up() -> None:
    async with FakeServer() as fake:
        seat = Seat(fake.url, fake.room, "ann")
        app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.seat == 0)
            await pilot.press("ctrl+q")
            await fake.wait_for(Leave)
