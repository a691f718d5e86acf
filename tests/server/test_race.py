"""The race state machine: exact, synchronous, clock passed in."""

import pytest

import protocol as p
from protocol import ErrorCode
from server.race import Race, RaceError, RoomConfig, Seat, Status, check_move, rank


def new_race(**config: object) -> Race:
    return Race(room="r1", config=RoomConfig(game="shaula", **config), seed=617, created_at=0.0)  # type: ignore[arg-type]


def lobby_of_two(**config: object) -> Race:
    race = new_race(**config)
    assert race.join("ann", "h0", 1.0, "c0")[0] == 0
    assert race.join("bo", "h1", 1.0, "c1")[0] == 1
    return race


def running(**config: object) -> Race:
    race = lobby_of_two(**config)
    race.start(0, 2.0)
    race.tick(5.0)
    assert race.status is Status.RUNNING
    return race


def types(outcome_events: list[p.Event]) -> list[str]:
    return [e.TYPE for e in outcome_events]


def test_everyone_ready_counts_down_then_starts_on_time() -> None:
    race = lobby_of_two(countdown=3.0)
    assert types(race.set_ready(0, True, 2.0).events) == ["player_ready"]
    out = race.set_ready(1, True, 2.5)
    assert types(out.events) == ["player_ready", "countdown"]
    assert race.start_at == 5.5 and race.next_deadline() == 5.5
    assert race.tick(5.4).events == []
    started = race.tick(5.5).events
    assert types(started) == ["started"]
    assert isinstance(started[0], p.RaceStarted) and started[0].seed == 617
    assert race.tick(5.6).events == []


def test_full_room_refuses_and_started_room_is_closed() -> None:
    race = lobby_of_two()
    with pytest.raises(RaceError) as err:
        race.join("cy", "h2", 1.0)
    assert err.value.code is ErrorCode.ROOM_FULL
    race.start(0, 2.0)
    with pytest.raises(RaceError) as err:
        race.join("cy", "h2", 2.0)
    assert err.value.code is ErrorCode.ROOM_CLOSED


def test_only_the_host_starts() -> None:
    race = lobby_of_two()
    with pytest.raises(RaceError) as err:
        race.start(1, 2.0)
    assert err.value.code is ErrorCode.NOT_HOST
    race.leave(0, 2.0)
    assert race.host == 1
    assert types(race.start(1, 2.0).events) == ["countdown"]


def test_hidden_games_keep_the_seed_secret_until_the_end() -> None:
    race = lobby_of_two(hidden=True)
    assert race.view()["seed"] is None
    race.start(0, 0.0)
    started = race.tick(10.0).events[0]
    assert isinstance(started, p.RaceStarted) and started.seed is None
    assert race.view()["seed"] is None
    race.resign(0, 11.0)
    race.resign(1, 11.0)
    assert race.status is Status.FINISHED and race.view()["seed"] == 617


def test_open_games_show_the_seed_only_from_the_start() -> None:
    race = lobby_of_two()
    assert race.view()["seed"] is None
    race.start(0, 0.0)
    assert race.view()["seed"] is None
    race.tick(10.0)
    assert race.view()["seed"] == 617


def test_race_ends_when_everyone_is_done_and_ranks_results() -> None:
    race = running()
    assert race.update_progress(0, 10, 20, False, False, 6.0).events == []
    assert race.update_progress(1, 52, 90, True, False, 9.0).events == []
    out = race.update_progress(0, 12, 25, False, True, 10.0)
    assert types(out.events) == ["finished"]
    finished = out.events[0]
    assert isinstance(finished, p.RaceFinished) and finished.reason == "all_done"
    assert [(r["seat"], r["rank"], r["time"]) for r in finished.results] == [
        (1, 1, 4.0),
        (0, 2, None),
    ]
    assert race.status is Status.FINISHED


def test_time_limit_ends_the_race() -> None:
    race = running(time_limit=60.0)
    assert race.ends_at == 65.0 and race.next_deadline() == 65.0
    assert race.tick(64.9).events == []
    out = race.tick(65.0)
    assert isinstance(out.events[0], p.RaceFinished) and out.events[0].reason == "time_up"


def test_an_undo_gets_a_stuck_player_going_again() -> None:
    race = running()
    race.update_progress(0, 3, 4, False, True, 6.0)
    assert race.seats[0].done_at == 6.0
    race.update_progress(0, 3, 5, False, False, 7.0)
    assert race.seats[0].done_at is None and race.status is Status.RUNNING


def test_disconnect_grace_then_forfeit() -> None:
    race = running(grace=10.0)
    out = race.disconnected(1, "c1", 6.0)
    assert out.events == [p.Presence(version=0, at=6.0, seat=1, connected=False, grace_until=16.0)]
    assert race.next_deadline() == 16.0
    assert race.disconnected(1, "c1", 7.0).events == []  # idempotent
    assert types(race.tick(15.9).events) == []
    assert types(race.tick(16.0).events) == ["player_out"]
    assert race.seats[1].out == "forfeit"
    assert types(race.resign(0, 17.0).events) == ["player_out", "finished"]


