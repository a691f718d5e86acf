"""A solver for the three games: a winning line, a proof of "unwinnable", or "unknown".

Pure Python, no I/O and no clock of its own: pass ``clock`` (e.g.
``time.monotonic``) with ``time_limit`` for a time budget::

    from core.solver import solve, hint, winnable_seed
    result = solve(game, budget=200_000)         # Solution(result="won", moves=[...], ...)
    hint(game)                                   # "t3 c1", or None when no move is left
    winnable_seed("stalactites", random.Random())

How it searches (see `search` and the per-game modules): depth first from
the game's current position, with a transposition table on a canonical key
(interchangeable cells and piles sorted, foundations keyed by what they take),
safe moves played without branching, moves that cannot help left out, and the
rest ordered most promising first. Each pruning rule has its soundness
argument beside it: "unwinnable" is a proof that no line wins. Every winning
line is replayed through the engine (`Game.apply`) before it is returned.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import core
from core.deals import MAX_SEED
from core.game import Game
from core.solver.moojub import MoojubProblem
from core.solver.search import Outcome, Problem, Verdict, depth_first
from core.solver.shaula import ShaulaProblem
from core.solver.stalactites import StalactitesProblem

__all__ = [
    "DEFAULT_BUDGET",
    "HINT_BUDGET",
    "Solution",
    "SolverError",
    "Verdict",
    "hint",
    "solve",
    "winnable_seed",
]

# Positions a plain solve() may expand: enough to decide nearly every deal.
DEFAULT_BUDGET = 2_000_000
# A hint must come back while the player waits.
HINT_BUDGET = 20_000
# Positions for a quick first try where a game has one (Moojub).
GREEDY_BUDGET = 300


class SolverError(RuntimeError):
    """A winning line that the engine refused on replay: a solver bug, never returned."""


@dataclass(frozen=True)
class Solution:
    """What `solve` found: ``result`` is "won" (``moves`` wins), "unwinnable" or "unknown"."""

    result: Verdict
    moves: list[str] = field(default_factory=list)
    positions: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "moves": list(self.moves),
            "positions": self.positions,
            "seconds": round(self.seconds, 6),
        }


def _problems(game: Game) -> list[tuple[Problem[Any], int | None]]:
    """The searches to run in turn, each with its own cap on positions (None: none).

    Moojub first tries a quick greedy order (start foundations before dealing),
    which wins most deals at once, then the thorough order that decides the rest.
    """
    if game.name == "shaula":
        return [(ShaulaProblem(game.state("full")), None)]
    if game.name == "stalactites":
        return [(StalactitesProblem(game.state("full")), None)]
    if game.name == "moojub":
        return [(MoojubProblem(game, deal_first=False), GREEDY_BUDGET), (MoojubProblem(game), None)]
    raise ValueError(f"no solver for {game.name!r}")


def _named(problem: Problem[Any], line: list[Any]) -> list[str]:
    """The line in engine text; each name depends on the position it is played in."""
    names = []
    for move in line:
        names.append(problem.name(move))
        problem.play(move)
    for _ in line:
        problem.undo()
    return names


def _check(game: Game, moves: list[str]) -> None:
    """Replay a winning line through the engine's checked path, on a copy."""
    replay = game.copy()
    for i, move in enumerate(moves):
        try:
            replay.apply(move)
        except ValueError as exc:
            raise SolverError(f"move {i + 1} ({move}) of the line was refused: {exc}") from exc
    if not replay.won:
        raise SolverError(f"the line of {len(moves)} moves does not win")


def solve(
    game: Game,
    *,
    budget: int | None = DEFAULT_BUDGET,
    clock: Callable[[], float] | None = None,
    time_limit: float | None = None,
) -> Solution:
    """Solve ``game`` from its current position; the game itself is not changed.

    ``budget`` caps the positions expanded (None: no cap); ``time_limit`` is in
    the units of ``clock`` and needs one. Either running out gives "unknown".
    """
    start = clock() if clock is not None else 0.0
    deadline = start + time_limit if clock is not None and time_limit is not None else None
    positions = 0
    verdict: Verdict = "unknown"
    moves: list[str] = []
    for problem, cap in _problems(game):
        left = None if budget is None else budget - positions
        if left is not None and left <= 0:
            break
        if cap is not None:
            left = cap if left is None else min(cap, left)
        outcome: Outcome[Any] = depth_first(problem, budget=left, clock=clock, deadline=deadline)
        positions += outcome.positions
        if outcome.verdict == "won":
            moves = _named(problem, outcome.line)
            _check(game, moves)
        if outcome.verdict == "won" or cap is None:
            verdict = outcome.verdict
            break
        if clock is not None and deadline is not None and clock() >= deadline:
            break
    seconds = clock() - start if clock is not None else 0.0
    return Solution(verdict, moves, positions, seconds)


def hint(game: Game, *, budget: int = HINT_BUDGET) -> str | None:
    """The next move of a winning line, else the solver's favourite move; None if none.

    Only a move comes back, never talon cards (though in Moojub the choice of
    move is made knowing the talon order, as the server does).
    """
    if game.won:
        return None
    found = solve(game, budget=budget)
    if found.moves:
        return found.moves[0]
    problem = _problems(game)[-1][0]
    forced = problem.forced()
    if forced is not None:
        return problem.name(forced)
    moves = problem.moves()
    if moves:
        return problem.name(moves[0])
    legal = game.legal_moves()
    return legal[0] if legal else None


def winnable_seed(
    name: str,
    rng: random.Random,
    *,
    budget: int = 200_000,
    tries: int = 100,
    seeds: tuple[int, int] = (1, MAX_SEED),
) -> int:
    """Draw seeds from ``seeds`` (inclusive) with ``rng`` until one is proved winnable.

    RuntimeError if none of ``tries`` draws is proved winnable within ``budget``.
    """
    for _ in range(tries):
        seed = rng.randint(*seeds)
        if solve(core.new_game(name, seed), budget=budget).result == "won":
            return seed
    raise RuntimeError(f"no winnable {name} deal found in {tries} draws")
