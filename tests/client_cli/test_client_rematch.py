"""A rematch on the race screen: every vote is seen by all, and the new round starts clean."""

from __future__ import annotations

import time
from typing import Any

from support.client_fake_server import FakeServer
from support.client_screen import results, screen_text, two_players_racing, until
from textual.pilot import Pilot

from client_cli.race_app import RaceApp, ResultsScreen
from client_cli.seat import Seat
from client_cli.widgets import RaceBars
from protocol import (
    Countdown,
    Error,
    NewRound,
    PlayerOut,
    Progress,
    RaceFinished,
    RaceStarted,
    Rematch,
    RematchVote,
)


def ann_and_bob(fake: FakeServer) -> tuple[Seat, RaceApp]:
    """ann's race screen in a room of ann and bob, racing."""
    fake.players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]
    fake.begin()
    seat = Seat(fake.url, fake.room, "ann", token="tok")
    return seat, RaceApp(seat)


async def started(fake: FakeServer, pilot: Pilot[Any], seat: Seat) -> None:
    await until(pilot, lambda: seat.view.board is not None)
    await fake.push(RaceStarted(version=0, at=time.time(), game="shaula", seed=2))


async def bob_won(fake: FakeServer) -> None:
    results_ = results(["bob", "ann"])
    await fake.push(RaceFinished(version=0, at=0.0, results=results_, seed=2, reason="all_done"))


async def test_rematch_votes_show_and_the_new_round_starts_clean() -> None:
    async with FakeServer() as fake:
        seat, app = ann_and_bob(fake)
        async with app.run_test(size=(80, 24)) as pilot:
            await started(fake, pilot, seat)
            await pilot.press(*"t2 f", "enter")
            await until(pilot, lambda: seat.view.board is not None and seat.view.board["moves"])
            await fake.push(
                Progress(version=0, at=0.0, seat=1, progress=52, moves=80, won=True, stuck=False)
            )
            await fake.push(PlayerOut(version=0, at=0.0, seat=0, reason="resigned"))
            await bob_won(fake)
            await until(pilot, lambda: isinstance(app.screen, ResultsScreen))

            # bob votes first: ann sees it, on the results and then on the race screen.
            await fake.push(RematchVote(version=0, at=0.0, seat=1))
            await until(pilot, lambda: "bob wants a rematch" in screen_text(app))
            await pilot.press("m")
            await fake.wait_for(Rematch)
            await fake.push(RematchVote(version=0, at=0.0, seat=0))
            await until(pilot, lambda: "2/2" in screen_text(app))

            # Everyone voted: round 2 counts down, nothing of round 1 is left on screen.
            fake.status = "countdown"
            await fake.push(NewRound(version=0, at=0.0, round=2))
            await fake.push(Countdown(version=0, at=0.0, start_at=time.time() + 0.5))
            await until(pilot, lambda: "starts in" in screen_text(app))
            shown = screen_text(app)
            assert not isinstance(app.screen, ResultsScreen)
            assert "round 2" in shown
            for stale in ("finished", "resigned", "out of the race", "vote", "Race over", "t8"):
                assert stale not in shown, stale
            bars = app.query_one(RaceBars)
            assert all(p.progress == 0 and p.status == "" for p in bars.players)

            fake.game = None
            fake.begin()
            fake.seed = 5
            await fake.push(RaceStarted(version=0, at=time.time(), game="shaula", seed=5))
            await until(pilot, lambda: "t8" in screen_text(app))
            shown = screen_text(app)
            assert "0/52 cards" in shown and "0 moves" in shown
            assert "vote" not in shown and "Finished" not in shown
            assert not isinstance(app.screen, ResultsScreen)


async def test_a_spectator_sees_the_votes_and_the_new_round() -> None:
    async with FakeServer() as fake:
        watch = two_players_racing(fake)
        view = watch.seat.view
        async with watch.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: len(view.boards) == 2)
            await fake.push(
                RaceFinished(
                    version=0, at=0.0, results=results(["ann", "bob"]), seed=2, reason="all_done"
                )
            )
            await until(pilot, lambda: isinstance(watch.screen, ResultsScreen))
            await fake.push(RematchVote(version=0, at=0.0, seat=1))
            await until(pilot, lambda: "rematch: 1/2 players voted" in screen_text(watch))
            assert "rematch ✓" in screen_text(watch)  # bob's bar
            await fake.push(NewRound(version=0, at=0.0, round=2))
            await fake.push(Countdown(version=0, at=0.0, start_at=time.time() + 5))
            await until(pilot, lambda: not isinstance(watch.screen, ResultsScreen))
            await pilot.pause(0.2)
            shown = screen_text(watch)
            assert "starting" in shown and "rematch" not in shown and "finished" not in shown


async def test_a_refused_key_press_says_why() -> None:
    # A refusal the server sends for a key press (rematch, ready, start) was dropped.
    async with FakeServer() as fake:
        seat, app = ann_and_bob(fake)
        async with app.run_test(size=(80, 24)) as pilot:
            await started(fake, pilot, seat)
            await bob_won(fake)
            await until(pilot, lambda: isinstance(app.screen, ResultsScreen))
            await pilot.press("m")
            await fake.wait_for(Rematch)
            await fake.tell(Error(code="not_running", message="no rematch now", request="rematch"))
            await until(pilot, lambda: "no rematch now" in screen_text(app))
