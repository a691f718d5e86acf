"""Draw a game from its `state()` dict, laid out as PySolFC players know it.

Foundations and cells (or Moojub's 8x4 foundation grid) on top, the tableau (or
Moojub's reserves and talon) below, every pile under its id. Pure functions of
the state dict: the same code draws a practice game, a race and each board a
spectator watches, at whatever size the terminal offers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from client_cli.cards import CARD_WIDTH, CardStyle, card_text

__all__ = ["Marks", "pile_at", "pile_column", "pile_rows", "render_board", "slot_width"]

MIN_SLOT = CARD_WIDTH + 1
MAX_SLOT = 12
WIDE_SLOT = 10  # from this slot width on, card faces get a column of margin each side
EMPTY = "[ ]"


@dataclass(frozen=True)
class Marks:
    """What to highlight: the picked source pile, the keyboard cursor, a hinted move."""

    selected: str | None = None
    cursor: str | None = None
    hint: tuple[str, ...] = ()


def pile_rows(game: str) -> list[list[str]]:
    """Pile ids row by row as drawn, for the keyboard cursor (left/right, up/down)."""
    if game == "moojub":
        grid = [[f"f{col * 4 + row + 1}" for col in range(8)] for row in range(4)]
        return [*grid, ["r1", "r2", "r3", "r4", "talon"]]
    tableau = [f"t{i}" for i in range(1, 9)]
    cells = ["c1", "c2", "c3", "c4"] if game == "shaula" else ["c1", "c2"]
    return [["f1", "f2", "f3", "f4", *cells], tableau]


def pile_column(game: str, pile: str) -> int:
    """The slot (0-7) a pile is drawn in, left to right."""
    if pile == "talon":
        return 5
    if game == "stalactites" and pile in ("c1", "c2"):
        return 6 + int(pile[1]) - 1
    if game == "moojub" and pile.startswith("f"):
        return (int(pile[1:]) - 1) // 4
    if pile.startswith("c"):
        return 4 + int(pile[1:]) - 1
    return int(pile[1:]) - 1


def pile_at(game: str, x: int, y: int, width: int) -> str | None:
    """The pile drawn at column `x`, line `y` of a board `width` wide (for mouse clicks).

    Mirrors the layout of `render_board`: a click on a pile's label, its top card or
    anywhere down its column of the tableau names that pile.
    """
    slot = slot_width(width)
    col = x // slot
    if x < 0 or y < 0 or col > 7:
        return None
    if game == "moojub":
        if y < 8:
            return f"f{col * 4 + y // 2 + 1}"
        if y in (9, 10):
            return ["r1", "r2", "r3", "r4", None, "talon", "talon", None][col]
        return None
    if y in (0, 1):
        top: list[str | None]
        if game == "shaula":
            top = ["f1", "f2", "f3", "f4", "c1", "c2", "c3", "c4"]
        else:
            top = ["f1", "f2", "f3", "f4", None, None, "c1", "c2"]
        return top[col]
    return f"t{col + 1}" if y >= 3 else None


def slot_width(width: int) -> int:
    """Columns per pile: eight piles across, never narrower than a card and a gap."""
    return max(MIN_SLOT, min(MAX_SLOT, width // 8))


def render_board(
    state: Mapping[str, Any],
    *,
    width: int = 80,
    height: int = 20,
    style: CardStyle | None = None,
    marks: Marks | None = None,
) -> Text:
    """The piles of `state` in at most `width` x `height` cells (long piles are folded)."""
    painter = _Painter(style or CardStyle(), marks or Marks(), slot_width(width))
    piles: Mapping[str, Sequence[str]] = state["piles"]
    if state["game"] == "moojub":
        lines = painter.moojub(piles, int(state.get("talon_count", 0)))
    else:
        lines = painter.open_game(state["game"], piles, height)
    return Text("\n").join(lines)


class _Painter:
    def __init__(self, style: CardStyle, marks: Marks, slot: int) -> None:
        self.style = style
        self.marks = marks
        self.slot = slot

    def label(self, pile: str) -> Text:
        text = Text()
        text.append(pile, style="dim" if self.style.color else "")
        if pile in self.marks.hint:
            text.stylize("bold green" if self.style.color else "bold")
            text.append("*")
        if pile == self.marks.selected:
            text.stylize("reverse bold")
        if pile == self.marks.cursor:
            text.stylize("underline bold")
            text = Text(">") + text
        return text

    def card(self, card: str | None) -> Text:
        # Roomy slots get roomier card faces: easier to read at a glance.
        face = CARD_WIDTH + 2 if self.slot >= WIDE_SLOT else CARD_WIDTH
        if card is None:
            return Text(EMPTY.center(face) if face > CARD_WIDTH else EMPTY, style="dim")
        return card_text(card, self.style, face)

    def top_with_count(self, cards: Sequence[str]) -> Text:
        """A pile whose top card alone matters, with its size when there is room."""
        text = self.card(cards[-1] if cards else None)
        if cards and self.slot >= CARD_WIDTH + 4:
            text.append(f" {len(cards)}", style="dim")
        return text

    def row(self, cells: Sequence[Text | None]) -> Text:
        """One screen line: each cell padded (or cut) to the slot width."""
        line = Text()
        for i, cell in enumerate(cells):
            piece = cell.copy() if cell is not None else Text()
            if i < len(cells) - 1:  # the last cell may run on (Moojub's `talon`)
                piece.truncate(self.slot - 1, pad=True)
            line.append_text(piece)
            line.append(" ")
        line.rstrip()
        return line

    def open_game(self, game: str, piles: Mapping[str, Sequence[str]], height: int) -> list[Text]:
        top_ids: list[str | None]
        if game == "shaula":
            top_ids = ["f1", "f2", "f3", "f4", "c1", "c2", "c3", "c4"]
        else:
            top_ids = ["f1", "f2", "f3", "f4", None, None, "c1", "c2"]
        counted = game == "stalactites"
        lines = [
            self.row([self.label(p) if p else None for p in top_ids]),
            self.row(
                [
                    None
                    if p is None
                    else self.top_with_count(piles[p])
                    if counted and p.startswith("f")
                    else self.card(piles[p][-1] if piles[p] else None)
                    for p in top_ids
                ]
            ),
            Text(),
        ]
        tableau = [f"t{i}" for i in range(1, 9)]
        lines.append(self.row([self.label(p) for p in tableau]))
        room = max(2, height - len(lines))
        columns = [self.folded(piles[p], room) for p in tableau]
        depth = max(len(c) for c in columns)
        for i in range(depth):
            lines.append(self.row([c[i] if i < len(c) else None for c in columns]))
        return lines

    def folded(self, cards: Sequence[str], room: int) -> list[Text]:
        """A tableau pile, bottom card first; too long a pile shows `+N` then its top cards."""
        if not cards:
            return [self.card(None)]
        if len(cards) <= room:
            return [self.card(c) for c in cards]
        shown = cards[len(cards) - (room - 1) :]
        hidden = Text(f"+{len(cards) - len(shown)}", style="dim")
        return [hidden, *(self.card(c) for c in shown)]

    def moojub(self, piles: Mapping[str, Sequence[str]], talon_count: int) -> list[Text]:
        lines: list[Text] = []
        for grid_row in pile_rows("moojub")[:4]:
            lines.append(self.row([self.label(p) for p in grid_row]))
            lines.append(self.row([self.top_with_count(piles[p]) for p in grid_row]))
        lines.append(Text())
        reserves = ["r1", "r2", "r3", "r4"]
        lines.append(self.row([*(self.label(p) for p in reserves), None, self.label("talon")]))
        talon = Text(str(talon_count), style="bold") if talon_count else Text("--", style="dim")
        lines.append(self.row([*(self.top_with_count(piles[p]) for p in reserves), None, talon]))
        return lines