def test_coming_back_within_grace_is_no_forfeit() -> None:
    race = running(grace=10.0)
    race.disconnected(1, "c1", 6.0)
    assert types(race.connected(1, "c2", 8.0).events) == ["presence"]
    assert race.tick(20.0).events == [] and race.seats[1].out is None


def test_absent_at_the_start_gets_grace_from_the_start() -> None:
    race = lobby_of_two(grace=5.0, countdown=1.0)
    race.disconnected(1, "c1", 1.5)
    assert race.seats[1].grace_until is None  # lobby: no forfeit clock
    race.start(0, 2.0)
    race.tick(3.0)
    assert race.seats[1].grace_until == 8.0


def test_rematch_after_every_vote_deals_a_new_seed() -> None:
    race = running()
    race.resign(0, 6.0)
    race.resign(1, 6.0)
    with pytest.raises(RaceError):
        new_race().rematch(0, 5, 1.0)
    assert types(race.rematch(0, 999, 7.0).events) == ["rematch_vote"]
    assert race.rematch(0, 999, 7.5).events == []
    out = race.rematch(1, 999, 8.0)
    assert types(out.events) == ["rematch_vote", "new_round", "countdown"]
    assert (race.seed, race.round, race.status) == (999, 2, Status.COUNTDOWN)
    assert all(s.progress == 0 and s.out is None for s in race.seats.values())


def test_rank_ties_share_a_place() -> None:
    seats = {
        0: Seat("a", "", progress=10, moves=5),
        1: Seat("b", "", progress=10, moves=5),
        2: Seat("c", "", progress=10, moves=3),
        3: Seat("d", "", progress=52, moves=99, won=True, done_at=30.0),
        4: Seat("e", "", progress=52, moves=50, won=True, done_at=20.0),
    }
    assert [(r["seat"], r["rank"]) for r in rank(seats, 0.0)] == [
        (4, 1),
        (3, 2),
        (2, 3),
        (0, 4),
        (1, 4),
    ]


def test_storage_form_round_trips() -> None:
    race = running(time_limit=30.0)
    race.update_progress(0, 1, 1, False, False, 6.0)
    assert Race.from_dict(race.to_dict()) == race


def code_of(race: Race, seat: int | None, seq: int, last: int, now: float) -> ErrorCode | None:
    try:
        check_move(race, seat, seq, last, now)
    except RaceError as err:
        return err.code
    return None


def test_move_checklist() -> None:
    race = lobby_of_two(time_limit=10.0)
    assert code_of(race, 0, 1, 0, 2.0) is ErrorCode.NOT_RUNNING
    # A seat the (lagging) mirror does not know yet: still "not running" in the lobby.
    assert code_of(race, 5, 1, 0, 2.0) is ErrorCode.NOT_RUNNING
    race.start(0, 2.0)
    assert code_of(race, 0, 1, 0, 4.9) is ErrorCode.NOT_RUNNING
    assert code_of(race, 0, 1, 0, 5.0) is None  # start time reached, tick not run yet
    race.tick(5.0)
    assert code_of(race, None, 1, 0, 6.0) is ErrorCode.NOT_PLAYER
    assert code_of(race, 7, 1, 0, 6.0) is ErrorCode.NOT_PLAYER
    assert code_of(race, 0, 3, 3, 6.0) is ErrorCode.STALE_SEQ
    assert code_of(race, 0, 4, 3, 6.0) is None
    race.resign(1, 6.0)
    assert code_of(race, 1, 1, 0, 6.0) is ErrorCode.PLAYER_OUT
    assert code_of(race, 0, 1, 0, 15.0) is ErrorCode.NOT_RUNNING
    race.tick(15.0)
    assert code_of(race, 0, 1, 0, 15.0) is ErrorCode.NOT_RUNNING


def test_a_stale_socket_closing_does_not_disconnect_a_newer_one() -> None:
    race = running(grace=10.0)
    assert race.connected(1, "c9", 6.0).events == []  # reconnected before the old one closed
    assert race.disconnected(1, "c1", 7.0).events == []
    assert race.seats[1].connected and race.seats[1].grace_until is None


def test_a_name_already_in_the_room_gets_a_number() -> None:
    # Two terminals of one account (both defaulting to $USER) must not look alike.
    race = new_race(seats=5)
    for token in ("h0", "h1", "h2"):
        race.join("ann", token, 1.0)
    race.join("", "h3", 1.0)
    race.join("player 4", "h4", 1.0)
    names = [s.name for s in race.seats.values()]
    assert names == ["ann", "ann 2", "ann 3", "player 4", "player 4 2"]
    race.leave(1, 2.0)
    seat, joined = race.join("ann", "h5", 2.0)
    assert seat == 1 and race.seats[1].name == "ann 2"
    assert isinstance(joined.events[0], p.PlayerJoined) and joined.events[0].name == "ann 2"
