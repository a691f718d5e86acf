"""The race state machine: exact, synchronous, clock passed in."""

import pytest

import protocol as p
from protocol import ErrorCode
from server.room.checklist import Verdict, prefilter
from server.room.race import Race, RaceError, RoomConfig, Seat, Status, race_time, rank


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


def moved(
    race: Race, index: int, progress: int, moves: int, won: bool, stuck: bool, now: float
) -> list[p.Event]:
    """A seat's accepted move as the store reports it (move.lua keeps progress and done_at
    beside the race), then whatever falls due."""
    seat = race.seats[index]
    seat.progress, seat.moves, seat.won, seat.stuck = progress, moves, won, stuck
    seat.done_at = now if won or stuck else None
    return race.tick(now).events


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
    assert str(err.value) == "the race has started: watch it instead"
    race.tick(10.0)
    race.resign(0, 11.0)
    race.resign(1, 12.0)
    assert race.status is Status.FINISHED
    with pytest.raises(RaceError) as err:  # not "started": it is over
        race.join("cy", "h2", 13.0)
    assert err.value.code is ErrorCode.ROOM_CLOSED
    assert str(err.value) == "the race is over: no new seats (watch the room for its results)"


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


def test_a_hidden_deal_other_rooms_race_too_keeps_its_seed_after_the_end() -> None:
    # A Rounds round's heats race one deal: the seed of a heat that ended would give the
    # talon's order away to the heats still racing it (the tournament publishes it).
    race = lobby_of_two(hidden=True, shared_deal=True)
    race.start(0, 0.0)
    race.tick(10.0)
    race.resign(0, 11.0)
    ended = race.resign(1, 11.0).events
    finished = [e for e in ended if isinstance(e, p.RaceFinished)]
    assert race.status is Status.FINISHED and [e.seed for e in finished] == [None]
    assert race.view()["seed"] is None
    # An open game's deal is on every board from the start: nothing to keep.
    race = lobby_of_two(shared_deal=True)
    race.start(0, 0.0)
    race.tick(10.0)
    assert race.view()["seed"] == 617


def test_open_games_show_the_seed_only_from_the_start() -> None:
    race = lobby_of_two()
    assert race.view()["seed"] is None
    race.start(0, 0.0)
    assert race.view()["seed"] is None
    race.tick(10.0)
    assert race.view()["seed"] == 617


def test_race_ends_when_everyone_is_done_and_ranks_results() -> None:
    race = running()
    assert moved(race, 0, 10, 20, False, False, 6.0) == []
    assert moved(race, 1, 52, 90, True, False, 9.0) == []
    events = moved(race, 0, 12, 25, False, True, 10.0)
    assert types(events) == ["finished"]
    finished = events[0]
    assert isinstance(finished, p.RaceFinished) and finished.reason == "all_done"
    assert [(r["seat"], r["rank"], r["time"]) for r in finished.results] == [
        (1, 1, 4.0),
        (0, 2, None),
    ]
    assert race.status is Status.FINISHED


def test_a_winners_time_is_its_winning_moves_time_as_the_replay_reads_it() -> None:
    # The store keeps a move's time to the millisecond, and the replay and the splits read
    # it so: the result's time is that reading, not the clock's own (1 ms apart here).
    start, won_at = 100.0004, 104.1958
    ann = Seat(name="ann", token_hash="h0", won=True, progress=52, moves=90, done_at=won_at)
    bo = Seat(name="bo", token_hash="h1", won=True, progress=52, moves=80, done_at=104.1962)
    results = rank({0: ann, 1: bo}, start)
    assert race_time(won_at, start) == 4.196 and round(won_at - start, 3) == 4.195
    # Equal times then: fewer moves first (the old reading put ann first, at 4.195).
    assert [(r["seat"], r["rank"], r["time"]) for r in results] == [(1, 1, 4.196), (0, 2, 4.196)]


