"""The Rounds format as a pure state machine: registration, heats, places, points,
standings, withdraw and return, pause. Synchronous and exact: no Redis, no clock."""

from __future__ import annotations

import pytest

from protocol import ErrorCode
from server.tournament.formats import split_evenly
from server.tournament.machine import Tournament
from server.tournament.model import Status, TourConfig, TourError
from server.tournament.scoring import RaceResult, places, round_points, rounds_standings
from server.tournament.views import export_csv, export_json, export_ndjson, race_view

T0 = 1000.0


def tour(players: int = 3, **config: object) -> Tournament:
    t = Tournament("t1", TourConfig(name="cup", **config), "org", T0)  # type: ignore[arg-type]
    for i in range(players):
        t.register(f"p{i}", f"h{i}", T0)
    return t


def win(pid: int, time: float) -> RaceResult:
    return RaceResult(pid, True, time, 52, time, 100)


def lose(pid: int, progress: int, reached: float, moves: int = 50) -> RaceResult:
    return RaceResult(pid, False, None, progress, reached, moves)


def test_places_finishers_by_time_then_progress_then_when_reached() -> None:
    results = [lose(0, 10, 5.0), win(1, 90.0), lose(2, 10, 3.0), win(3, 80.0), lose(4, 20, 99)]
    assert [(place, r.player) for place, r in places(results)] == [
        (1, 3),
        (2, 1),
        (3, 4),
        (4, 2),
        (5, 0),
    ]


def test_ties_share_the_place_and_its_points() -> None:
    results = [win(0, 50.0), win(1, 50.0), lose(2, 3, 1.0), lose(3, 0, 0.0), lose(4, 0, 0.0)]
    assert round_points(results) == {
        0: (1, 4.5),  # places 1 and 2 of five: (5 + 4) / 2
        1: (1, 4.5),
        2: (3, 3.0),
        3: (4, 1.5),  # (2 + 1) / 2
        4: (4, 1.5),
    }


def test_standings_order_points_wins_time_progress() -> None:
    rounds = {
        1: [win(0, 30.0), win(1, 40.0), lose(2, 9, 1.0)],
        2: [win(1, 30.0), win(0, 40.0), lose(2, 9, 1.0)],
    }
    ranked = rounds_standings([0, 1, 2], rounds)
    # 0 and 1: 5 points, 1 win each; total times 70 = 70: still equal on progress: shared.
    assert [(rank, row.player, row.points, row.wins) for rank, row in ranked] == [
        (1, 0, 5.0, 1),
        (1, 1, 5.0, 1),
        (3, 2, 2.0, 0),
    ]
    rounds[2] = [win(1, 29.0), win(0, 40.0), lose(2, 9, 1.0)]
    ranked = rounds_standings([0, 1, 2], rounds)
    assert [(rank, row.player) for rank, row in ranked][:2] == [(1, 1), (2, 0)]  # less time


def test_registration_names_are_unique_and_the_field_is_capped() -> None:
    t = tour(2, max_players=3)
    with pytest.raises(TourError) as err:
        t.register("P0", "x", T0)
    assert err.value.code is ErrorCode.NAME_TAKEN
    t.register("p2", "h2", T0)
    with pytest.raises(TourError) as err:
        t.register("p3", "h3", T0)
    assert err.value.code is ErrorCode.TOURNAMENT_FULL
    t.start(T0)
    with pytest.raises(TourError) as err:
        Tournament.register(t, "late", "h", T0)
    assert err.value.code is ErrorCode.REGISTRATION_CLOSED


def test_a_round_waits_for_its_deal_then_opens_heats_sharing_it() -> None:
    t = tour(17, seats=8, rounds=2)
    t.start(T0)
    assert t.next_deadline() == T0
    assert not t.tick(T0)  # no deal drawn yet
    assert t.seeds_wanted() == {"shaula": 1}
    t.add_seeds("shaula", [617])
    assert t.tick(T0 + 1)
    assert [len(h.players) for h in t.heats] == [6, 6, 5]
    assert {h.seed for h in t.heats} == {617} and t.round_seeds == {1: 617}
    assert sorted(p for h in t.heats for p in h.players) == list(range(17))
    assert t.racing and t.next_deadline() is None
    assert not t.tick(T0 + 2)  # idempotent: nothing more is due


