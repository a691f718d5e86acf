"""What a newcomer met on the screens: keys that act the same everywhere, the rules at
`?`, footers and status lines that tell the truth."""

from __future__ import annotations

import time

import pytest
from support.client_fake_server import FakeServer
from support.client_screen import results, screen_text, two_players_racing, until
from textual.app import App
from textual.widgets import Input

from client_cli.help_screen import HelpScreen
from client_cli.play_app import PlayApp
from client_cli.race_app import RaceApp, ResultsScreen
from client_cli.seat import Seat
from client_cli.session import LocalSession
from core import new_game
from protocol import Error, Progress, RaceFinished, Ready, Resign
from protocol import Move as MoveMsg


def footer(app: App[object]) -> str:
    return str(app.query_one("#move", Input).placeholder)


def in_the_lobby(fake: FakeServer) -> tuple[Seat, RaceApp]:
    seat = Seat(fake.url, fake.room, "ann")
    return seat, RaceApp(seat)


def racing(fake: FakeServer) -> tuple[Seat, RaceApp]:
    fake.players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]
    fake.begin()
    seat = Seat(fake.url, fake.room, "ann", token="tok")
    return seat, RaceApp(seat)


async def test_finishing_leaves_the_bars_in_sight() -> None:
    async with FakeServer(game="shaula", seed=2) as fake:
        seat, app = racing(fake)
        popped: list[object] = []
        app.notify = lambda *args, **kwargs: popped.append(args)  # type: ignore[method-assign]
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.board is not None)
            await fake.push(
                Progress(
                    version=0, at=time.time(), seat=0, progress=52, moves=90, won=True, stuck=False
                )
            )
            await until(pilot, lambda: "Finished in 90 moves" in screen_text(app))
            await pilot.pause(0.3)
            rows = screen_text(app).splitlines()
            bars = [row for row in rows if "/52" in row and " mv " in row]
            assert [("ann" in bars[0]), ("bob" in bars[1])] == [True, True]
            assert "52/52" in bars[0] and "finished" in bars[0]
            assert popped == []  # no toast: it covered the bars' right end for 5 s


async def test_after_resigning_the_footer_offers_no_undo_hint_or_autoplay() -> None:
    async with FakeServer() as fake:
        seat, app = racing(fake)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.board is not None)
            assert "u undo" in footer(app)
            await pilot.press(*"resign", "enter")
            await fake.wait_for(Resign)
            await until(pilot, lambda: seat.view.me is not None and seat.view.me.out is not None)
            await pilot.pause()
            shown = footer(app)
            for offer in ("undo", "hint", "auto", "pick", "move"):
                assert offer not in shown, shown
            assert "? rules" in shown
            await pilot.press("u")
            await pilot.pause()
            assert "out of the race" in screen_text(app)


async def test_the_quick_match_queue_screen() -> None:
    async with FakeServer() as fake:
        seat = Seat(fake.url, "", "ann", quick="moojub")
        app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.phase == "queue")
            await pilot.pause(1.1)  # the title is redrawn every second
            shown = screen_text(app)
            title = shown.splitlines()[0]
            assert "room" not in title and "quick match" in title and "Moojub" in title
            assert "no racers yet" not in shown
            assert "t5 t2" not in footer(app) and "1-8" not in footer(app)
            assert "q gives up" in footer(app) or "q gives up" in shown


async def test_seat_numbers_are_one_based_for_people() -> None:
    async with FakeServer() as fake:
        watch = two_players_racing(fake)
        async with watch.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: len(watch.seat.view.boards) == 2)
            top = screen_text(watch).splitlines()[1]
            assert "seat 1" in top and "seat 2" in top and "seat 0" not in top


