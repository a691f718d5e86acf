"""`solrace replay ROOM|FILE`: a finished race, move by move, in the terminal.

The same stepping as the browser's replay page: ← → one move, Home End the deal and the
end, space plays at the race's own pace (s: 1x, 4x, 16x), `--move N` / `--at SECONDS` open
there. The boards side by side as many as fit (Tab pages), or one at a time (b). The
replay is checked before it is shown (the hash chain, every move with the engine).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Static

import core
from client_cli.board import render_board
from client_cli.cards import CardStyle
from client_cli.help_screen import HelpScreen
from client_cli.replay import SPEEDS, ReplayModel
from client_cli.watch_app import BOARD_MIN_WIDTH, side_by_side
from client_cli.widgets import PlayerLine, RaceBars, clock, split_clock

__all__ = ["REPLAY_KEYS", "ReplayApp", "run_replay"]

REPLAY_KEYS = """\
[b]Replay[/b]: the race move by move
  ← →     one move back, one on      Home End  the deal, the end
  space   play or pause              s         speed: 1x, 4x, 16x
  b       boards side by side, or one at a time
  Tab     the next boards (or racer) ? this help  q quit"""

TICK = 0.05  # seconds between frames while playing


class ReplayBoards(Widget):
    """As many boards as fit side by side, or one; `first` is the first seat shown."""

    DEFAULT_CSS = "ReplayBoards { height: 1fr; }"

    def __init__(self, model: ReplayModel, style: CardStyle, **kw: Any) -> None:
        super().__init__(**kw)
        self.model = model
        self.card_style = style
        self.first = 0
        self.one = False

    def seats(self) -> list[int]:
        return sorted(self.model.games)

    def per_page(self) -> int:
        if self.one:
            return 1
        return max(1, min(len(self.seats()), (self.size.width or 80) // BOARD_MIN_WIDTH))

    def page(self, step: int) -> None:
        seats = self.seats()
        self.first = (self.first + step * self.per_page()) % len(seats)
        self.refresh()

    def shown(self) -> list[int]:
        seats = self.seats()
        return [seats[(self.first + i) % len(seats)] for i in range(self.per_page())]

    def render(self) -> RenderableType:
        return side_by_side(self.shown(), self.size.width or 80, self.panel)

    def panel(self, seat: int, width: int) -> RenderableType:
        model = self.model
        head = Text(model.name(seat), style="bold")
        last = next((m for m in reversed(model.replay.moves[: model.pos]) if m[0] == seat), None)
        head.append(f"  {last[1]} at {clock(last[2])}" if last else "  the deal", style="dim")
        board = render_board(
            model.games[seat].state(view="player"),
            width=width,
            height=max(6, (self.size.height or 20) - 1),
            style=self.card_style,
        )
        return Group(head, board)


class ReplayApp(App[None]):
    CSS = """
    #title { height: 1; background: $primary-background; }
    #status { height: 2; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "back", priority=True),
        Binding("right", "step(1)", "on", priority=True),
        Binding("home", "jump(0)", "deal", priority=True),
        Binding("end", "jump(-1)", "end", priority=True),
        Binding("space", "play", "play", priority=True),
        Binding("s", "speed", "speed"),
        Binding("b", "boards", "boards"),
        Binding("tab", "page(1)", "next board", priority=True),
        Binding("shift+tab", "page(-1)", "previous board", priority=True),
        Binding("q", "quit", "quit"),
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
        Binding("question_mark", "help", "help"),
    ]

    def __init__(self, model: ReplayModel, source: str, style: CardStyle | None = None) -> None:
        super().__init__()
        self.model = model
        self.source = source
        self.card_style = style or CardStyle()
        self.playing = False
        self.speed = SPEEDS[0]
        self.clock = model.time()
        self.last_tick = 0.0
        self.title_bar = Static(id="title")
        self.bars = RaceBars(self.card_style, id="bars")
        self.boards = ReplayBoards(model, self.card_style, id="boards")
        self.status_bar = Static(id="status")

    def compose(self) -> ComposeResult:
        yield self.title_bar
        yield self.bars
        yield self.boards
        yield self.status_bar

    def on_mount(self) -> None:
        model = self.model
        title = Text(f" Replay · {model.game.capitalize()} #{model.seed} · {self.source} ")
        title.append(f" ✓ verified, last hash {model.last_hash[:16]}…", style="bold green")
        self.title_bar.update(title)
        self.set_interval(TICK, self.tick)
        self.redraw()

    # ------------------------------------------------------------ actions

    def go(self, n: int) -> None:
        self.model.go(n)
        self.clock = self.model.time()
        self.redraw()

    def action_step(self, step: int) -> None:
        self.playing = False
        self.go(self.model.pos + step)

    def action_jump(self, where: int) -> None:
        self.playing = False
        self.go(self.model.total if where < 0 else where)

    def action_play(self) -> None:
        if self.playing:
            self.playing = False
        else:
            if self.model.pos >= self.model.total:
                self.model.go(0)
            self.playing = True
            self.clock = self.model.time()
            self.last_tick = time.monotonic()
        self.redraw()

    def action_speed(self) -> None:
        self.speed = SPEEDS[(SPEEDS.index(self.speed) + 1) % len(SPEEDS)]
        self.redraw()

    def action_boards(self) -> None:
        self.boards.one = not self.boards.one
        self.boards.refresh()
        self.redraw()

    def action_page(self, step: int) -> None:
        self.boards.page(step)

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.model.game, REPLAY_KEYS))

    def tick(self) -> None:
        if not self.playing:
            return
        now = time.monotonic()
        self.clock += (now - self.last_tick) * self.speed
        self.last_tick = now
        n = self.model.at_time(self.clock)
        if n != self.model.pos:
            self.model.go(n)
        if self.model.pos >= self.model.total:
            self.playing = False
        self.redraw(keep_clock=True)

    # ------------------------------------------------------------ drawing

    def redraw(self, keep_clock: bool = False) -> None:
        model = self.model
        now = self.clock if keep_clock or self.playing else model.time()
        total = core.game_class(model.game).progress_total
        self.bars.update_players(
            [
                PlayerLine(
                    name=model.name(seat),
                    progress=game.progress,
                    total=total,
                    moves=game.moves,
                    seconds=now,
                    status="won" if game.won else "",
                    splits=model.splits_by(seat, now),
                )
                for seat, game in sorted(model.games.items())
            ]
        )
        self.boards.refresh()
        last = model.last_move()
        said = f"{model.name(last[0])}: {last[1]}" if last else "the deal"
        state = "playing" if self.playing else "paused"
        # Two lines: the keys alone fit 80 columns (where one board shows, Tab the next).
        self.status_bar.update(
            f" move {model.pos} of {model.total} · {split_clock(now)} · {said} · {state} "
            f"{self.speed}x\n ←→ step  Home End  space play  s speed  b boards  Tab next"
            "  ? keys  q quit"
        )


def run_replay(args: Any, style: CardStyle) -> int:
    """`solrace replay RACE|FILE [--move N | --at SECONDS]`: 1 when there is none to show."""
    import asyncio
    import sys

    from client_cli.replay import ReplayUnavailable, load_replay

    try:
        text = asyncio.run(load_replay(args.server, args.race))
        model = ReplayModel.from_text(text)
    except ReplayUnavailable as error:
        print(f"solrace replay: {error}", file=sys.stderr)
        return 1
    if args.move is not None:
        model.go(args.move)
    elif args.at is not None:
        model.go(model.at_time(args.at))
    ReplayApp(model, args.race, style).run()
    return 0
