"""Textual widgets: the board, the move line with its quick keys, and the race bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.cells import cell_len, set_cell_size
from rich.console import RenderableType
from rich.padding import Padding
from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input

from client_cli.board import Marks, pile_at, render_board
from client_cli.cards import CardStyle

__all__ = [
    "BoardView",
    "MoveInput",
    "PlayerLine",
    "RaceBars",
    "clock",
    "clock_ms",
    "counted",
    "delta_text",
    "duration",
    "progress_bar",
    "splits_text",
]

# Keys that act at once on an empty move line; every other key types notation.
# Notation starts with a pile letter (t c f r) or `deal`, so none of these clash; `q` quits
# on every screen, as in the watch and results screens.
QUICK_KEYS = frozenset(
    ("left", "right", "up", "down", "space", "escape", "question_mark", *"uhaAnq")
)


class BoardView(Widget):
    """One board, drawn to whatever size the widget gets; a click names a pile."""

    class Clicked(Message):
        def __init__(self, pile: str, double: bool = False) -> None:
            super().__init__()
            self.pile = pile
            self.double = double

    DEFAULT_CSS = "BoardView { height: 1fr; }"

    def __init__(
        self, state: Mapping[str, Any] | None = None, style: CardStyle | None = None, **kw: Any
    ) -> None:
        super().__init__(**kw)
        self.state: Mapping[str, Any] | None = state
        self.card_style = style or CardStyle()
        self.marks = Marks()
        self.left = 0  # columns of centring before the board
        self.placeholder: RenderableType = Text("waiting for the deal…", style="dim")

    def show(self, state: Mapping[str, Any] | None, marks: Marks | None = None) -> None:
        """Draw `state`; None shows the placeholder (the lobby, a new round's countdown)."""
        self.state = state
        if marks is not None:
            self.marks = marks
        self.refresh()

    def render(self) -> RenderableType:
        if self.state is None:
            return self.placeholder
        width = self.size.width
        board = render_board(
            self.state,
            width=width,
            height=self.size.height,
            style=self.card_style,
            marks=self.marks,
        )
        # Centre the board when the terminal is much wider than it.
        spare = width - max((len(line) for line in board.plain.splitlines()), default=0)
        self.left = spare // 2 if spare > 8 else 0
        return Padding(board, (0, 0, 0, self.left)) if self.left else board

    def on_click(self, event: events.Click) -> None:
        if self.state is None:
            return
        pile = pile_at(str(self.state["game"]), event.x - self.left, event.y, self.size.width)
        if pile is not None:
            self.post_message(self.Clicked(pile, double=event.chain >= 2))


class MoveInput(Input):
    """The move line: type `t5 t2`, or use the quick keys while it is empty."""

    class Quick(Message):
        """A quick key pressed on the empty move line."""

        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

    def __init__(self, quick_letters: str = "", **kw: Any) -> None:
        super().__init__(**kw)
        # Letters that are quick keys at this moment of the screen (the lobby's `r`, `s`).
        self.quick_letters = quick_letters
        # Whether a source is picked, as the app last drew it: `f` and `c` then drop it.
        self.picked = False
        # Quick keys handed to the app and not yet handled (`handled`), and whether a
        # source is picked once they are (a digit picks, the next one drops). Until then
        # `picked` is older than the keys: f or c typed right after a digit (a fast
        # typist, a slow link) drops the card the digit picked.
        self.in_flight = 0
        self.picked_ahead = False

    def handled(self) -> None:
        """The app has handled one of the quick keys this line handed it."""
        self.in_flight = max(0, self.in_flight - 1)

    def picked_now(self) -> bool:
        """Whether a source is picked once the keys already handed over are handled."""
        return self.picked_ahead if self.in_flight else self.picked

    def quick_key(self, key: str) -> bool:
        """Whether `key`, pressed on the empty line, is a quick key (else it is typed)."""
        return (
            key in QUICK_KEYS
            or key.isdigit()
            or key in self.quick_letters
            or (self.picked_now() and key in ("f", "c"))
        )

    def post_quick(self, key: str) -> None:
        picked = self.picked_now()
        if key.isdigit():
            picked = not picked
        elif key in ("escape", "f", "c"):
            picked = False
        self.picked_ahead = picked
        self.in_flight += 1
        self.post_message(self.Quick(key))

    async def action_submit(self) -> None:
        """Hand the line over and empty it at once, before the next key is read."""
        value, self.value = self.value, ""
        self.post_message(self.Submitted(self, value))

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        if key == "enter":
            # Here, not as a binding: bindings run once the key has bubbled up to the
            # app, after the keys behind it (a paste, a fast typist) reached the line.
            event.stop()
            event.prevent_default()
            await self.action_submit()
            return
        if not self.value and self.quick_key(key):
            event.stop()
            event.prevent_default()
            self.post_quick(key)
            return
        await super()._on_key(event)


def progress_bar(done: int, total: int, width: int, style: CardStyle) -> Text:
    """`██████░░░░` filled in proportion; `#` and `-` without colour or symbols."""
    width = max(1, width)
    filled = 0 if total <= 0 else min(width, round(width * done / total))
    full, empty = ("█", "░") if style.symbols else ("#", "-")
    bar = Text()
    bar.append(full * filled, style="green" if style.color else "")
    bar.append(empty * (width - filled), style="dim" if style.color else "")
    return bar


@dataclass
class PlayerLine:
    """One racer as the bars show them."""

    name: str
    progress: int = 0
    total: int = 52
    moves: int = 0
    seconds: float | None = 0.0  # None: not known (they were done before we came)
    status: str = ""  # "", "finished", "stuck", "gave up", "offline"
    you: bool = False
    splits: tuple[float | None, ...] = ()  # seconds at each quarter of the cards up
    best: tuple[float | None, ...] = ()  # one's own best splits: a delta beside each reached


def split_clock(seconds: float | None) -> str:
    """A split as `m:ss.t` (`1:28.4`), or `-` where not reached."""
    if seconds is None:
        return "-"
    tenths = max(0, int(seconds * 10))
    return f"{tenths // 600}:{tenths // 10 % 60:02d}.{tenths % 10}"


def delta_text(split: float, best: float) -> str:
    """Ahead (-) or behind (+) one's best at a split, to a tenth (half a tenth away from
    zero, counted in whole ms as the splits are): `-3.2 s`, `+1.0 s`, `±0.0 s`."""
    ms = round(split * 1000) - round(best * 1000)
    tenths = (abs(ms) + 50) // 100
    sign = "±" if tenths == 0 else "-" if ms < 0 else "+"
    return f"{sign}{tenths // 10}.{tenths % 10} s"


def splits_text(splits: Sequence[float | None], best: Sequence[float | None] = ()) -> str:
    """Every split, each right-aligned in its own column: `0:41.2 1:28.4      -      -`;
    with `best`, each reached split's delta to it after it (`0:41.2   -3.2 s`)."""
    cells = []
    for i, s in enumerate(splits):
        cell = f"{split_clock(s):>7}"
        if best:
            b = best[i] if i < len(best) else None
            cell += f" {delta_text(s, b) if s is not None and b is not None else '':>8}"
        cells.append(cell)
    return " ".join(cells)


def clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}:{seconds % 60:02d}"


