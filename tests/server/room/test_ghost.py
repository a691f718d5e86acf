"""A ghost race, pure: the ghost's steps fall due by their recorded times, its splits are
the recorded ones, it can be neither held nor forfeited, and the results rank the live
player and the ghost exactly as the recorded times imply."""

import pytest

import core
import protocol as p
from core import splits
from core.replay import Verified, verify, write_replay
from server.room.ghost import GHOST_OUT, best_seat, ghost_name, steps_of
from server.room.race import Race, RaceError, RoomConfig, Status
from server.tournament.rooms import record_of

SEED = 617
LINE = core.solve(core.new_game("shaula", SEED)).moves


def recorded(count: int, pace: float = 1.0) -> Verified:
    """ann plays `count` moves of the solver's line, one every `pace` seconds."""
    moves = [(0, move, pace * (i + 1)) for i, move in enumerate(LINE[:count])]
    header = {"game": "shaula", "seed": SEED, "players": [{"seat": 0, "name": "ann"}]}
    return verify(write_replay(header, moves))


def ghost_race(replay: Verified, time_limit: float | None = None) -> Race:
    race = Race(
        room="g1",
        config=RoomConfig(
            game="shaula", seed_mode="fixed", ghost="src", countdown=2.0, time_limit=time_limit
        ),
        seed=SEED,
        created_at=0.0,
    )
    race.add_ghost(ghost_name(replay, 0), steps_of(replay, 0), 0.0)
    index, _ = race.join("bo", "h0", 1.0, "c0")
    assert index == 0  # the live player first; the ghost is the last seat
    race.set_ready(0, True, 1.0)  # the ghost is always ready: the countdown starts
    assert race.status is Status.COUNTDOWN and race.start_at == 3.0
    race.tick(3.0)
    assert race.status is Status.RUNNING
    return race


def test_the_ghost_moves_by_its_recorded_times_and_wins_as_recorded() -> None:
    replay = recorded(len(LINE))
    race = ghost_race(replay)
    ghost = race.seats[1]
    assert ghost.name == "ann's ghost" and ghost.ghost and ghost.connected
    assert race.next_deadline() == 3.0 + 1.0  # its first recorded move
    events = race.tick(3.0 + 5.5).events  # a late tick: five steps due
    # One progress per recorded move, each at its recorded time (never bunched).
    assert [type(e) for e in events] == [p.Progress] * 5
    assert [(e.moves, e.at) for e in events if isinstance(e, p.Progress)] == [
        (n, 3.0 + n) for n in range(1, 6)
    ]
    assert (ghost.moves, race.ghost_pos) == (5, 5)
    assert race.next_deadline() == 3.0 + 6.0
    # Nobody holds the ghost's seat, whatever token is offered.
    with pytest.raises(RaceError):
        race.holder(1, "ghost")
    # bo resigns: the ghost runs to its end and wins in its recorded time.
    race.resign(0, 3.0 + 7.0)
    assert race.status is Status.FINISHED and race.results is not None
    first, second = race.results
    assert (first["seat"], first["rank"], first["won"]) == (1, 1, True)
    assert first["time"] == replay.results[0]["time"] == float(len(LINE))
    assert first["splits"] == list(splits.of_replay(replay)[0])
    assert (second["seat"], second["rank"], second["out"]) == (0, 2, "resigned")


def test_a_ghost_races_replay_holds_the_ghosts_moves_and_agrees_with_its_results() -> None:
    replay = recorded(len(LINE), pace=0.25)
    race = ghost_race(replay)
    race.resign(0, 3.0 + 1.0)  # the ghost runs to its end
    assert race.status is Status.FINISHED and race.results is not None
    record = record_of(race, {0: []})
    assert record is not None
    again = verify(record.replay())
    assert [m for s, m, _ in again.moves if s == 1] == LINE
    ghost = next(r for r in race.results if r["seat"] == 1)
    replayed = next(r for r in again.results if r["seat"] == 1)
    assert (replayed["won"], replayed["time"], replayed["moves"]) == (
        ghost["won"],
        ghost["time"],
        ghost["moves"],
    )
    assert list(splits.of_replay(again)[1]) == ghost["splits"]