def test_a_race_whose_every_seat_is_done_is_due_to_finish() -> None:
    # The last seat's win is stored by the move script, not by a transition: the finish is
    # a deadline like any other, so a finish that could not be written (Redis out of reach
    # then) is tried again, by any process, and not left running for ever.
    race = running(time_limit=600.0)
    bo = race.seats[1]
    bo.progress, bo.moves, bo.won, bo.done_at = 52, 90, True, 9.0
    assert race.next_deadline() == 605.0  # ann still racing: only the time limit
    ann = race.seats[0]
    ann.progress, ann.moves, ann.stuck, ann.done_at = 12, 25, True, 10.0
    due = race.next_deadline()
    assert due is not None and due <= 10.0
    assert types(race.tick(due).events) == ["finished"]
    assert race.next_deadline() is None


def test_time_limit_ends_the_race() -> None:
    race = running(time_limit=60.0)
    assert race.ends_at == 65.0 and race.next_deadline() == 65.0
    assert race.tick(64.9).events == []
    out = race.tick(65.0)
    assert isinstance(out.events[0], p.RaceFinished) and out.events[0].reason == "time_up"


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


def test_absent_at_the_start_keeps_the_lobby_grace() -> None:
    race = lobby_of_two(grace=5.0, countdown=1.0)
    race.disconnected(1, "c1", 1.5)
    assert race.seats[1].grace_until == 6.5  # lobby: the seat is freed then
    race.start(0, 2.0)
    race.tick(3.0)
    assert race.seats[1].grace_until == 6.5  # ... or forfeited, once the race is on
    assert types(race.tick(6.5).events) == ["player_out"]


def test_a_lobby_seat_whose_player_stays_away_is_freed_and_the_host_passes_on() -> None:
    race = lobby_of_two(grace=5.0)
    out = race.disconnected(0, "c0", 2.0)
    assert out.events == [p.Presence(version=0, at=2.0, seat=0, connected=False, grace_until=7.0)]
    assert race.next_deadline() == 7.0
    assert race.tick(6.9).events == []
    assert race.tick(7.0).events == [p.PlayerLeft(version=0, at=7.0, seat=0)]
    assert list(race.seats) == [1] and race.host == 1
    assert race.next_deadline() is None


def test_a_seat_freed_by_the_lobby_rule_can_be_taken_at_once() -> None:
    race = lobby_of_two(grace=5.0)
    race.disconnected(0, "c0", 2.0)
    seat, out = race.join("cy", "h2", 8.0, "c2")  # the tick had not run yet
    assert seat == 0 and types(out.events) == ["left", "joined"]


def test_coming_back_to_the_lobby_in_time_keeps_the_seat() -> None:
    race = lobby_of_two(grace=5.0)
    race.disconnected(0, "c0", 2.0)
    assert types(race.connected(0, "c9", 4.0).events) == ["presence"]
    assert race.tick(10.0).events == [] and list(race.seats) == [0, 1]


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
    # The round before stays the room's latest finished one until this one ends.
    last = race.finished_round()
    assert last is not None and race.results is None
    assert (last["round"], last["seed"], last["finish_reason"]) == (1, 617, "all_done")
    assert [r["out"] for r in last["results"]] == ["resigned", "resigned"]
    assert Race.from_dict(race.to_dict()) == race


def test_a_rematch_waits_for_an_away_player_who_did_not_vote_only_for_the_grace() -> None:
    race = new_race(grace=5.0, seats=3)
    for i, name in enumerate(("ann", "bo", "cy")):
        race.join(name, f"h{i}", 1.0, f"c{i}")
    race.start(0, 2.0)
    race.tick(5.0)
    for i in range(3):
        race.resign(i, 6.0)
    # bo leaves without voting: nobody has voted yet, so nothing runs out.
    gone = race.disconnected(1, "c1", 7.0).events
    assert types(gone) == ["presence"] and race.seats[1].grace_until is None
    assert race.next_deadline() is None
    # ann votes first (her deal is the rematch's), then cy: bo's grace runs from cy's vote.
    assert types(race.rematch(0, 111, 8.0).events) == ["rematch_vote"]
    out = race.rematch(2, 222, 9.0).events
    assert types(out) == ["rematch_vote", "presence"]
    assert isinstance(out[1], p.Presence) and (out[1].seat, out[1].grace_until) == (1, 14.0)
    assert race.next_deadline() == 14.0 and race.tick(13.9).events == []
    # ann goes away too: she voted, she races the new round (her grace from its countdown).
    assert types(race.disconnected(0, "c0", 10.0).events) == ["presence"]
    assert race.seats[0].grace_until is None
    assert Race.from_dict(race.to_dict()) == race
    due = race.tick(14.0).events
    assert types(due) == ["left", "new_round", "countdown", "presence"]
    assert (race.seed, race.round, sorted(race.seats)) == (111, 2, [0, 2])
    assert race.seats[0].grace_until is not None  # away at the countdown: her grace
    assert race.rematch_seed is None


