"""The solver's own move generators against the engine's, on random playouts.

Shaula and Stalactites are searched on compact positions of their own (for
speed), so they must agree with the engine: every move the solver tries is
legal, and every legal move it leaves out leads to a position the solver
treats as the same (same canonical key), or is left out by a written rule.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from typing import Any

import pytest

import core
from core.solver.shaula import ShaulaProblem
from core.solver.stalactites import StalactitesProblem

Problem = ShaulaProblem | StalactitesProblem
PROBLEMS: dict[str, Callable[[dict[str, Any]], Problem]] = {
    "shaula": ShaulaProblem,
    "stalactites": StalactitesProblem,
}


def last_card_to_cell(game: core.Game, move: str) -> bool:
    """Stalactites: the last card of a pile never goes to a cell (see moves())."""
    src, dst = move.split()[:2]
    return src.startswith("t") and dst.startswith("c") and len(game.state()["piles"][src]) == 1


def no_build_ever(game: core.Game) -> bool:
    """Stalactites: no foundation move now or after any cells-only sequence (moves()
    returns nothing in such a dead end). Searched with the engine alone."""
    legal = game.legal_moves()
    if any(move.split()[1].startswith("f") for move in legal):
        return False
    for move in legal:
        if move.startswith("c"):  # cell to cell: the same position
            continue
        game.apply(move)
        dead = no_build_ever(game)
        game.undo()
        if not dead:
            return False
    return True


def keys_after_solver_moves(problem: Problem) -> tuple[set[Hashable], list[str]]:
    keys = {problem.key()}
    names = []
    for move in problem.moves():
        names.append(problem.name(move))
        child = problem.child_key(move)
        problem.play(move)
        assert child is None or child == problem.key()
        keys.add(problem.key())
        problem.undo()
    return keys, names


@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("seed", [3, 11, 40, 77, 123, 999])
def test_solver_moves_match_the_engine(name: str, seed: int) -> None:
    rng = random.Random(seed)
    game = core.new_game(name, seed)
    for _ in range(150):
        legal = game.legal_moves()
        if not legal:
            break
        problem = PROBLEMS[name](game.state())
        keys, names = keys_after_solver_moves(problem)
        assert set(names) <= set(legal)
        if name == "stalactites" and not names:
            assert problem.is_won() or no_build_ever(game)
            break
        for move in legal:
            if name == "stalactites" and last_card_to_cell(game, move):
                continue
            game.apply(move)
            assert PROBLEMS[name](game.state()).key() in keys, move
            game.undo()
        forced = problem.forced()
        if forced is not None:
            assert problem.name(forced) in legal
        game.apply(rng.choice(legal))
