"""Splits: when a racer first had each quarter of the game's cards on its foundations.

A game of 52 cards splits at 13, 26, 39 and 52 cards up; Stalactites (48 cards to play
up) at 12, 24, 36 and 48. A split is the time (seconds since the race's start, to the
millisecond) of the first move after which the racer's progress was at or above the mark.
An undo that takes cards back down does not take a split back: like a speedrunner's
split, it is reached once. A split never reached is None.

This module is the one place that decides splits: the server tracks them move by move
with `advance`, and `of_moves` (or `of_replay`) recomputes them from a replay's moves, so
that anyone can check a race's splits against its replay.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

import core
from core.replay import Verified

__all__ = ["QUARTERS", "Splits", "advance", "empty", "marks", "of_moves", "of_replay"]

QUARTERS = 4

Splits = tuple[float | None, ...]  # one entry per mark: seconds since the start, or None


@functools.cache
def marks(game_name: str) -> tuple[int, ...]:
    """The progress at each split: the quarters of the game's cards (13, 26, 39, 52)."""
    total = core.game_class(game_name).progress_total
    return tuple(total * k // QUARTERS for k in range(1, QUARTERS + 1))


def empty() -> Splits:
    return (None,) * QUARTERS


def advance(splits: Splits, game_marks: Sequence[int], progress: int, t: float) -> Splits:
    """`splits` after a move at `t` (seconds since the start) that left `progress` cards up:
    every mark reached for the first time gets `t` (rounded to the millisecond)."""
    if all(s is not None or progress < m for s, m in zip(splits, game_marks, strict=True)):
        return splits
    t = round(t, 3)
    return tuple(
        t if s is None and progress >= m else s for s, m in zip(splits, game_marks, strict=True)
    )


def of_moves(game_name: str, seed: int, moves: Iterable[tuple[str, float]]) -> Splits:
    """One racer's splits from its accepted moves (`undo` included) and their times."""
    game = core.new_game(game_name, seed)
    game_marks = marks(game_name)
    splits = empty()
    for move, t in moves:
        if move == "undo":
            game.undo()
        else:
            game.apply(move)
        splits = advance(splits, game_marks, game.progress, t)
    return splits


def of_replay(replay: Verified) -> dict[int, Splits]:
    """Every seat's splits, recomputed from a checked replay (core.replay.verify)."""
    game, seed = replay.header["game"], int(replay.header["seed"])
    return {
        int(player["seat"]): of_moves(
            game, seed, ((move, t) for seat, move, t in replay.moves if seat == player["seat"])
        )
        for player in replay.header["players"]
    }
