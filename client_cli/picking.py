"""Moves by keys: pick a source pile, then a destination; and the pile cursor.

Quick keys (on an empty move line): a digit names a tableau pile (Moojub: a
reserve), `f` a foundation and `c` a free cell once a source is picked, the
arrows move a cursor over the piles and space or Enter picks the pile under it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from client_cli.board import pile_column, pile_rows

__all__ = ["digit_pile", "key_move", "move_cursor"]


def digit_pile(game: str, digit: str) -> str | None:
    """The pile a digit key names: `t1`..`t8`, or Moojub's reserves `r1`..`r4`."""
    if not digit.isdigit() or digit == "0":
        return None
    n = int(digit)
    if game == "moojub":
        return f"r{n}" if n <= 4 else None
    return f"t{n}" if n <= 8 else None


def key_move(state: Mapping[str, Any], src: str, dst: str, legal: Sequence[str] | None) -> str:
    """The move text for "from `src` to `dst`" picked by keys.

    `dst` may be a pile id, `f` (the engine's "first foundation that takes it") or
    `c` (the first empty cell). Between two tableau piles the biggest legal group
    moves, as a drag of the whole run would in PySolFC; when nothing is legal the
    plain one-card move is sent so the player reads the rules' reason.
    """
    if src == "talon" or dst == "talon":
        return "deal"
    if dst == "c":
        cells = sorted((p for p in state["piles"] if p.startswith("c")), key=lambda p: int(p[1:]))
        dst = next((c for c in cells if not state["piles"][c]), cells[0] if cells else "c1")
    if legal is not None and dst != "f":
        groups = [m.split() for m in legal]
        sizes = [int(w[2]) if len(w) == 3 else 1 for w in groups if w[:2] == [src, dst]]
        if sizes and max(sizes) > 1:
            return f"{src} {dst} {max(sizes)}"
    return f"{src} {dst}"


def move_cursor(game: str, cursor: str | None, key: str) -> str:
    """The pile the cursor lands on after an arrow key (it starts on the first pile)."""
    rows = pile_rows(game)
    where = {pile: (r, i) for r, row in enumerate(rows) for i, pile in enumerate(row)}
    if cursor not in where:
        return rows[-1][0]
    r, i = where[cursor]
    if key == "left":
        return rows[r][(i - 1) % len(rows[r])]
    if key == "right":
        return rows[r][(i + 1) % len(rows[r])]
    if key in ("up", "down"):
        # Straight up or down on screen: the pile of the next row nearest this column.
        column = pile_column(game, cursor)
        r = (r + (-1 if key == "up" else 1)) % len(rows)
        return min(rows[r], key=lambda pile: abs(pile_column(game, pile) - column))
    return rows[r][i]
