"""A ghost: a recorded run raced again, on its own deal, by its recorded times.

A ghost race is a room of two seats: the live player and the ghost, whose progress, move
count and splits follow the recorded run, each change at the time (since the start) it
was made in the recorded race. The race (server/room/race.py) plays the ghost's steps as
they fall due; this module turns a checked replay into those steps. A ghost race is
never rated; its results rank the live player and the ghost as the recorded times imply.
"""

from __future__ import annotations

from typing import Any

import core
from core.replay import Verified

__all__ = ["GHOST_OUT", "best_seat", "ghost_name", "steps_of"]

GHOST_OUT = "ended"  # the out reason of a ghost whose recorded run ended without a win


def steps_of(replay: Verified, seat: int) -> list[list[Any]]:
    """The seat's recorded run: one [t, progress, moves, won, move] per accepted move, in
    order (the move's text: the ghost race's own replay holds the ghost's moves)."""
    game = core.new_game(str(replay.header["game"]), int(replay.header["seed"]))
    steps: list[list[Any]] = []
    for s, move, t in replay.moves:
        if s != seat:
            continue
        if move == "undo":
            game.undo()
        else:
            game.apply(move)
        steps.append([t, game.progress, game.moves, game.won, move])
    return steps


def best_seat(replay: Verified) -> int:
    """The seat a ghost replays when none is named: the fastest winner, else the one with
    the most cards up (the earliest to reach them on a tie)."""
    results = replay.results
    winners = [r for r in results if r["won"]]
    if winners:
        return int(min(winners, key=lambda r: (r["time"], r["seat"]))["seat"])
    return int(min(results, key=lambda r: (-r["progress"], r["reached"], r["seat"]))["seat"])


def ghost_name(replay: Verified, seat: int) -> str:
    name = next((str(p["name"]) for p in replay.header["players"] if p["seat"] == seat), "")
    return f"{name or 'seat ' + str(seat + 1)}'s ghost"[:32]
