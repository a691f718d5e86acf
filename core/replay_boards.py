"""Every board of a replay, for viewers that carry no rules of their own (the web page).

The engine plays each seat's moves of a checked replay (core.replay.verify) and says what
each move changed: the piles whose cards changed (and, in Moojub, the talon's count),
with the seat's progress and move count after it. A viewer keeps one board per seat,
starting from `start` (every seat is dealt the same), and applies step N to seat N's
board to stand after move line N; it keeps what a step replaced to step back.

    {"game": "shaula", "seed": 617, "start": BOARD,
     "steps": [{"seat": 0, "piles": {"t1": [...], "c1": ["KS"]}, "progress": 0, "moves": 1}],
     "splits": {"0": [41.2, 80.0, null, null]}}

Boards are the player's view (core.Game.state(view="player")): what the racer saw.
"""

from __future__ import annotations

from typing import Any

import core
from core import splits
from core.replay import Verified

__all__ = ["board_steps"]


def board_steps(replay: Verified) -> dict[str, Any]:
    game_name, seed = str(replay.header["game"]), int(replay.header["seed"])
    seats = [int(player["seat"]) for player in replay.header["players"]]
    start = core.new_game(game_name, seed).state(view="player")
    piles: dict[int, dict[str, list[str]]] = {seat: start["piles"] for seat in seats}
    steps: list[dict[str, Any]] = []
    for seat, game in replay.played():
        state = game.state(view="player")
        now = state["piles"]
        step: dict[str, Any] = {
            "seat": seat,
            "piles": {pile: cards for pile, cards in now.items() if piles[seat][pile] != cards},
            "progress": game.progress,
            "moves": game.moves,
        }
        if "talon_count" in state:
            step["talon_count"] = state["talon_count"]
        piles[seat] = now
        steps.append(step)
    return {
        "game": game_name,
        "seed": seed,
        "start": start,
        "steps": steps,
        "splits": {str(seat): list(s) for seat, s in splits.of_replay(replay).items()},
    }
