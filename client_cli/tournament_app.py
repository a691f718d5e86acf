"""The race screen of a tournament's race: the usual race screen with the tournament's
live standings beside it. It closes by itself when the next race is yours (or the
tournament is over and this race is done), so `solrace tournament join` goes on."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Static

from client_cli.cards import CardStyle
from client_cli.race_app import RaceApp
from client_cli.seat import Seat
from client_cli.tournament import Follow, standings_text

__all__ = ["TourRaceApp"]


class TourRaceApp(RaceApp):
    CSS = """
    #tour-standings { width: 36; border-left: solid $accent; padding: 0 1; }
    """

    def __init__(self, seat: Seat, follow: Follow, style: CardStyle | None = None) -> None:
        super().__init__(seat, style)
        self.follow = follow
        self.standings = Static(id="tour-standings")
        self.room = seat.view.room

    def compose(self) -> ComposeResult:
        with Horizontal():
            with Vertical():
                yield from super().compose()
            yield self.standings

    async def on_mount(self) -> None:
        await super().on_mount()
        self.show_standings()
        self.set_interval(0.5, self.show_standings)

    def show_standings(self) -> None:
        state = self.follow.state
        if state is None:
            return
        self.standings.update(standings_text(state.tournament, state.standings, self.seat.name))
        next_room = self.follow.room
        done = self.seat.view.phase == "finished"
        if (next_room is not None and next_room != self.room) or (done and self.follow.finished):
            self.exit()
