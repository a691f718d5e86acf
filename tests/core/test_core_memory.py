"""What a game keeps per move: nothing the garbage collector tracks. A server holds every
racer's game for the whole race, and each young collection walks every tracked object
made since the one before: a pair per move kept made those pauses grow with the moves
played in every room."""

from __future__ import annotations

import gc
import random
from types import ModuleType

import pytest

import core
from core import Game


def tracked_inside(game: Game) -> int:
    """The objects the collector tracks that `game` holds (its class and modules aside)."""
    seen: set[int] = set()
    todo: list[object] = [game]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type | ModuleType) or not gc.is_tracked(obj):
            continue
        seen.add(id(obj))
        todo.extend(gc.get_referents(obj))
    return len(seen)


@pytest.mark.parametrize("name", core.GAMES)
def test_moves_leave_nothing_the_garbage_collector_tracks(name: str) -> None:
    rng = random.Random(7)
    for seed in range(1, 6):
        game = core.new_game(name, seed)
        fresh = tracked_inside(game)
        played = 0
        while played < 100 and (moves := game.legal_moves()):
            game.apply(rng.choice(moves))
            played += 1
        assert played >= 3
        # The same containers, longer: no new object per move.
        assert tracked_inside(game) <= fresh + 1, f"after {played} moves"
        last = game.history[-1]
        assert str(game.pop()) == last  # what it keeps takes a move back
        assert len(game.history) == played - 1