@pytest.mark.parametrize("where", ["practice", "race", "watch"])
async def test_q_quits_on_every_screen_and_is_never_sent_as_a_move(where: str) -> None:
    async with FakeServer() as fake:
        app: App[None]
        if where == "practice":
            app = PlayApp(LocalSession(new_game("shaula", 2)), "practice")
        elif where == "race":
            fake.players = [{"seat": 0, "name": "ann"}]
            seat = Seat(fake.url, fake.room, "ann", token="tok")
            app = RaceApp(seat)  # in the lobby: q leaves at once
        else:
            app = two_players_racing(fake)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(0.3)
            await pilot.press("q")
            await pilot.pause(0.3)
            assert not app.is_running
        assert not any(isinstance(m, MoveMsg) for m in fake.received)


async def test_q_mid_race_asks_once_more_like_ctrl_q() -> None:
    async with FakeServer() as fake:
        seat, app = racing(fake)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.board is not None)
            await pilot.press("q")
            await until(pilot, lambda: "q again to leave the race" in screen_text(app))
            assert app.is_running
            await pilot.press(*"t2 q", "backspace", "backspace", "backspace", "backspace")
            assert app.is_running  # a q inside a typed move is a letter
            await pilot.press("q")
            await pilot.pause(0.2)
            assert not app.is_running


async def test_q_on_the_results_quits() -> None:
    async with FakeServer() as fake:
        seat, app = racing(fake)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.board is not None)
            await fake.push(
                RaceFinished(
                    version=0, at=0.0, results=results(["ann", "bob"]), seed=2, reason="all_done"
                )
            )
            await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
            await pilot.press("q")
            await pilot.pause(0.2)
            assert not app.is_running


RULES_MARK = {"shaula": "Shifts", "stalactites": "Ones or twos", "moojub": "Starting a new"}


@pytest.mark.parametrize("game", ["shaula", "stalactites", "moojub"])
async def test_question_mark_shows_the_games_rules_in_practice(game: str) -> None:
    app = PlayApp(LocalSession(new_game(game, 3)), "practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        for _ in range(40):
            if RULES_MARK[game] in screen_text(app):
                break
            await pilot.press("pagedown")
            await pilot.pause(0.05)
        assert RULES_MARK[game] in screen_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def rules_shown(app: App[object], pilot: object, mark: str) -> bool:
    for _ in range(40):
        if mark in screen_text(app):
            return True
        await pilot.press("pagedown")  # type: ignore[attr-defined]
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    return False


@pytest.mark.parametrize("phase", ["queue", "lobby", "running", "finished", "watch"])
async def test_question_mark_shows_the_rules_in_every_view(phase: str) -> None:
    async with FakeServer(game="stalactites", seed=3) as fake:
        app: App[None]
        if phase == "queue":
            seat = Seat(fake.url, "", "ann", quick="stalactites")
            app = RaceApp(seat)
        elif phase == "watch":
            app = two_players_racing(fake)
            seat = app.seat  # type: ignore[attr-defined]
        else:
            fake.players = [{"seat": 0, "name": "ann"}]
            if phase != "lobby":
                fake.begin()
            seat = Seat(fake.url, fake.room, "ann", token="tok")
            app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: bool(seat.view.game))
            if phase == "finished":
                await fake.push(
                    RaceFinished(
                        version=0, at=0.0, results=results(["ann"]), seed=3, reason="all_done"
                    )
                )
                await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
            await pilot.press("question_mark")
            await pilot.pause()
            assert await rules_shown(app, pilot, "Ones or twos")
            await pilot.press("escape")
            await pilot.pause()
            assert "Ones or twos" not in screen_text(app)
            assert app.is_running


async def test_a_long_refusal_is_wrapped_not_cut() -> None:
    async with FakeServer() as fake:
        seat, app = racing(fake)
        fake.refusal = (
            "the group does not go on that pile in a Forty Thieves pile: same suit needed, and "
            "this reason goes on past the eightieth column to its very last word: END"
        )
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.board is not None)
            await pilot.press(*"t5 t1", "enter")
            await until(pilot, lambda: "✗" in screen_text(app))
            await pilot.pause()
            shown = " ".join(screen_text(app).split())
            assert " ".join(fake.refusal.split()) in shown
            assert "t8" in screen_text(app)  # the board is still there


