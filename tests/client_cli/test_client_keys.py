"""Keys a newcomer reaches for first, on a real server: Ctrl+C quits as q does (and asks
once more mid-race), and `a` in Moojub says why there is nothing to autoplay."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import pytest
from support.client_screen import screen_text
from support.servers import MakeServer
from textual.pilot import Pilot

from client_cli import seat as seat_module
from client_cli.commands import create_room
from client_cli.play_app import PlayApp
from client_cli.race_app import RaceApp
from client_cli.seat import Seat
from client_cli.session import LocalSession
from client_cli.watch_app import WatchApp


async def until(pilot: Pilot[Any], done: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not done():
            await pilot.pause(0.05)
    await pilot.pause()


async def racing(server_url: str, game: str) -> tuple[Seat, RaceApp]:
    room = (await create_room(server_url, {"game": game, "seats": 1, "countdown": 0}))["id"]
    seat = Seat(server_url, room, "ann")
    return seat, RaceApp(seat)


async def start_alone(pilot: Pilot[Any], seat: Seat) -> None:
    """The only seat of the room: s starts the race at once."""
    await until(pilot, lambda: seat.view.seat is not None)
    await pilot.press("s")
    await until(pilot, lambda: seat.view.phase == "running" and seat.view.board is not None)


async def test_ctrl_c_quits_practice() -> None:
    app = PlayApp(LocalSession.new("shaula", 2), "practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*"t2")  # even with a move half typed
        await pilot.press("ctrl+c")
        await pilot.pause(0.2)
        assert not app.is_running


@pytest.mark.timeout(60)
async def test_ctrl_c_mid_race_asks_once_more_then_quits(server_url: str) -> None:
    seat, app = await racing(server_url, "shaula")
    async with app.run_test(size=(80, 24)) as pilot:
        await start_alone(pilot, seat)
        await pilot.press("ctrl+c")
        await until(pilot, lambda: "again to leave the race" in screen_text(app))
        assert app.is_running
        await pilot.press("ctrl+c")
        await pilot.pause(0.2)
        assert not app.is_running


@pytest.mark.timeout(60)
async def test_ctrl_c_quits_watching(server_url: str) -> None:
    room = (await create_room(server_url, {"game": "shaula"}))["id"]
    app = WatchApp(Seat(server_url, room, spectator=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.seat.welcomed.is_set())
        await pilot.press("ctrl+c")
        await pilot.pause(0.2)
        assert not app.is_running


@pytest.mark.timeout(60)
async def test_autoplay_in_a_moojub_race_says_the_game_has_none(server_url: str) -> None:
    seat, app = await racing(server_url, "moojub")
    async with app.run_test(size=(80, 24)) as pilot:
        await start_alone(pilot, seat)
        await pilot.press("a")
        await until(pilot, lambda: "autoplay" in screen_text(app).splitlines()[-2])
        line = screen_text(app).splitlines()[-2]
        assert "room does not allow" not in line  # the room allows it: the game has none
        assert "Moojub has no autoplay" in line


async def test_moojub_practice_offers_no_autoplay_it_cannot_do() -> None:
    app = PlayApp(LocalSession.new("moojub", 2), "practice")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause(0.1)
        assert "a auto" not in str(app.move_input.placeholder)
        await pilot.press("a")
        await pilot.pause(0.1)
        assert "Moojub has no autoplay" in screen_text(app)


@pytest.mark.timeout(60)
async def test_away_past_the_grace_the_status_no_longer_says_the_seat_is_kept(
    server_url: str,
) -> None:
    room = await create_room(server_url, {"game": "shaula", "seats": 2, "countdown": 0, "grace": 2})
    seat, other = Seat(server_url, room["id"], "ann"), Seat(server_url, room["id"], "bo")
    app = RaceApp(seat)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: seat.view.seat is not None)
        await other.start()
        await other.ready()
        await pilot.press("r")
        await until(pilot, lambda: seat.view.phase == "running" and seat.view.board is not None)
        url, seat.link.url = seat.link.url, "ws://127.0.0.1:9/ws"  # the network is cut
        await seat.link.drop()
        await until(pilot, lambda: "reconnecting" in screen_text(app))
        assert re.search(r"your seat is kept [12] s more", screen_text(app))
        await until(pilot, lambda: "grace" in screen_text(app), 10)
        assert "your seat is kept" not in screen_text(app)  # it is not: bo saw ann forfeit
        seat.link.url = url
        await until(pilot, lambda: "out of the race (forfeit)" in screen_text(app), 20)
        await other.close()


@pytest.mark.timeout(60)
async def test_a_lobby_seat_freed_while_away_is_replaced_by_a_new_one(server_url: str) -> None:
    # Away past the grace in the lobby, a seat is freed: back, the client takes a new seat
    # (the old token holds none) instead of a lobby frozen as it was, where nothing works.
    room = await create_room(server_url, {"game": "shaula", "seats": 2, "grace": 1})
    seat, other = Seat(server_url, room["id"], "ann"), Seat(server_url, room["id"], "bo")
    app = RaceApp(seat)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: seat.view.seat is not None)
        await other.start()
        await until(pilot, lambda: len(seat.view.racers) == 2)
        first = seat.view.token
        url, seat.link.url = seat.link.url, "ws://127.0.0.1:9/ws"  # the network is cut
        await seat.link.drop()
        await until(pilot, lambda: len(other.view.racers) == 1, 10)  # bo saw ann's seat go
        seat.link.url = url
        await until(pilot, lambda: seat.view.token not in (None, first), 20)
        await until(pilot, lambda: len(other.view.racers) == 2)
        assert seat.lost is None
        await pilot.press("r")  # and the new seat works
        await until(pilot, lambda: any(r.ready for r in other.view.racers.values()))
        await other.close()


@pytest.mark.timeout(60)
async def test_a_rejoin_refused_for_good_is_shown(make_server: MakeServer) -> None:
    # The room expired while the link was down (a finished room lives room_ttl seconds).
    server_url = await make_server(room_ttl=1.0)
    seat, app = await racing(server_url, "shaula")
    async with app.run_test(size=(80, 24)) as pilot:
        await start_alone(pilot, seat)
        await pilot.press(*"resign", "enter")
        await until(pilot, lambda: seat.view.phase == "finished")
        url, seat.link.url = seat.link.url, "ws://127.0.0.1:9/ws"  # the network is cut
        await seat.link.drop()
        await pilot.pause(2.5)
        seat.link.url = url
        await until(pilot, lambda: "did not take this seat back" in screen_text(app), 20)
        assert "unknown_room" in screen_text(app)
        # The race's results may still be on the screen: they offer no rematch any more.
        await pilot.pause(0.5)
        assert "m rematch" not in screen_text(app)


@pytest.mark.timeout(60)
async def test_watching_says_it_reconnected_and_when_the_room_is_gone(
    make_server: MakeServer,
) -> None:
    server_url = await make_server(room_ttl=4.0)  # a finished room lives this long
    seat, player = await racing(server_url, "shaula")
    async with player.run_test(size=(80, 24)) as pilot:
        await start_alone(pilot, seat)
        await pilot.press(*"resign", "enter")
        await until(pilot, lambda: seat.view.phase == "finished")
    app = WatchApp(Seat(server_url, seat.view.room, spectator=True))
    async with app.run_test(size=(80, 24)) as watching:
        await until(watching, lambda: app.seat.view.phase == "finished")
        link = app.seat.link
        await link.drop()
        await until(watching, lambda: "reconnected" in screen_text(app))
        url, link.url = link.url, "ws://127.0.0.1:9/ws"  # cut while the room expires
        await link.drop()
        await watching.pause(5)
        link.url = url
        await until(watching, lambda: "unknown_room" in screen_text(app), 20)
        assert "cannot watch again" in screen_text(app)


@pytest.mark.timeout(60)
async def test_a_move_made_while_the_link_is_down_waits_for_it(
    server_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The answer's deadline counts only while connected: a move keyed during an outage
    # longer than it is played once the link is back (it was sent then anyway), and the
    # player is not told "no answer" about a move the board then shows played.
    monkeypatch.setattr(seat_module, "ANSWER_TIMEOUT", 2.0)
    seat, app = await racing(server_url, "shaula")
    async with app.run_test(size=(80, 24)) as pilot:
        await start_alone(pilot, seat)
        move = seat.view.legal_moves()[0]  # type: ignore[index]
        url, seat.link.url = seat.link.url, "ws://127.0.0.1:9/ws"  # the network is cut
        await seat.link.drop()
        await pilot.press(*move, "enter")
        await pilot.pause(4)  # twice the deadline
        assert "no answer" not in screen_text(app)
        seat.link.url = url
        await until(pilot, lambda: seat.view.board is not None and seat.view.board["moves"] == 1)
        await pilot.pause(3.5)  # past the "reconnected" line
        assert "✗" not in screen_text(app)
        assert seat.view.board is not None and seat.view.board["moves"] == 1  # once
