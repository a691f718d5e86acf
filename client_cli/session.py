"""What a board screen plays against: an offline engine game, or a seat in a race.

The screen only knows this small async surface, so practice, a race and the
bot share one board, one key map and one way to show a refused move.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["Allowed", "LocalSession", "Outcome", "Session", "solver_hint"]


@dataclass(frozen=True)
class Allowed:
    """Which helpers the room (or practice) allows."""

    undo: bool = True
    hint: bool = True
    autoplay: bool = True


@dataclass
class Outcome:
    """The answer to a request: done (with the moves made), or refused with the reason."""

    ok: bool
    reason: str = ""
    moves: list[str] = field(default_factory=list)
    code: str = ""  # the server's error code, when it refused


class Session(Protocol):
    @property
    def allowed(self) -> Allowed:
        """Which helpers may be used now."""

    def state(self) -> dict[str, Any] | None:
        """The board (player view), or None before the deal."""

    def legal_moves(self) -> list[str] | None:
        """The legal moves when known locally (to resolve key picks), else None."""

    async def move(self, text: str) -> Outcome: ...

    async def undo(self) -> Outcome: ...

    async def hint(self) -> Outcome: ...

    async def autoplay(self) -> Outcome: ...


def solver_hint(game: Any) -> Outcome:
    """The solver's next move for `game`, or why there is none.

    The solver is optional at run time: without it the player is told so plainly.
    """
    try:
        core = importlib.import_module("core")
    except ImportError:  # pragma: no cover - core ships with the client
        return Outcome(False, "hints need the engine (core)")
    hint: Callable[[Any], str | None] | None = getattr(core, "hint", None)
    if hint is None:
        return Outcome(False, "no hints: this build has no solver")
    move = hint(game)
    if move is None:
        return Outcome(False, "the solver finds no winning line from here (try undo)")
    return Outcome(True, moves=[move])


class LocalSession:
    """Practice: the engine itself, offline, every helper allowed."""

    def __init__(self, game: Any, allowed: Allowed | None = None) -> None:
        self.game = game
        self.allowed = allowed or Allowed()

    @classmethod
    def new(cls, name: str, seed: int) -> LocalSession:
        from core import new_game

        return cls(new_game(name, seed))

    def state(self) -> dict[str, Any]:
        result: dict[str, Any] = self.game.state(view="player")
        return result

    def legal_moves(self) -> list[str] | None:
        moves: list[str] = self.game.legal_moves()
        return moves

    async def move(self, text: str) -> Outcome:
        from core import IllegalMove

        try:
            self.game.apply(text)
        except IllegalMove as refused:
            return Outcome(False, str(refused))
        return Outcome(
            True, moves=[self.game.history[-1]] if hasattr(self.game, "history") else [text]
        )

    async def undo(self) -> Outcome:
        from core import IllegalMove

        try:
            self.game.undo()
        except IllegalMove as refused:
            return Outcome(False, str(refused))
        return Outcome(True)

    async def hint(self) -> Outcome:
        return solver_hint(self.game)

    async def autoplay(self) -> Outcome:
        return Outcome(True, moves=list(self.game.autoplay()))