@pytest.mark.parametrize(("rated", "said"), [(True, "rated"), (False, "casual")])
async def test_the_lobby_shows_the_rooms_settings(rated: bool, said: str) -> None:
    # Whether the race moves ratings was in the rooms list but not in the lobby: a room
    # made --no-rated, or joined by its code, did not say which it was.
    async with FakeServer() as fake:
        fake.settings = {"time_limit": 300.0, "spectator_delay": 20.0, "hints": True}
        fake.settings["rated"] = rated
        seat = Seat(fake.url, fake.room, "ann")
        app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.seat == 0)
            shown = screen_text(app)
            assert f"{said}, undo, hints" in shown
            assert "time limit 5:00" in shown and "spectators 20 s behind" in shown


@pytest.mark.parametrize(("seats", "full"), [(1, True), (2, True), (2, False)])
async def test_the_lobby_invites_friends_only_to_a_free_seat(seats: int, full: bool) -> None:
    # A one-seat room, or every seat taken (a ghost race's two): nobody else can join,
    # but anyone can watch.
    async with FakeServer() as fake:
        fake.settings = {"seats": seats}
        if seats == 2 and full:
            fake.players = [{"seat": 1, "name": "ann's ghost", "ready": True, "ghost": True}]
        seat = Seat(fake.url, fake.room, "ann")
        app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.seat == 0)
            shown = screen_text(app)
            assert ("Friends join with:  solrace play ABCD" in shown) is not full, shown
            assert ("Every seat is taken" in shown) is full, shown
            assert "solrace watch ABCD" in shown


@pytest.mark.parametrize("where", ["lobby", "queue", "race"])
async def test_reconnected_says_what_is_true_where_the_player_is(where: str) -> None:
    said = {
        "lobby": "reconnected: back in the lobby",
        "queue": "reconnected: still looking for an opponent",
        "race": "reconnected: the race goes on",
    }
    async with FakeServer() as fake:
        if where == "race":
            seat, app = racing(fake)
        else:
            seat = Seat(fake.url, fake.room, "ann", quick="shaula" if where == "queue" else None)
            app = RaceApp(seat)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.welcomed.is_set())
            await fake.drop_all()
            await until(pilot, lambda: "reconnected" in screen_text(app))
            shown = screen_text(app)
            assert said[where] in shown, shown
            assert where == "race" or "race goes on" not in shown, shown


async def test_how_long_the_seat_is_kept_is_said_in_hours_and_minutes() -> None:
    # A daily attempt keeps its seat until the end of the day: hours, not 14574 s.
    async with FakeServer() as fake:
        fake.settings = {"grace": 14574.0}
        seat, app = racing(fake)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.board is not None)
            await pilot.press("q")
            await until(pilot, lambda: "q again to leave the race" in screen_text(app))
            shown = " ".join(screen_text(app).split())
            assert "your seat is kept 4 h 2 min if you come back" in shown, shown
            seat.link.url = "ws://127.0.0.1:9/ws"  # the network is cut
            await seat.link.drop()
            await until(pilot, lambda: "reconnecting" in screen_text(app))
            shown = " ".join(screen_text(app).split())
            assert "your seat is kept 4 h 2 min more" in shown, shown


async def test_a_seat_refused_for_good_offers_no_lobby_keys() -> None:
    # The room expired while the link was down: ready and start can no longer be done.
    async with FakeServer() as fake:
        seat, app = in_the_lobby(fake)
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: seat.view.seat == 0)
            assert "r ready" in footer(app) and "s start" in footer(app)
            fake.rejoin_refusal = Error(code="unknown_room", message="no room", request="join")
            await fake.drop_all()
            await until(pilot, lambda: "did not take this seat back" in screen_text(app))
            assert footer(app) == "? rules · q quit"
            assert "ready/not ready" not in screen_text(app)
            readies = sum(isinstance(m, Ready) for m in fake.received)
            await pilot.press("r")
            await pilot.pause(0.2)
            assert sum(isinstance(m, Ready) for m in fake.received) == readies
            assert "did not take this seat back" in screen_text(app)
