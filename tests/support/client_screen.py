"""The terminal client's screens in tests: a headless app's screen as text, waiting on a
pilot, and the scripted rooms the race and watch screens are shown."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from client_cli.seat import Seat
from client_cli.watch_app import WatchApp
from support.client_fake_server import FakeServer

__all__ = ["results", "screen_text", "two_players_racing", "until"]


def screen_text(app: App[Any]) -> str:
    """What the (headless) terminal shows, one line per row, colours dropped."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


async def until(pilot: Pilot[Any], done: Callable[[], bool], timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not done():
            await pilot.pause(0.02)
    await pilot.pause()


def results(names: list[str]) -> list[dict[str, Any]]:
    return [
        {
            "rank": i + 1,
            "seat": i,
            "name": n,
            "won": i == 0,
            "stuck": False,
            "out": None,
            "progress": 52 - 10 * i,
            "moves": 90 + i,
            "time": 61.5 if i == 0 else None,
        }
        for i, n in enumerate(names)
    ]


def two_players_racing(fake: FakeServer) -> WatchApp:
    fake.players = [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bob"}]
    fake.begin()
    return WatchApp(Seat(fake.url, fake.room, spectator=True))
