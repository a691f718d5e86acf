"""A depth-first search with a transposition table, shared by the three games.

Each game supplies a `Problem`: a compact, mutable position with make/unmake,
a canonical key, safe forced moves and ordered candidate moves. The search
knows nothing of cards; it only promises that "unwinnable" means every
position reachable through the game's (soundly pruned) moves was visited.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

__all__ = ["Outcome", "Problem", "Verdict", "depth_first"]

Move = TypeVar("Move")
Verdict = Literal["won", "unwinnable", "unknown"]

# How many new positions pass between two looks at the clock: reading it is
# cheap, but not free next to a search step.
CLOCK_EVERY = 256


class Problem(Protocol[Move]):
    """A game position the search can walk: make/unmake plus what it needs to prune."""

    def key(self) -> Hashable:
        """Equal for positions that are equivalent for the rest of the game."""

    def is_won(self) -> bool: ...

    def forced(self) -> Move | None:
        """A move that never turns a winnable position into a lost one, or None."""

    def moves(self) -> list[Move]:
        """Every move worth trying here, most promising first."""

    def child_key(self, move: Move) -> Hashable | None:
        """The key after `move` (before forced moves) if cheap to tell without playing it."""

    def play(self, move: Move) -> None: ...

    def undo(self) -> None:
        """Take back the last move played."""

    def name(self, move: Move) -> str:
        """The move in the engine's canonical text, for the position it is played in."""


Frame = tuple[Hashable, Hashable, list[Move], list[int], int]


@dataclass(frozen=True)
class Outcome(Generic[Move]):
    verdict: Verdict
    line: list[Move]
    positions: int


def depth_first(
    problem: Problem[Move],
    *,
    budget: int | None = None,
    clock: Callable[[], float] | None = None,
    deadline: float | None = None,
    lost: set[Hashable] | None = None,
    avoid: Iterable[Hashable] = (),
) -> Outcome[Move]:
    """Search from the problem's position until a win, exhaustion or a spent budget.

    `budget` caps distinct positions expanded; `deadline` is a value of `clock`.
    The problem is left in the position it started in.

    `lost`, for games whose moves can never lead back to an earlier position
    (Stalactites, Moojub), holds keys of positions proved lost; the search
    skips them and adds its own proofs, even when it stops early (a position
    is only kept once all its moves were searched). Without cycles a position
    whose moves all lead to lost positions is lost, whatever the path to it,
    so later searches from the same start, in another order, can reuse them.
    """
    seen: set[Hashable] = set() if lost is None else lost
    seen.update(avoid)  # `avoid`: keys of positions the line must not pass through
    child_key = problem.child_key
    line: list[Move] = []
    # One frame per expanded position: its keys before and after its forced
    # moves, its candidate moves, the next one to try, and how many forced
    # moves were played on entering it.
    frames: list[Frame[Move]] = []
    positions = 0
    verdict: Verdict = "unwinnable"

    def enter(known: Hashable | None = None) -> bool:
        """Play forced moves, then open a frame; False if the position is known.

        Both the position reached and the one before its forced moves are
        remembered: forced moves are safe, so the two are won or lost together.
        """
        nonlocal positions
        before = problem.key() if known is None else known
        if known is None and before in seen:
            return False
        forced = 0
        move = problem.forced()
        while move is not None:
            problem.play(move)
            line.append(move)
            forced += 1
            move = problem.forced()
        key = problem.key() if forced else before
        if key in seen:
            for _ in range(forced):
                problem.undo()
                line.pop()
            seen.add(before)
            return False
        seen.add(key)
        seen.add(before)
        positions += 1
        frames.append((before, key, [] if problem.is_won() else problem.moves(), [0], forced))
        return True

    enter()
    if problem.is_won():
        result = list(line)
        _unwind(problem, frames, line)
        return Outcome("won", result, positions)
    while frames:
        _, _, moves, cursor, forced = frames[-1]
        if cursor[0] < len(moves):
            move = moves[cursor[0]]
            cursor[0] += 1
            before = child_key(move)
            if before is not None and before in seen:
                continue
            problem.play(move)
            line.append(move)
            if not enter(before):
                problem.undo()
                line.pop()
                continue
            if problem.is_won():
                result = list(line)
                _unwind(problem, frames, line)
                return Outcome("won", result, positions)
            if (budget is not None and positions >= budget) or (
                clock is not None
                and deadline is not None
                and positions % CLOCK_EVERY == 0
                and clock() >= deadline
            ):
                verdict = "unknown"
                for frame in frames:  # not searched through: not proved lost
                    seen.discard(frame[0])
                    seen.discard(frame[1])
                break
            continue
        frames.pop()
        for _ in range(forced):
            problem.undo()
            line.pop()
        if frames:
            problem.undo()
            line.pop()
    _unwind(problem, frames, line)
    return Outcome(verdict, [], positions)


def _unwind(problem: Problem[Move], frames: list[Frame[Move]], line: list[Move]) -> None:
    """Take back every move on the current line, restoring the start position."""
    for _ in line:
        problem.undo()
    line.clear()
    frames.clear()