def test_a_player_back_after_the_end_is_waited_for_again() -> None:
    race = running(grace=5.0)
    race.resign(0, 6.0)
    race.resign(1, 6.0)
    race.rematch(0, 111, 7.0)
    gone = race.disconnected(1, "c1", 8.0).events  # after ann's vote: his grace at once
    assert isinstance(gone[0], p.Presence) and gone[0].grace_until == 13.0
    assert types(race.connected(1, "c9", 9.0).events) == ["presence"]
    assert race.seats[1].grace_until is None and race.next_deadline() is None
    assert race.tick(20.0).events == [] and sorted(race.seats) == [0, 1]
    # A tournament's room has no rematch: nobody's seat is ever freed after its end.
    other = running(grace=5.0, tournament="t1")
    other.resign(0, 6.0)
    other.resign(1, 6.0)
    other.disconnected(1, "c1", 8.0)
    assert other.next_deadline() is None and other.tick(99.0).events == []


def test_a_rematch_waits_for_a_voter_to_be_here_before_it_deals() -> None:
    """bo's clock ran out while ann, who voted, was away too: a round dealt then would be
    forfeited by all, rated or not. The rematch deals once ann is back."""
    race = running(grace=5.0)
    race.resign(0, 6.0)
    race.resign(1, 6.0)
    race.disconnected(1, "c1", 7.0)
    race.rematch(0, 111, 8.0)  # bo's grace runs to 13.0
    race.disconnected(0, "c0", 9.0)
    assert types(race.tick(13.0).events) == ["left"]
    assert (race.status, race.round, sorted(race.seats)) == (Status.FINISHED, 1, [0])
    assert race.next_deadline() is None
    back = race.connected(0, "c9", 20.0).events
    assert types(back) == ["presence", "new_round", "countdown"]
    assert (race.seed, race.round, race.status) == (111, 2, Status.COUNTDOWN)


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
    moved(race, 0, 1, 1, False, False, 6.0)
    race.connected(0, "c7", 6.0)
    assert Race.from_dict(race.to_dict()) == race
    # A rolling deploy: the version before reads what this one writes, and the other way.
    assert "rematch_seed" not in race.to_dict()  # that version knows no such field
    later = race.to_dict()
    later["new_field"] = 1
    later["config"]["new_setting"] = True
    later["seats"]["0"]["new_mark"] = "x"
    assert Race.from_dict(later) == race


def verdict(race: Race, seat: int | None, seq: int, last: int, now: float) -> Verdict:
    token = race.seats[seat].token_hash if seat in race.seats else "h0"
    return prefilter(race, seat, token, seq, last, now)


def test_the_move_checklist_prefilter() -> None:
    race = lobby_of_two(time_limit=10.0)
    assert verdict(race, 0, 1, 0, 2.0) is Verdict.CLOSED
    race.start(0, 2.0)
    assert verdict(race, 0, 1, 0, 4.9) is Verdict.CLOSED
    assert verdict(race, 0, 1, 0, 5.0) is Verdict.OK  # start time reached, tick not run yet
    race.tick(5.0)
    assert verdict(race, None, 1, 0, 6.0) is Verdict.SEAT
    assert verdict(race, 7, 1, 0, 6.0) is Verdict.SEAT
    assert prefilter(race, 0, "h1", 1, 0, 6.0) is Verdict.SEAT  # another seat's token
    assert verdict(race, 0, 3, 3, 6.0) is Verdict.DUP  # a re-send, or stale: the store says
    assert verdict(race, 0, 4, 3, 6.0) is Verdict.OK
    race.resign(1, 6.0)
    assert verdict(race, 1, 1, 0, 6.0) is Verdict.OUT
    assert verdict(race, 0, 1, 0, 15.0) is Verdict.CLOSED
    race.tick(15.0)
    assert verdict(race, 0, 1, 0, 15.0) is Verdict.CLOSED


