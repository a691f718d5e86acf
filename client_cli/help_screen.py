"""`?` on every screen: the keys of that screen, then the game's rules in plain words.

The rules are `core.rules_text(game)`, the same text as `solrace rules GAME` and
docs/rules.md. The screen scrolls (arrows, Page Up/Down, Home/End); any other key
closes it, so a player is never stuck in it.
"""

from __future__ import annotations

from rich.markdown import Markdown
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from core import GAMES, rules_text

__all__ = ["PLAY_KEYS", "WATCH_KEYS", "HelpScreen"]

PLAY_KEYS = """\
[b]Moves[/b]: type them and press Enter
  t5 t2   t5's top card onto t2    t5 t2 3  a group of three (Shaula)
  c1 f    onto its foundation      deal     Moojub: a card per reserve
[b]Quick keys[/b], on an empty move line
  1-8     pick a tableau pile (Moojub 1-4: a reserve), then its target
  f  c    target: its foundation, the first free cell
  arrows  move the cursor; space or Enter picks; Esc unpicks
  mouse   click a pile, then its target; double click: to a foundation
  u undo  h hint  a autoplay  A autodrop  n deal  ? this help  q quit
[b]Races[/b]: r ready · s start now (host) · type resign · m rematch"""

WATCH_KEYS = """\
[b]Watching[/b]: every racer's board, live
  Tab →   the next boards     Shift+Tab ←  the previous ones
  1-8     the board of seat 1-8            ? this help  q quit"""

CLOSE = "[dim]↑↓ PgUp PgDn scroll · any other key closes[/dim]"

SCROLL_KEYS = {
    "up": "scroll_up",
    "down": "scroll_down",
    "pageup": "scroll_page_up",
    "pagedown": "scroll_page_down",
    "home": "scroll_home",
    "end": "scroll_end",
}


class HelpScreen(ModalScreen[None]):
    """The keys, then the rules of `game` (none yet: `solrace rules` is named instead)."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 80; max-width: 100%; height: auto; max-height: 100%;
                                  border: round $accent; padding: 0 1; background: $surface;
                                  scrollbar-size-vertical: 1; }
    """

    def __init__(self, game: str = "", keys: str = PLAY_KEYS) -> None:
        super().__init__()
        self.game = game
        self.keys = keys
        self.scroller = VerticalScroll()

    def compose(self) -> ComposeResult:
        with self.scroller:
            yield Static(f"{self.keys}\n{CLOSE}\n")
            if self.game in GAMES:
                yield Static(Markdown(rules_text(self.game)))
            else:
                yield Static(Text(f"The rules of each game: solrace rules {'|'.join(GAMES)}"))

    def on_key(self, event: events.Key) -> None:
        event.stop()
        event.prevent_default()
        action = SCROLL_KEYS.get(event.key)
        if action is not None:
            getattr(self.scroller, action)(animate=False)
        else:
            self.dismiss()
