"""Spectating: every player's board side by side, live, with their progress.

On a terminal too small for all the boards, as many as fit are shown at a time
(one, on 80 columns); Tab and the arrows page through them, a digit jumps to a seat.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Static

from client_cli.board import render_board
from client_cli.cards import CardStyle
from client_cli.help_screen import WATCH_KEYS, HelpScreen
from client_cli.race import RaceView
from client_cli.race_app import (
    ResultsScreen,
    connect_or_exit,
    player_lines,
    rematch_text,
    results_table,
)
from client_cli.seat import Seat
from client_cli.widgets import RaceBars, clock, progress_bar

__all__ = ["BOARD_MIN_WIDTH", "BoardsView", "WatchApp", "side_by_side"]

BOARD_MIN_WIDTH = 42  # eight 5-column piles and a gap


class BoardsView(Widget):
    """As many boards as fit side by side, each under its player's name and bar."""

    DEFAULT_CSS = "BoardsView { height: 1fr; }"

    def __init__(self, view: RaceView, style: CardStyle, **kw: Any) -> None:
        super().__init__(**kw)
        self.view = view
        self.card_style = style
        self.first = 0  # index (in seat order) of the first board shown

    def seats(self) -> list[int]:
        return sorted(self.view.boards)

    def per_page(self) -> int:
        return max(1, min(len(self.seats()), (self.size.width or 80) // BOARD_MIN_WIDTH))

    def page(self, step: int) -> None:
        seats = self.seats()
        if seats:
            per = self.per_page()
            self.first = (self.first + step * per) % len(seats)
            self.refresh()

    def show_seat(self, seat: int) -> bool:
        seats = self.seats()
        if seat not in seats:
            return False
        per = self.per_page()
        index = seats.index(seat)
        if not self.first <= index < self.first + per:
            self.first = index
        self.refresh()
        return True

    def shown(self) -> list[int]:
        seats = self.seats()
        per = self.per_page()
        if self.first >= len(seats):
            self.first = 0
        return [seats[(self.first + i) % len(seats)] for i in range(min(per, len(seats)))]

    def render(self) -> RenderableType:
        view = self.view
        if not view.boards:
            note = {"lobby": "waiting for the race to start", "countdown": "starting…"}
            return Text(f"\n  {note.get(view.phase, 'no boards yet')}", style="dim")
        return side_by_side(self.shown(), self.size.width or 80, self.panel)

    def panel(self, seat: int, width: int) -> RenderableType:
        view = self.view
        racer = view.racers.get(seat)
        name = racer.shown_name if racer else f"seat {seat + 1}"
        head = Text(f"{name}", style="bold")
        head.append(f"  (seat {seat + 1})", style="dim")
        line = progress_bar(racer.progress if racer else 0, view.total, 12, self.card_style)
        if racer is not None:
            line.append(f" {racer.progress}/{view.total} · {racer.moves} mv")
            if racer.status:
                line.append(f" · {racer.status}", style="bold")
        board = render_board(
            view.boards[seat],
            width=width,
            height=max(6, (self.size.height or 20) - 3),
            style=self.card_style,
        )
        return Group(head, line, board)


class WatchApp(App[None]):
    CSS = """
    #title { height: 1; background: $primary-background; }
    #status { height: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab,right", "page(1)", "next board", priority=True),
        Binding("shift+tab,left", "page(-1)", "previous board", priority=True),
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),  # not Textual's "copy"
        Binding("question_mark", "rules", "rules"),
    ]

    def __init__(self, seat: Seat, style: CardStyle | None = None) -> None:
        super().__init__()
        self.seat = seat
        self.card_style = style or CardStyle()
        self.link_status = ""
        self.results_shown_for: int | None = None
        self.results_screen: ResultsScreen | None = None
        # Busy rooms send many events a second: draw at most ten times a second.
        self.dirty = True
        self.drawn_at = 0.0
        seat.on_change = self.mark_dirty
        # Kept by reference: `query_one` would search the results screen when it is up.
        self.title_bar = Static(id="title")
        self.boards = BoardsView(seat.view, self.card_style, id="boards")
        self.bars = RaceBars(self.card_style, id="bars")
        self.status_bar = Static(id="status")
        seat.on_status = self.on_link_status

    def compose(self) -> ComposeResult:
        yield self.title_bar
        yield self.boards
        yield self.bars
        yield self.status_bar

    async def on_mount(self) -> None:
        self.set_interval(0.1, self.redraw_if_due)
        self.redraw()
        await connect_or_exit(self, self.seat)

    async def on_unmount(self) -> None:
        await self.seat.close()

    def on_link_status(self, status: str) -> None:
        if status == "connected" and self.seat.link.drops:
            self.link_status = "reconnected"
            self.set_timer(3.0, self.forget_reconnected)
        else:
            self.link_status = "" if status == "connected" else status
        if self.is_running:
            self.redraw()

    def forget_reconnected(self) -> None:
        if self.link_status == "reconnected":
            self.link_status = ""
            self.redraw()

    def on_key(self, event: events.Key) -> None:
        key = event.key
        if key.isdigit() and key != "0" and self.boards.show_seat(int(key) - 1):
            event.stop()

    def action_rules(self) -> None:
        self.push_screen(HelpScreen(self.seat.view.game, WATCH_KEYS))

    def action_page(self, step: int) -> None:
        self.boards.page(step)

    def mark_dirty(self) -> None:
        self.dirty = True

    def redraw_if_due(self) -> None:
        """Changes within a tenth of a second; the clocks every half second."""
        if self.dirty or time.monotonic() - self.drawn_at > 0.5:
            self.redraw()

    def redraw(self) -> None:
        if not self.is_running:
            return
        self.dirty = False
        self.drawn_at = time.monotonic()
        view = self.seat.view
        parts = [f"watching room {view.room}"]
        if view.game:
            parts.append(view.deal)
        parts.append(view.phase)
        delay = view.settings.get("spectator_delay")
        if delay:
            parts.append(f"{delay:g} s behind")
        parts.append(clock(self.seat.race_seconds()))
        self.title_bar.update(Text(" " + " · ".join(parts), style="bold"))
        self.boards.refresh()
        self.bars.update_players(player_lines(view, time.time(), style_you=False))
        boards = self.boards
        hidden = len(view.boards) - boards.per_page()
        status = Text()
        lost = self.seat.refused_back
        if lost is not None:  # a rewatch refused for good
            status.append(f" ✗ cannot watch again: {lost.message} ({lost.code})", style="bold red")
        elif self.link_status.startswith("reconnecting"):
            status.append(f" ⟳ {self.link_status}", style="bold yellow")
        elif self.link_status == "reconnected":
            status.append(" ✓ reconnected: watching live again", style="bold green")
        elif hidden > 0:
            status.append(f" {hidden} more board(s): Tab/→ next · ← back · 1-8 a seat", style="dim")
        status.append("  ? rules · q quit", style="dim")
        self.status_bar.update(status)
        results = self.results_screen
        if view.phase == "finished" and self.results_shown_for != view.round:
            self.results_shown_for = view.round
            self.results_screen = ResultsScreen(
                results_table(view), view.game, player=False, votes=rematch_text(view)
            )
            self.push_screen(self.results_screen, self.after_results)
        elif results is not None and view.phase != "finished":  # a rematch began
            self.results_screen = None
            if self.screen is results:
                results.dismiss("board")
        elif results is not None:
            results.show_votes(rematch_text(view))

    def after_results(self, choice: str | None) -> None:
        self.results_screen = None
        if choice == "quit":
            self.exit()


def side_by_side(
    seats: list[int], width: int, panel: Callable[[int, int], RenderableType]
) -> RenderableType:
    """The seats' panels in one row, sharing `width` (each at least 20 columns)."""
    cell = max(20, width // len(seats) - 1)
    grid = Table.grid(padding=(0, 1))
    for _ in seats:
        grid.add_column(width=cell)
    grid.add_row(*(panel(seat, cell) for seat in seats))
    return grid
