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

__all__ = [
    "QUARTERS",
    "Splits",
    "advance",
    "delta",
    "empty",
    "marks",
    "of_moves",
    "of_replay",
    "segments",
    "summary",
]

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


Times = Sequence[float | None]  # splits in any unit (the records keep milliseconds)


def segments(splits: Times) -> list[float | None]:
    """Each quarter's own duration: from the start, then from the split before; None where
    either end was not reached."""
    out: list[float | None] = []
    before: float | None = 0
    for split in splits:
        out.append(None if split is None or before is None else split - before)
        before = split
    return out


def delta(splits: Times, best: Times | None) -> list[float | None]:
    """Ahead (negative) or behind (positive) `best` at each split (LiveSplit's delta)."""
    if best is None:
        return [None] * len(splits)
    return [None if s is None or b is None else s - b for s, b in zip(splits, best, strict=True)]


def summary(runs: Iterable[tuple[Times, bool, float | None]]) -> dict[str, object]:
    """A player's splits in one game over their races (splits, won, winning time): `best`,
    the splits of the fastest win (the personal best); `best_segments`, each quarter's
    fastest duration in any race; `sum_of_best`, their sum (the best time the segments say
    is possible), None until every quarter has been done."""
    best: Times | None = None
    best_time: float | None = None
    fastest: list[float | None] = [None] * QUARTERS
    for splits, won, time in runs:
        if won and time is not None and (best_time is None or time < best_time):
            best, best_time = splits, time
        for i, segment in enumerate(segments(splits)):
            current = fastest[i]
            if segment is not None and (current is None or segment < current):
                fastest[i] = segment
    total = None if None in fastest else sum(s for s in fastest if s is not None)
    return {
        "best": list(best) if best is not None else None,
        "best_time": best_time,
        "best_segments": fastest,
        "sum_of_best": total,
    }