def counted(n: int, word: str) -> str:
    """`n` of `word`, in the plural but for one: "1 card", "3 moves", "0 days"."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def clock_ms(seconds: float) -> str:
    """A time that ranks to the millisecond (a daily board's): `1:05.744`."""
    ms = max(0, round(seconds * 1000))
    return f"{clock(ms // 1000)}.{ms % 1000:03d}"


def duration(seconds: float) -> str:
    """A span as people say it, for what is not a race's time: "30 s", "1 min 30 s",
    "4 h 2 min" (past an hour the seconds say nothing). Rounded down: a seat kept this
    long is kept at least that long."""
    seconds = max(0, int(seconds))
    hours, minutes, rest = seconds // 3600, seconds // 60 % 60, seconds % 60
    if hours:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    if minutes:
        return f"{minutes} min" + (f" {rest} s" if rest else "")
    return f"{rest} s"


BOT_TAG = " (bot)"  # after a bot's name (client_cli/race.py, Racer.shown_name)


def fit_name(name: str, width: int, cut: str = "…") -> str:
    """`name` in exactly `width` terminal columns: cut at its end when longer, where `cut`
    says so (as the browser cuts a long name), but a bot's name keeps its `(bot)`."""
    if cell_len(name) <= width or width <= len(cut):
        return set_cell_size(name, width)
    if name.endswith(BOT_TAG) and width > 2 * len(BOT_TAG):
        base = width - len(BOT_TAG) - len(cut)
        return set_cell_size(name.removesuffix(BOT_TAG), base) + cut + BOT_TAG
    return set_cell_size(name, width - len(cut)) + cut


class RaceBars(Widget):
    """Every racer's progress as a live bar with moves and time."""

    DEFAULT_CSS = "RaceBars { height: auto; }"

    players: reactive[tuple[PlayerLine, ...]] = reactive((), layout=True)

    def __init__(self, style: CardStyle | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.card_style = style or CardStyle()

    def update_players(self, players: Sequence[PlayerLine]) -> None:
        self.players = tuple(players)

    def get_content_height(self, container: Any, viewport: Any, width: int) -> int:
        return max(1, len(self.players))

    def render(self) -> RenderableType:
        if not self.players:
            return Text("no racers yet", style="dim")
        width = self.size.width or 80
        names = [
            (("▸ " if self.card_style.symbols else "> ") if p.you else "  ") + p.name
            for p in self.players
        ]
        # Measured in terminal columns: a CJK character takes two.
        name_w = min(18, max(map(cell_len, names)) + 1)  # a bot's "Bot-1234 (bot)" whole
        tails = [
            f" {p.progress:>2}/{p.total} {p.moves:>4} mv "
            + (f"{clock(p.seconds):>6}" if p.seconds is not None else "  -:--")
            for p in self.players
        ]
        status_w = max(len(p.status) for p in self.players)
        status_w = status_w + 2 if status_w else 0
        bar_w = max(5, width - name_w - max(map(len, tails)) - status_w - 1)
        # The splits beside the bar, where they leave it 12 columns or more.
        split_cells = [splits_text(p.splits, p.best) if p.splits else "" for p in self.players]
        split_w = max(map(len, split_cells)) + 1
        if any(split_cells) and bar_w - split_w >= 12:
            bar_w -= split_w
            tails = [f"{tail} {cell}" for tail, cell in zip(tails, split_cells, strict=True)]
        lines = []
        for p, name, tail in zip(self.players, names, tails, strict=True):
            line = Text()
            cut = "…" if self.card_style.symbols else "."
            line.append(fit_name(name, name_w - 1, cut) + " ", style="bold" if p.you else "")
            line.append_text(progress_bar(p.progress, p.total, bar_w, self.card_style))
            line.append(tail)
            if p.status:
                colour = {"finished": "bold green", "ready": "green"}.get(p.status, "yellow")
                line.append(f"  {p.status}", style=colour if self.card_style.color else "bold")
            lines.append(line)
        return Text("\n").join(lines)