def test_rounds_from_start_to_final_standings_with_withdraw_and_return() -> None:
    t = tour(3, rounds=2, pause=30.0)
    t.start(T0)
    t.add_seeds("shaula", [11])
    t.tick(T0)
    assert len(t.heats) == 1
    t.withdraw(2, T0 + 5)  # mid-round: still in this heat, scores what it reaches
    assert t.heat_finished(0, [win(0, 60.0), lose(1, 30, 50.0), lose(2, 5, 10.0)], T0 + 60)
    assert not t.heat_finished(0, [win(0, 60.0), lose(1, 30, 50.0), lose(2, 5, 10.0)], T0 + 61)
    assert not t.racing and t.next_at == T0 + 90  # the break
    t.add_seeds("shaula", [12])
    assert not t.tick(T0 + 89)
    assert t.tick(T0 + 90)
    assert t.heats[1].players == [0, 1]  # withdrawn: not seated, score kept
    t.come_back(2, T0 + 91)  # back for the next round (none left here)
    t.heat_finished(1, [lose(0, 40, 80.0), win(1, 100.0)], T0 + 200)
    assert t.status is Status.FINISHED and t.finished_at == T0 + 200
    rows = t.standings()
    assert [(r["rank"], r["name"], r["points"], r["wins"]) for r in rows] == [
        (1, "p0", 4.0, 1),
        (2, "p1", 4.0, 1),
        (3, "p2", 1.0, 0),
    ]
    # p0: 3 + 1, one win, time 60; p1: 2 + 2, one win, time 100: p0 ahead on time.
    assert rows[0]["per_round"] == {"1": 3.0, "2": 1.0}
    assert rows[2]["status"] == "active" and rows[2]["rounds"] == 1


def test_pause_holds_the_next_round_until_resumed() -> None:
    t = tour(2, rounds=2, pause=10.0)
    t.start(T0)
    t.add_seeds("shaula", [1])
    t.tick(T0)
    t.pause(T0 + 1)  # between rounds, so the running round goes on
    t.heat_finished(0, [win(0, 5.0), win(1, 6.0)], T0 + 6)
    assert t.next_at is None and t.next_deadline() is None
    t.add_seeds("shaula", [2])
    assert not t.tick(T0 + 100)
    t.resume(T0 + 100)
    assert t.next_at == T0 + 110
    assert t.tick(T0 + 110) and t.round == 2


def test_removed_players_rank_last_and_cannot_come_back() -> None:
    t = tour(3)
    t.remove(0, T0)
    with pytest.raises(TourError) as err:
        t.come_back(0, T0)
    assert err.value.code is ErrorCode.REMOVED
    t.start(T0)
    t.add_seeds("shaula", [5])
    t.tick(T0)
    assert t.heats[0].players == [1, 2]
    assert [r["name"] for r in t.standings()][-1] == "p0"


def test_results_must_name_the_heat_s_players() -> None:
    t = tour(2)
    t.start(T0)
    t.add_seeds("shaula", [5])
    t.tick(T0)
    with pytest.raises(TourError):
        t.heat_finished(0, [win(0, 1.0), win(7, 2.0)], T0)
    assert t.heats[0].live


def test_the_state_round_trips_through_its_storage_form() -> None:
    t = tour(3, games=("shaula", "moojub"))
    t.start(T0)
    t.add_seeds("shaula", [5])
    t.tick(T0)
    t.heat_finished(0, [win(0, 1.0), lose(1, 2, 1.0), lose(2, 0, 0.0)], T0 + 1)
    again = Tournament.from_dict(t.to_dict())
    assert again == t
    assert again.seeds_wanted() == {"moojub": 1}  # round 2 deals the next game


def test_split_evenly() -> None:
    assert [len(g) for g in split_evenly(list(range(64)), 8)] == [8] * 8
    assert [len(g) for g in split_evenly(list(range(9)), 8)] == [5, 4]
    assert split_evenly([1], 8) == [[1]]


def test_a_heat_counts_once_every_heat_of_its_round_has_been_raced() -> None:
    # Three players in rooms of two: heats of 2 and 1 on one deal, placed together. The
    # lone heat ends first; while the other still races that deal, nothing of it shows.
    t = tour(3, seats=2, rounds=1)
    t.start(T0)
    t.add_seeds("shaula", [617])
    t.tick(T0)
    pair, solo = t.heats
    assert (len(pair.players), len(solo.players)) == (2, 1)
    (alone,) = solo.players
    assert t.heat_finished(solo.id, [lose(alone, 0, 0.0, moves=0)], T0 + 10)
    assert not t.deal_raced(solo)
    assert [(r["points"], r["rounds"], r["per_round"]) for r in t.standings()] == [
        (0.0, 0, {}),
    ] * 3
    assert race_view(t, solo)["seed"] is None and race_view(t, solo)["results"] is None
    assert export_json(t)["races"] == [] and t.raced_deals() == []
    assert "617" not in export_csv(t) + export_ndjson(t)
    a, b = pair.players
    t.heat_finished(pair.id, [lose(a, 3, 5.0), lose(b, 1, 5.0)], T0 + 20)
    assert t.deal_raced(solo) and t.deal_raced(pair)
    # Placed as one race of three: a 3 points, b 2, the lone player (no progress) 1.
    points = {r["player"]: r["points"] for r in t.standings()}
    assert points == {a: 3.0, b: 2.0, alone: 1.0}
    assert race_view(t, solo)["seed"] == 617
    assert [r["heat"] for r in export_json(t)["races"]] == [pair.id, solo.id]
