"""What a board screen plays against: an offline engine game, or a seat in a race.

The screen only knows this small async surface, so practice and a race share one
board, one key map and one way to show a refused move.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core import Game, IllegalMove, hint, new_game

__all__ = ["NO_AUTOPLAY", "Allowed", "LocalSession", "Outcome", "Session", "solver_hint"]

# Games whose autoplay never has a move: the rules count no Moojub move safe in every
# deal (a build can uncover a card that blocks a foundation's start).
NO_AUTOPLAY = frozenset({"moojub"})


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


def solver_hint(game: Game) -> Outcome:
    """The solver's next move for `game` (practice: it may read the whole deal)."""
    move = hint(game)
    if move is None:
        return Outcome(False, "no move is left: try undo")
    return Outcome(True, moves=[move])


class LocalSession:
    """Practice: the engine itself, offline, every helper allowed."""

    def __init__(self, game: Game, allowed: Allowed | None = None) -> None:
        self.game = game
        self.allowed = allowed or Allowed()

    @classmethod
    def new(cls, name: str, seed: int) -> LocalSession:
        return cls(new_game(name, seed), Allowed(autoplay=name not in NO_AUTOPLAY))

    def state(self) -> dict[str, Any]:
        return self.game.state(view="player")

    def legal_moves(self) -> list[str] | None:
        return self.game.legal_moves()

    async def move(self, text: str) -> Outcome:
        try:
            self.game.apply(text)
        except IllegalMove as refused:
            return Outcome(False, str(refused))
        return Outcome(True, moves=[self.game.history[-1]])

    async def undo(self) -> Outcome:
        try:
            self.game.undo()
        except IllegalMove as refused:
            return Outcome(False, str(refused))
        return Outcome(True)

    async def hint(self) -> Outcome:
        return solver_hint(self.game)

    async def autoplay(self) -> Outcome:
        return Outcome(True, moves=self.game.autoplay())