def test_a_live_win_beats_a_ghost_whose_run_ended_short() -> None:
    replay = recorded(30)
    race = ghost_race(replay)
    race.tick(3.0 + 10.0)
    bo = race.seats[0]
    bo.progress, bo.moves, bo.won, bo.done_at = 52, 120, True, 3.0 + 25.0
    # The win is stored by the move script: the finish is due at once, not at the
    # ghost's next recorded move.
    assert race.next_deadline() == 3.0 + 25.0
    race.tick(3.0 + 25.0)
    assert race.status is Status.FINISHED and race.results is not None
    by_seat = {r["seat"]: r for r in race.results}
    assert by_seat[0]["rank"] == 1 and by_seat[0]["time"] == 25.0
    ghost = by_seat[1]
    assert (ghost["rank"], ghost["out"], ghost["moves"]) == (2, GHOST_OUT, 30)
    assert ghost["progress"] == replay.results[0]["progress"]


def test_a_ghost_that_ran_out_leaves_the_live_player_racing() -> None:
    race = ghost_race(recorded(3))
    events = race.tick(3.0 + 3.0).events
    assert [type(e) for e in events] == [p.Progress] * 3 + [p.PlayerOut]
    assert race.status is Status.RUNNING and race.next_deadline() is None
    with pytest.raises(RaceError):
        race.rematch(0, 5, 3.0 + 4.0)


def test_the_ghost_of_a_race_is_its_fastest_winner_else_its_furthest_racer() -> None:
    header = {
        "game": "shaula",
        "seed": SEED,
        "players": [{"seat": 0, "name": "ann"}, {"seat": 1, "name": "bo"}],
    }
    moves = [(0, m, 1.0 * (i + 1)) for i, m in enumerate(LINE[:50])]
    moves += [(1, m, 0.5 * (i + 1)) for i, m in enumerate(LINE[:40])]
    moves.sort(key=lambda m: m[2])
    assert best_seat(verify(write_replay(header, moves))) == 0  # more cards up
    won = [(1, m, 0.5 * (i + 1)) for i, m in enumerate(LINE)]
    assert best_seat(verify(write_replay(header, won))) == 1


def test_a_ghost_whose_run_ended_is_out_at_its_last_moves_time() -> None:
    race = ghost_race(recorded(3))
    events = race.tick(3.0 + 3.5).events  # a late tick: the last step and the end
    out = events[-1]
    assert isinstance(out, p.PlayerOut) and out.reason == GHOST_OUT
    assert out.at == 3.0 + 3.0  # its last recorded move's time, as its progress
    assert race.seats[1].done_at == 3.0 + 3.0
    # Run to its end ahead of time (the live player done): never later than now.
    race = ghost_race(recorded(3))
    events = race.resign(0, 3.0 + 1.5).events
    outs = [e for e in events if isinstance(e, p.PlayerOut) and e.seat == 1]
    assert [e.at for e in outs] == [3.0 + 1.5]


def test_the_ghost_makes_no_move_after_the_time_limit() -> None:
    # A late tick, past the limit: only the steps made within it are played.
    race = ghost_race(recorded(len(LINE)), time_limit=4.5)
    events = race.tick(3.0 + 6.5).events
    assert [e.moves for e in events if isinstance(e, p.Progress)] == [1, 2, 3, 4]
    assert race.status is Status.FINISHED and race.finish_reason == "time_up"
    # The live player done: the ghost runs on to the limit, and the race ends at once.
    race = ghost_race(recorded(len(LINE)), time_limit=4.5)
    race.resign(0, 3.0 + 0.5)
    assert race.status is Status.FINISHED and race.finish_reason == "time_up"
    assert race.finished_at == 3.0 + 0.5 and race.results is not None
    ghost = next(r for r in race.results if r["seat"] == 1)
    assert (ghost["won"], ghost["moves"], ghost["out"]) == (False, 4, None)
