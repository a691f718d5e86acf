"""Splits (core/splits.py): the marks, the first-reach rule, and splits from a replay."""

import core
from core import splits
from core.replay import verify, write_replay
from core.solver import solve


def test_marks_are_the_quarters_of_each_games_cards() -> None:
    assert splits.marks("shaula") == (13, 26, 39, 52)
    assert splits.marks("moojub") == (13, 26, 39, 52)
    assert splits.marks("stalactites") == (12, 24, 36, 48)


def test_a_split_is_the_first_time_a_mark_is_reached_and_an_undo_keeps_it() -> None:
    marks = (13, 26, 39, 52)
    s = splits.empty()
    s = splits.advance(s, marks, 12, 10.0)
    assert s == (None, None, None, None)
    s = splits.advance(s, marks, 13, 11.25)
    assert s == (11.25, None, None, None)
    s = splits.advance(s, marks, 12, 12.0)  # an undo takes a card back down
    s = splits.advance(s, marks, 13, 13.0)  # and up again: the split stays the first
    assert s == (11.25, None, None, None)
    # A move that passes two marks at once gives both its time, to the millisecond.
    s = splits.advance(s, marks, 40, 20.0004)
    assert s == (11.25, 20.0, 20.0, None)


def test_splits_recomputed_from_a_replay_follow_the_moves_times() -> None:
    game = core.new_game("shaula", 617)
    line = solve(game).moves
    assert line
    moves = [(0, move, 1.5 * (i + 1)) for i, move in enumerate(line)]
    replay = verify(
        write_replay(
            {"game": "shaula", "seed": 617, "players": [{"seat": 0, "name": "ann"}]}, moves
        )
    )
    got = splits.of_replay(replay)[0]
    # By hand: play the line and note the time of the first move at or past each mark.
    board = core.new_game("shaula", 617)
    expected: list[float | None] = [None] * 4
    for _, move, t in moves:
        board.apply(move)
        for k, mark in enumerate((13, 26, 39, 52)):
            if expected[k] is None and board.progress >= mark:
                expected[k] = t
    assert list(got) == expected and None not in got
    assert got[3] == replay.results[0]["time"]  # the last split is the winning move


def test_segments_delta_and_the_sum_of_best() -> None:
    assert splits.segments([10.0, 25.0, None, 60.0]) == [10.0, 15.0, None, None]
    assert splits.delta([10.0, 24.0, None, None], [12.0, 20.0, 30.0, 40.0]) == [
        -2.0,
        4.0,
        None,
        None,
    ]
    assert splits.delta([1.0, None, None, None], None) == [None] * 4
    summary = splits.summary(
        [
            ([10.0, 20.0, 30.0, 40.0], True, 40.0),
            ([8.0, 21.0, 29.0, 45.0], True, 45.0),
            ([9.0, None, None, None], False, None),
        ]
    )
    assert summary["best"] == [10.0, 20.0, 30.0, 40.0] and summary["best_time"] == 40.0
    assert summary["best_segments"] == [8.0, 10.0, 8.0, 10.0]
    assert summary["sum_of_best"] == 36.0
    assert splits.summary([])["sum_of_best"] is None
