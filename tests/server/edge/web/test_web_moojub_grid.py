"""Moojub's 32 foundations are laid out as docs/rules.md numbers them, in the web client
and in the terminal client alike: f1-f4 down the first column, f5-f8 the second, so the
foundation just left of a pile on screen is the one the rules call its left neighbour."""

from __future__ import annotations

import re

from playwright.async_api import Browser
from support.paths import ROOT
from support.server_processes import ServerProcess
from support.web import page_errors, solo_race

from client_cli.board import render_board
from client_cli.cards import CardStyle
from core import new_game

COLUMNS, ROWS = 8, 4


def documented_grid() -> list[list[str]]:
    """The grid docs/rules.md describes, row by row (read from its own words)."""
    text = " ".join((ROOT / "docs" / "rules.md").read_text().split())
    assert "32 foundations arranged as a grid of 8 columns and 4 rows" in text
    assert re.search(
        r"numbered down each column, then across: `f1`-`f4` are the first column "
        r"\(top to bottom\), `f5`-`f8` the second",
        text,
    )
    return [[f"f{col * ROWS + row + 1}" for col in range(COLUMNS)] for row in range(ROWS)]


def left_neighbours() -> dict[str, str]:
    """The doc's worked example: 'the foundation just left of `f7` is `f3`'."""
    text = " ".join((ROOT / "docs" / "rules.md").read_text().split())
    found = re.findall(r"just left of `(f\d+)` is `(f\d+)`", text)
    assert found
    return dict(found)


def grid_of(positions: dict[str, tuple[float, float]]) -> list[list[str]]:
    """Pile ids arranged by their (x, y) on screen: rows top to bottom, left to right."""
    rows: dict[float, list[tuple[float, str]]] = {}
    for pile, (x, y) in positions.items():
        rows.setdefault(round(y), []).append((x, pile))
    return [[pile for _, pile in sorted(row)] for _, row in sorted(rows.items())]


def check(grid: list[list[str]]) -> None:
    assert grid == documented_grid()
    for pile, left in left_neighbours().items():
        row = next(r for r in grid if pile in r)
        assert row[row.index(pile) - 1] == left


def test_the_terminal_client_numbers_the_grid_as_the_rules_do() -> None:
    state = new_game("moojub", 2).state(view="player")
    lines = render_board(state, style=CardStyle(symbols=False, color=False)).plain.splitlines()
    positions = {
        match.group(): (float(match.start()), float(y))
        for y, line in enumerate(lines)
        for match in re.finditer(r"\bf\d+\b", line)
    }
    check(grid_of(positions))


async def test_the_web_client_numbers_the_grid_as_the_rules_do(
    server: ServerProcess, browser: Browser
) -> None:
    _, page = await solo_race(browser, server.url, game="moojub")
    boxes = await page.eval_on_selector_all(
        "#board .pile.foundation",
        """piles => piles.map(p => { const r = p.getBoundingClientRect();
            return [p.dataset.pile, r.x, r.y]; })""",
    )
    check(grid_of({pile: (x, y) for pile, x, y in boxes}))
    # The ids are shown on the board too, each in its own pile.
    labels = await page.eval_on_selector_all(
        "#board .pile.foundation .pile-id", "ids => ids.map(i => i.textContent)"
    )
    assert sorted(labels) == sorted(p for row in documented_grid() for p in row)
    # An empty foundation says what may start it, as every empty pile does.
    named = await page.eval_on_selector_all(
        "#board .pile.foundation",
        "ps => ps.map(p => [p.dataset.pile, p.getAttribute('aria-label')])",
    )
    words = dict(named)
    assert (
        words["f7"] == "f7, foundation, empty, takes a card of f3's base suit, once f6 is started"
    )
    assert words["f2"].startswith("f2, foundation, empty, takes a card of a suit no other")
    assert page_errors(page) == []