def test_a_seat_held_by_two_sockets_is_away_only_when_both_are_gone() -> None:
    race = running(grace=10.0)
    out = race.connected(1, "c9", 6.0)  # a second socket: recorded, no event
    assert out.events == [] and out and race.seats[1].conns == ["c1", "c9"]
    out = race.disconnected(1, "c1", 7.0)
    assert out.events == [] and out
    assert race.seats[1].connected and race.seats[1].grace_until is None
    assert race.tick(30.0).events == [] and race.seats[1].out is None
    out = race.disconnected(1, "c9", 31.0)
    assert types(out.events) == ["presence"] and race.seats[1].grace_until == 41.0


def test_a_socket_holds_a_seat_only_while_its_token_does() -> None:
    race = lobby_of_two()
    assert race.holder(0, "h0") is race.seats[0]
    race.leave(0, 2.0)
    race.join("cy", "h2", 2.0, "c2")  # cy takes seat 0
    for index, token in ((0, "h0"), (1, "h0"), (None, "h0"), (0, None)):
        with pytest.raises(RaceError) as err:
            race.holder(index, token)
        assert err.value.code is ErrorCode.NOT_JOINED
    assert race.holder(0, "h2").name == "cy"


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


def test_a_tournament_seat_is_never_freed_by_the_lobby_rule() -> None:
    race = new_race(grace=5.0, tournament="t1")
    race.join("ann", "h0", 1.0, "c0")
    out = race.disconnected(0, "c0", 2.0)
    assert types(out.events) == ["presence"] and race.seats[0].grace_until is None
    assert race.tick(100.0).events == [] and list(race.seats) == [0]


def test_a_seat_taken_for_a_socket_on_its_way_is_away_until_held() -> None:
    race = new_race(grace=30.0)
    race.join("ann", "h0", 1.0)  # seated for a socket still to come (quick match)
    race.join("bo", "h1", 1.0)
    race.set_ready(0, True, 1.0)
    race.set_ready(1, True, 1.0)
    assert types(race.unheld(0, 1.0).events) == ["presence"]
    assert race.seats[0].grace_until == 31.0
    race.connected(1, "c1", 1.5)  # bo came: nothing to wait for
    assert race.unheld(1, 1.5).events == [] and race.seats[1].grace_until is None
    race.tick(31.0)
    assert race.seats[0].out == "forfeit"


def test_a_daily_attempt_has_no_rematch() -> None:
    race = new_race(daily="2026-12-06 shaula", seats=1, countdown=0.0)
    race.join("ann", "h0", 1.0, "c0")
    race.set_ready(0, True, 1.0)
    race.tick(1.0)
    race.resign(0, 2.0)
    assert race.status is Status.FINISHED
    with pytest.raises(RaceError) as refused:
        race.rematch(0, 5, 3.0)
    assert refused.value.code is ErrorCode.NOT_RUNNING and race.round == 1


def test_a_racer_may_resign_once_the_countdown_has_begun_not_in_the_lobby() -> None:
    """As the `resign` row of docs/protocol.md says: refused `not_running` in the lobby,
    taken from the countdown on (the others race on)."""
    race = lobby_of_two(countdown=3.0)
    with pytest.raises(RaceError) as err:
        race.resign(0, 1.5)
    assert err.value.code is ErrorCode.NOT_RUNNING
    race.start(0, 2.0)
    assert race.status is Status.COUNTDOWN
    assert types(race.resign(0, 2.5).events) == ["player_out"]
    race.tick(5.0)
    assert race.status is Status.RUNNING and race.seats[1].racing


def test_leave_is_refused_once_the_race_has_begun_saying_what_to_do_instead() -> None:
    race = running()
    with pytest.raises(RaceError) as racing:
        race.leave(0, 6.0)
    assert racing.value.code is ErrorCode.NOT_RUNNING and "resign" in racing.value.message
    race.resign(0, 6.0)
    race.resign(1, 6.0)
    with pytest.raises(RaceError) as over:  # nothing to resign from: the seat stays
        race.leave(0, 7.0)
    assert over.value.code is ErrorCode.NOT_RUNNING and "resign" not in over.value.message
    assert "over" in over.value.message and list(race.seats) == [0, 1]
