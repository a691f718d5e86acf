"""solrace's rules engine: seeded deals, legal moves, apply, undo, autoplay.

Pure Python, no I/O: the server, the terminal client and the solver all use it.
RULES.md (beside the repository) is the specification; section 9 is this surface::

    from core import new_game, IllegalMove, GAMES
    game = new_game("shaula", 617)
    game.legal_moves()          # ["t1 c1", ...], canonical and ordered
    game.apply("t5 t2 3")       # IllegalMove (a ValueError) with the reason
    game.undo(); game.autoplay(); game.state(view="player")
    game.won, game.stuck, game.progress, game.moves
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

# First: importing it chooses the build of the compiled modules (core/build.py).
from core import build as build
from core.cards import CARD_TEXT, Card
from core.deals import MAX_SEED, check_seed
from core.game import Game
from core.moojub import Moojub
from core.moves import DEAL, IllegalMove, Move, UnreadableMove
from core.shaula import Shaula
from core.stalactites import Stalactites

__all__ = [
    "CARD_TEXT",
    "DEAL",
    "GAMES",
    "GAME_CLASSES",
    "MAX_SEED",
    "Card",
    "Game",
    "IllegalMove",
    "Moojub",
    "Move",
    "Shaula",
    "Stalactites",
    "UnreadableMove",
    "check_seed",
    "from_state",
    "game_class",
    "new_game",
    "rules_text",
]

GAMES: tuple[str, ...] = ("shaula", "stalactites", "moojub")
GAME_CLASSES: dict[str, type[Game]] = {cls.name: cls for cls in (Shaula, Stalactites, Moojub)}


def game_class(name: str) -> type[Game]:
    """The Game subclass for a game name; ValueError for an unknown name."""
    cls = GAME_CLASSES.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"unknown game {name!r}: expected one of {', '.join(GAMES)}")
    return cls


def new_game(name: str, seed: int) -> Game:
    """A new deal of game ``name`` for ``seed`` (1 .. 2**63-1)."""
    return game_class(name)(seed)


@functools.cache
def rules_text(name: str) -> str:
    """Game ``name``'s rules in plain words for players (Markdown); ValueError if unknown.

    One text per game in ``core/rules/``, shown alike by every client (the terminal
    client's ``?`` and ``solrace rules``, the web client) and gathered in docs/rules.md.
    """
    game_class(name)
    return resources.files(__name__).joinpath("rules", f"{name}.md").read_text(encoding="utf-8")


def from_state(data: dict[str, Any]) -> Game:
    """Build a game from a ``state()``-shaped dict, checking it (52 distinct cards, pile ids)."""
    if not isinstance(data, dict):
        raise ValueError("a state must be a dict")
    return game_class(data.get("game", "")).from_state(data)


# The solver's entry points (core.solver), for the server and the bots.
from core.solver import hint, solve, winnable_seed  # noqa: E402  (it imports the engine above)

__all__ += ["hint", "solve", "winnable_seed"]
