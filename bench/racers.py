"""Legal move sequences for simulated racers, computed once with core's engine.

The load generator must stay cheaper than the server it measures, so it never runs
the engine: every racer replays a random walk through legal moves precomputed here.
All racers of a room share the room's deal, so one sequence per seed serves a room.
"""

from __future__ import annotations

import random

from core import new_game

__all__ = ["move_sequences"]


def _random_walk(game: str, seed: int, length: int, rng: random.Random) -> list[str] | None:
    """``length`` legal moves from the deal, or None when the walk wins or gets stuck."""
    board = new_game(game, seed)
    moves: list[str] = []
    while len(moves) < length:
        legal = board.legal_moves()
        if not legal:
            return None
        move = rng.choice(legal)
        board.apply(move)
        moves.append(move)
        if board.won:
            return None
    return moves


def move_sequences(game: str, count: int, length: int, first_seed: int = 1) -> dict[int, list[str]]:
    """``count`` seeds, each with ``length`` legal moves that neither win nor get stuck."""
    rng = random.Random(4)
    sequences: dict[int, list[str]] = {}
    seed = first_seed
    while len(sequences) < count:
        walk = _random_walk(game, seed, length, rng)
        if walk is not None:
            sequences[seed] = walk
        seed += 1
    return sequences
