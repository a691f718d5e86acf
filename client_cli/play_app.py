"""The board screen a player plays on: practice offline, or a seat in a race."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Static

import core
from client_cli.board import Marks
from client_cli.cards import CardStyle, cards_in_text
from client_cli.help_screen import HelpScreen
from client_cli.picking import digit_pile, key_move, move_cursor
from client_cli.session import NO_AUTOPLAY, Outcome, Session
from client_cli.widgets import BoardView, MoveInput, clock, counted

__all__ = ["PlayApp"]

# Shorter words for the title line when the terminal is too narrow for it.
TITLE_SHORTHAND = ((" cards", ""), (" moves", " mv"), (" move", " mv"), ("room ", ""))


class PlayApp(App[None]):
    """Board, status line and move line over a Session."""

    CSS = """
    #title { height: 1; background: $primary-background; }
    #status { height: auto; max-height: 4; }
    MoveInput { border: none; height: 1; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+z", "queued_undo", "Undo", show=False),
        Binding("f1", "help", "Help", show=False),
        # A newcomer's first way out: as q (mid-race it asks once more), even in the move
        # line, where Textual would take it as "copy".
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
    ]

    def __init__(
        self,
        session: Session,
        title: str,
        style: CardStyle | None = None,
        *,
        queued: bool = False,
    ) -> None:
        super().__init__()
        self.session = session
        self.heading = title
        self.card_style = style or CardStyle()
        self.selected: str | None = None
        self.cursor: str | None = None
        self.hinted: tuple[str, ...] = ()
        self.started = time.monotonic()
        self.finished_after: float | None = None
        self.autodrop = False  # PySolFC's "auto drop": safe cards go up after each move
        # Network sessions queue actions for a worker (see perform); offline: None.
        self.actions: asyncio.Queue[Callable[[], Awaitable[None]]] | None = (
            asyncio.Queue() if queued else None
        )
        self.message = Text()
        # Kept by reference: `query_one` would search a help or results screen on top.
        self.title_bar = Static(id="title")
        self.board_view = BoardView(session.state(), self.card_style, id="board")
        self.status_bar = Static(id="status")
        self.move_input = MoveInput(placeholder=self.placeholder(), id="move")

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        yield self.title_bar
        yield self.board_view
        yield from self.compose_extra()
        yield self.status_bar
        yield self.move_input

    def compose_extra(self) -> ComposeResult:
        """Room for what a race adds between the board and the status line."""
        yield from ()

    def placeholder(self) -> str:
        allowed = self.session.allowed
        extras = [
            name
            for name, ok in (
                ("u undo", allowed.undo),
                ("h hint", allowed.hint),
                ("a auto", allowed.autoplay),
            )
            if ok
        ]
        keys = {
            "moojub": ["move (r1 f)", "1-4 pick", "n deal"],
            "stalactites": ["move (t5 f)", "1-8 pick"],
        }.get(self.game, ["move (t5 t2)", "1-8 pick"])
        return " · ".join([*keys, *extras, "? rules", "q quit"])

    async def on_mount(self) -> None:
        if self.actions is not None:
            self.run_worker(self.run_actions(), name="actions", exit_on_error=True)
        self.move_input.focus()
        self.set_interval(1.0, self.show_title)
        self.redraw()

    @property
    def game(self) -> str:
        state = self.session.state()
        return "" if state is None else str(state["game"])

    def elapsed(self) -> float:
        if self.finished_after is not None:
            return self.finished_after
        return time.monotonic() - self.started

    def title_parts(self, state: dict[str, Any] | None) -> list[str]:
        if state is None:
            return [self.heading]
        total = core.game_class(state["game"]).progress_total
        parts = [
            self.heading,
            f"{state['progress']}/{total} cards",
            counted(state["moves"], "move"),
            clock(self.elapsed()),
        ]
        if state["game"] == "stalactites":
            step = state.get("step")
            parts.append("step open" if step is None else f"by {'ones' if step == 1 else 'twos'}")
        if self.autodrop:
            parts.append("autodrop")
        return parts

    def show_title(self) -> None:
        parts = self.title_parts(self.session.state())
        title = " " + " · ".join(parts)
        if len(title) > self.size.width > 0:  # narrow: the short words
            for long, short in TITLE_SHORTHAND:
                title = title.replace(long, short)
        self.title_bar.update(Text(title, style="bold"))

    def redraw(self) -> None:
        state = self.session.state()
        if state is not None and state["won"] and self.finished_after is None:
            self.finished_after = time.monotonic() - self.started
        marks = Marks(selected=self.selected, cursor=self.cursor, hint=self.hinted)
        self.board_view.show(state, marks)
        move_input = self.move_input
        move_input.quick_letters = ""
        move_input.picked = self.selected is not None
        move_input.placeholder = self.placeholder()
        self.show_title()
        self.status_bar.update(self.status_text(state))

    def status_text(self, state: dict[str, Any] | None) -> Text:
        if state is None:
            return self.message
        if state["won"]:
            return Text(
                f" ★ Won in {state['moves']} moves, {clock(self.elapsed())}!", style="bold green"
            )
        if self.message:
            return self.message
        if state["stuck"]:
            return Text(
                " Stuck: no legal move is left."
                + (" u undoes." if self.session.allowed.undo else ""),
                style="yellow",
            )
        if self.selected:
            return Text(f" {self.selected} → ?  (a digit, f, c, or the cursor; Esc drops it)")
        return Text()

    def say(self, text: str, style: str = "") -> None:
        self.message = cards_in_text(" " + text, self.card_style, style)

    # ---------------------------------------------------------------- actions

    async def perform(self, action: Callable[[], Awaitable[None]]) -> None:
        """Run what a key, a click or the move line asked for.

        Offline it runs at once. Over the network, answers take a round trip (or a
        reconnect): actions then queue up for one worker, in order, so the screen
        keeps drawing and taking keys meanwhile.
        """
        if self.actions is None:
            await action()
        else:
            self.actions.put_nowait(action)

    async def run_actions(self) -> None:
        assert self.actions is not None
        while True:
            action = await self.actions.get()
            await action()

    async def on_input_submitted(self, event: MoveInput.Submitted) -> None:
        text = event.value.strip()  # MoveInput has emptied itself already
        await self.perform(lambda: self.submitted(text))

    async def submitted(self, text: str) -> None:
        if not text:
            await self.quick("enter")
            return
        words = self.commands()
        if text.lower() in words:
            await words[text.lower()]()
            return
        self.selected = None
        await self.send(text)

    def commands(self) -> dict[str, Callable[[], Awaitable[None]]]:
        """Words typed on the move line that are not moves."""
        return {
            "undo": self.action_undo,
            "hint": self.action_hint,
            "auto": self.action_autoplay,
            "autoplay": self.action_autoplay,
            "help": self.action_help,
        }

    async def on_move_input_quick(self, event: MoveInput.Quick) -> None:
        async def handle() -> None:
            try:
                await self.quick(event.key)
            finally:
                self.move_input.handled()

        await self.perform(handle)

    async def on_board_view_clicked(self, event: BoardView.Clicked) -> None:
        await self.perform(lambda: self.clicked(event))

    async def clicked(self, event: BoardView.Clicked) -> None:
        """The mouse: click a source pile, then a destination, as with the keys; a
        double click sends a card to its foundation, as in PySolFC."""
        self.cursor = event.pile
        self.move_input.focus()
        if event.double and event.pile[0] in "tcr":
            self.selected = None
            await self.send(f"{event.pile} f")
        else:
            await self.pick(event.pile)

    async def quick(self, key: str) -> None:
        if key in ("left", "right", "up", "down"):
            self.cursor = move_cursor(self.game, self.cursor, key)
        elif key in ("space", "enter"):
            if self.cursor is None:
                self.cursor = move_cursor(self.game, None, "right")
            else:
                await self.pick(self.cursor)
                return
        elif key == "escape":
            self.selected = None
        elif key.isdigit():
            pile = digit_pile(self.game, key)
            if pile is None:
                self.say(f"no pile on key {key}", "yellow")
            else:
                await self.pick(pile)
                return
        elif key in ("f", "c") and self.selected:
            await self.pick(key)
            return
        elif key == "u":
            await self.action_undo()
            return
        elif key == "h":
            await self.action_hint()
            return
        elif key == "a":
            await self.action_autoplay()
            return
        elif key == "A" and self.game in NO_AUTOPLAY:
            name = self.game.capitalize()
            self.say(f"{name} has no autodrop: no move is safe in every deal (? rules)", "yellow")
        elif key == "A":
            self.autodrop = not self.autodrop
            self.say(
                f"autodrop {'on: safe cards go up after each move' if self.autodrop else 'off'}"
            )
            if self.autodrop:
                await self.action_autoplay(quiet=True)
                return
        elif key == "n":
            await self.send("deal")
            return
        elif key == "question_mark":
            await self.action_help()
            return
        elif key == "q":
            await self.action_quit()
            return
        self.redraw()

    async def pick(self, pile: str) -> None:
        """Pick-source-then-destination, by digit, letter or cursor."""
        if pile == "talon":
            self.selected = None
            await self.send("deal")
        elif self.selected is None:
            state = self.session.state()
            if state is None or pile in ("f", "c") or not state["piles"].get(pile):
                self.say(f"{pile} has no card to move", "yellow")
            elif pile.startswith("f"):
                self.say("cards never leave a foundation", "yellow")
            else:
                self.selected = pile
                self.message = Text()
            self.redraw()
        elif pile == self.selected:
            self.selected = None
            self.redraw()
        else:
            src, self.selected = self.selected, None
            state = self.session.state()
            if state is None:
                return
            text = key_move(state, src, pile, self.session.legal_moves())
            await self.send(text)

    async def send(self, text: str) -> None:
        outcome = await self.session.move(text)
        self.show_outcome(text, outcome)
        if outcome.ok and self.autodrop and self.session.allowed.autoplay:
            await self.action_autoplay(quiet=True)

    def show_outcome(self, text: str, outcome: Outcome) -> None:
        if outcome.ok:
            self.message = Text()
            self.hinted = ()
        else:
            self.say(f"✗ {text}: {outcome.reason}", "bold red")
        self.redraw()

    async def action_queued_undo(self) -> None:
        await self.perform(self.action_undo)

    async def action_undo(self) -> None:
        if not self.session.allowed.undo:
            self.say("this room does not allow undo", "yellow")
        else:
            outcome = await self.session.undo()
            self.show_outcome("undo", outcome)
            return
        self.redraw()

    async def action_hint(self) -> None:
        if not self.session.allowed.hint:
            self.say("this room does not allow hints", "yellow")
        else:
            outcome = await self.session.hint()
            if outcome.ok and outcome.moves:
                move = outcome.moves[0]
                self.hinted = tuple(w for w in move.split()[:2] if not w.isdigit())
                self.say(f"hint: {move}", "bold green")
            else:
                self.say(outcome.reason, "yellow")
        self.redraw()

    async def action_autoplay(self, quiet: bool = False) -> None:
        if self.game in NO_AUTOPLAY:
            name = self.game.capitalize()
            self.say(f"{name} has no autoplay: no move is safe in every deal (? rules)", "yellow")
        elif not self.session.allowed.autoplay:
            self.say("autoplay needs the deal, which is not known yet", "yellow")
        else:
            outcome = await self.session.autoplay()
            if not outcome.ok:
                self.say(f"✗ autoplay: {outcome.reason}", "bold red")
            elif outcome.moves:
                self.say("autoplay: " + ", ".join(outcome.moves))
            elif quiet:
                pass
            else:
                self.say("autoplay: no safe move to make", "dim")
        self.redraw()

    async def action_help(self) -> None:
        self.push_screen(HelpScreen(self.game))
