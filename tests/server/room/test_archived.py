"""An archived race read back (server/room/archived.py): a seat's `stuck` from its replay
when the row is older than the column, exactly as the live race had it."""

from __future__ import annotations

import dataclasses

from support.records import finished_race

from core.replay import write_replay
from server.room.archived import replay_stuck

# Shaula deal 1: after these moves no move is left.
STUCK_LINE = ["t3 c2", "t4 c3", "t5 c4", "c3 c1", "t8 c3", "c2 t6", "t3 c2"]


def replay_of(moves: dict[int, list[str]]) -> str:
    header = {"game": "shaula", "seed": 1, "players": [{"seat": s, "name": "x"} for s in moves]}
    timed = [(seat, move, 0.1 * n) for seat, line in moves.items() for n, move in enumerate(line)]
    return write_replay(header, sorted(timed, key=lambda m: m[2]))


def test_a_seat_is_stuck_when_its_last_move_left_it_no_move() -> None:
    race = dataclasses.replace(
        finished_race("r", [1, 2, 3]),
        seed=1,
        replay=replay_of({0: STUCK_LINE, 1: [*STUCK_LINE, "undo"], 2: []}),
    )
    # Seat 1 undid its way out; seat 2 made no move (the deal is not dead anyway).
    assert replay_stuck(race) == {0: True, 1: False, 2: False}


def test_a_ghost_is_never_stuck() -> None:
    race = dataclasses.replace(
        finished_race("r", [1, 2], kind="ghost"),
        seed=1,
        replay=replay_of({0: STUCK_LINE, 1: STUCK_LINE}),
    )
    assert replay_stuck(race) == {0: True, 1: False}
