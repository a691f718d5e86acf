"""Arena and Knockout as pure state machines: waves of heats (leaders with leaders),
heat scores and streaks, abandoned heats; a bracket with byes, walkovers, tie-breaks and a
new deal for a tie. Synchronous and exact."""

from __future__ import annotations

from server.tournament.formats import arena_groups, bracket_order
from server.tournament.machine import Tournament
from server.tournament.model import Heat, Status, TourConfig
from server.tournament.scoring import FEW_MOVES, RaceResult, arena_standings, knockout_winner

T0 = 1000.0


def tour(fmt: str, players: int, **config: object) -> Tournament:
    t = Tournament("t1", TourConfig(name="cup", format=fmt, **config), "org", T0)  # type: ignore[arg-type]
    for i in range(players):
        t.register(f"p{i}", f"h{i}", T0)
    return t


def win(pid: int, time: float, moves: int = 100) -> RaceResult:
    return RaceResult(pid, True, time, 52, time, moves)


def lose(pid: int, progress: int, reached: float, moves: int = 50) -> RaceResult:
    return RaceResult(pid, False, None, progress, reached, moves)


def finish_live(t: Tournament, results: dict[int, RaceResult], now: float) -> None:
    for heat in t.live_heats():
        t.heat_finished(heat.id, [results[pid] for pid in heat.players], now)


# ---------------------------------------------------------------- arena


def test_arena_heat_scores_streaks_and_abandons() -> None:
    # One player's heats in order: win, win, (fire) win, finish, win, abandoned, win.
    me, other = 0, 1
    heats = [
        [win(me, 10), win(other, 20)],
        [win(me, 10), win(other, 20)],
        [win(me, 10), lose(other, 5, 1)],  # doubled: 4
        [win(other, 5), win(me, 10)],  # a finish, doubled: 2; streak over
        [win(me, 10), lose(other, 5, 1)],  # 2
        [lose(me, 0, 0, moves=FEW_MOVES - 1), lose(other, 1, 1)],  # abandoned: 0
        [win(me, 10), lose(other, 5, 1)],  # 2
    ]
    ranked = dict((row.player, row) for _, row in arena_standings([me, other], heats))
    assert ranked[me].scores == [2, 2, 4, 2, 2, 0, 2]
    assert ranked[me].score == 14 and ranked[me].wins == 5 and ranked[me].streak == 1
    assert not ranked[me].fire
    # other: finish 1, finish 1, 0, win 2, 0, 0 (not won, but moved: not abandoned), 0
    assert ranked[other].scores == [1, 1, 0, 2, 0, 0, 0]


def test_a_heat_where_nobody_finished_has_no_winner() -> None:
    ranked = arena_standings([0, 1], [[lose(0, 9, 3), lose(1, 4, 3)]])
    assert [(row.player, row.score, row.wins) for _, row in ranked] == [(0, 0, 0), (1, 0, 0)]


def test_arena_groups_leaders_together_and_never_leaves_one_alone() -> None:
    assert arena_groups(list(range(9)), 4, 8) == [[0, 1, 2, 3], [4, 5, 6, 7, 8]]
    assert arena_groups(list(range(6)), 4, 8) == [[0, 1, 2, 3], [4, 5]]
    assert arena_groups([7], 4, 8) == []
    assert arena_groups([0, 1, 2, 3, 4], 4, 4) == [[0, 1, 2, 3]]  # the fifth waits


def test_an_arena_pairs_free_players_in_waves_until_its_end() -> None:
    t = tour("arena", 5, duration=100.0, wave=5.0, arena_heat=2, seats=8)
    t.start(T0)
    assert t.ends_at == T0 + 100 and t.seeds_wanted() == {"shaula": 3}
    t.add_seeds("shaula", [1, 2, 3])
    assert t.tick(T0)
    assert [h.players for h in t.live_heats()] == [[0, 1], [2, 3, 4]]  # a lone fifth joins
    assert t.next_at == T0 + 5
    t.heat_finished(0, [win(0, 10), lose(1, 3, 2)], T0 + 10)
    t.add_seeds("shaula", [4])
    assert t.tick(T0 + 10)  # 0 and 1 are free: a new heat; 2, 3, 4 still racing
    assert [h.players for h in t.live_heats()] == [[2, 3, 4], [0, 1]]
    t.withdraw(1, T0 + 11)
    finish_live(
        t,
        {0: win(0, 5), 1: lose(1, 0, 0), 2: win(2, 9), 3: lose(3, 1, 1), 4: lose(4, 1, 2)},
        T0 + 20,
    )
    t.add_seeds("shaula", [5, 6])
    t.tick(T0 + 20)
    assert sorted(p for h in t.live_heats() for p in h.players) == [0, 2, 3, 4]  # 1 withdrew
    assert t.live_heats()[0].players[:2] == [0, 2]  # leaders with leaders
    t.pause(T0 + 21)
    finish_live(t, {p: lose(p, 1, 1) for p in range(5)}, T0 + 30)
    assert not t.tick(T0 + 40) and not t.live_heats()  # paused: no new heat
    t.resume(T0 + 41)
    t.add_seeds("shaula", [7, 8])
    assert t.tick(T0 + 41) and t.live_heats()
    assert not t.tick(T0 + 100)  # the end: heats under way finish first
    assert t.status is Status.RUNNING
    finish_live(t, {p: lose(p, 1, 1) for p in range(5)}, T0 + 120)
    assert t.tick(T0 + 120) and t.status is Status.FINISHED
    rows = t.standings()
    assert rows[0]["name"] == "p0" and rows[0]["score"] == 4  # two heat wins


# ---------------------------------------------------------------- knockout


def test_bracket_order() -> None:
    assert bracket_order(2) == [1, 2]
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]


def test_knockout_tie_breaks() -> None:
    assert knockout_winner(win(0, 50), win(1, 60)) == 0
    assert knockout_winner(lose(0, 52, 1), win(1, 600)) == 1
    assert knockout_winner(lose(0, 30, 9), lose(1, 31, 200)) == 1
    assert knockout_winner(lose(0, 30, 9), lose(1, 30, 8.5)) == 1  # reached it earlier
    assert knockout_winner(lose(0, 30, 9), lose(1, 30, 9)) is None
    assert knockout_winner(win(0, 9.0001), win(1, 9.0)) is None  # the same millisecond


def test_a_later_round_match_names_the_winners_of_its_two_slots_as_a_and_b() -> None:
    # Slot k of round 2 meets the winners of round 1's slots 2k (a) and 2k + 1 (b). Both
    # players of slot 0 withdraw during their race: nobody is sent, `a` is null, and the
    # final is a bye for `b`, the winner of slot 1.
    t = tour("knockout", 4)  # 1-4 in slot 0, 2-3 in slot 1
    t.start(T0)
    t.add_seeds("shaula", [11, 12])
    assert t.tick(T0)
    t.withdraw(0, T0 + 1)
    t.withdraw(3, T0 + 1)
    finish_live(t, {0: win(0, 10), 3: lose(3, 5, 1), 1: win(1, 9), 2: lose(2, 4, 1)}, T0 + 20)
    assert [(m.round, m.a, m.b, m.winner, m.how) for m in t.matches] == [
        (1, 0, 3, None, "walkover"),
        (1, 1, 2, 1, "race"),
        (2, None, 1, 1, "bye"),
    ]
    assert t.status is Status.FINISHED and t.champion() == 1


def test_a_knockout_with_byes_a_walkover_and_a_tie_raced_again() -> None:
    t = tour("knockout", 5, pause=10.0)  # 8 places: seeds 1, 2, 3 get byes
    t.start(T0)
    t.add_seeds("shaula", [11, 12, 13, 14])
    assert t.tick(T0)
    first = [m for m in t.matches if m.round == 1]
    assert [(m.a, m.b, m.how) for m in first] == [
        (0, None, "bye"),
        (3, 4, None),
        (1, None, "bye"),
        (2, None, "bye"),
    ]
    (heat,) = t.live_heats()
    assert heat.players == [3, 4] and heat.match == 1
    t.heat_finished(heat.id, [lose(3, 20, 5), lose(4, 20, 5)], T0 + 50)  # a tie
    # The new deal is due at once; `next_at` (a round's) stays null while the round races.
    assert t.racing and t.next_at is None
    deadline = t.next_deadline()
    assert deadline is not None and deadline <= T0 + 50
    assert t.tick(T0 + 50)
    assert t.next_at is None and t.next_deadline() is None  # raced: nothing due
    (again,) = t.live_heats()
    assert again.players == [3, 4] and again.seed != heat.seed and again.match == 1
    t.heat_finished(again.id, [win(3, 40), lose(4, 50, 30)], T0 + 100)
    assert t.players[4].out_round == 1 and not t.racing and t.next_at == T0 + 110
    t.withdraw(2, T0 + 101)  # 2 meets 1 in round 2: a walkover
    t.add_seeds("shaula", [21, 22])
    assert t.tick(T0 + 110)
    second = [m for m in t.matches if m.round == 2]
    assert [(m.a, m.b) for m in second] == [(0, 3), (1, 2)]
    assert second[1].winner == 1 and second[1].how == "walkover"
    assert t.players[2].out_round == 2
    (semi,) = t.live_heats()
    t.heat_finished(semi.id, [win(0, 30), win(3, 31)], T0 + 150)
    t.add_seeds("shaula", [31, 32])
    assert t.tick(T0 + 160)
    (final,) = t.live_heats()
    assert final.players == [0, 1]
    t.heat_finished(final.id, [lose(0, 10, 1), win(1, 99)], T0 + 200)
    assert t.status is Status.FINISHED and t.champion() == 1
    rows = t.standings()
    assert [(r["rank"], r["name"]) for r in rows] == [
        (1, "p1"),
        (2, "p0"),
        (3, "p3"),  # out in the semi-finals, with a race won
        (4, "p2"),  # out in the semi-finals by walkover
        (5, "p4"),
    ]


def final_of_two(*seeds: int) -> tuple[Tournament, Heat]:
    """A knockout of two started, its final's race under way (on the first of `seeds`)."""
    t = tour("knockout", 2)
    t.start(T0)
    t.add_seeds("shaula", list(seeds))
    t.tick(T0)
    (heat,) = t.live_heats()
    return t, heat


def test_a_knockout_of_two() -> None:
    t, heat = final_of_two(5)
    t.heat_finished(heat.id, [win(0, 10), lose(1, 3, 3)], T0 + 10)
    assert t.status is Status.FINISHED and t.champion() == 0


def test_a_player_who_withdraws_during_a_tied_match_is_not_given_its_new_deal() -> None:
    # "Withdraw: no more races for this player (one being raced goes on)": the new deal of
    # a tie is another race, so the match goes to the other player by walkover.
    t, heat = final_of_two(5, 6)
    t.withdraw(0, T0 + 1)  # during the race
    t.heat_finished(heat.id, [lose(0, 3, 2), lose(1, 3, 2)], T0 + 10)  # a tie
    t.tick(T0 + 10)
    assert t.live_heats() == []
    (match,) = t.matches
    assert match.winner == 1 and match.how == "walkover"
    assert t.status is Status.FINISHED and t.champion() == 1


def test_a_final_between_two_withdrawn_players_crowns_nobody() -> None:
    # A withdrawn player never goes through: a match whose players have both withdrawn
    # has no winner (both are out), so a final between two of them ends with no champion.
    t = tour("knockout", 3)
    t.start(T0)
    t.add_seeds("shaula", [5, 6])
    assert t.tick(T0)
    (heat,) = t.live_heats()  # p0 has a bye; p1 meets p2
    t.withdraw(0, T0 + 1)
    t.heat_finished(heat.id, [win(1, 10), lose(2, 3, 3)], T0 + 10)
    t.withdraw(1, T0 + 11)
    assert t.tick(T0 + 40)
    (final,) = [m for m in t.matches if m.round == 2]
    assert (final.a, final.b, final.winner, final.how) == (0, 1, None, "walkover")
    assert t.live_heats() == []
    assert t.status is Status.FINISHED and t.champion() is None
    assert t.players[0].out_round == 2 and t.players[1].out_round == 2
    ranks = [(r["rank"], r["name"]) for r in t.standings()]
    assert ranks == [(1, "p1"), (2, "p0"), (3, "p2")]  # p1 won a race


def test_a_final_won_by_a_player_who_withdrew_during_it_crowns_the_other() -> None:
    # "A withdrawn player never goes through": the race goes on and counts as a race won,
    # but the match goes to the other finalist by walkover.
    t, heat = final_of_two(5)
    t.withdraw(0, T0 + 1)  # during the race, which p0 then wins
    t.heat_finished(heat.id, [win(0, 10), lose(1, 3, 3)], T0 + 10)
    (final,) = t.matches
    assert (final.winner, final.how) == (1, "walkover")
    assert t.status is Status.FINISHED and t.champion() == 1
    assert t.players[0].out_round == 1 and t.players[1].out_round is None
    rows = [(r["rank"], r["name"], r["status"], r["wins"]) for r in t.standings()]
    assert rows == [(1, "p1", "active", 0), (2, "p0", "withdrawn", 1)]


def test_a_final_whose_players_both_withdrew_during_it_crowns_nobody() -> None:
    t, heat = final_of_two(5)
    t.withdraw(0, T0 + 1)
    t.withdraw(1, T0 + 2)
    t.heat_finished(heat.id, [win(0, 10), lose(1, 3, 3)], T0 + 10)
    (final,) = t.matches
    assert (final.winner, final.how) == (None, "walkover")
    assert t.status is Status.FINISHED and t.champion() is None
    assert t.players[0].out_round == 1 and t.players[1].out_round == 1


def test_a_removed_player_who_wins_their_race_does_not_go_through() -> None:
    # Removed during a semi-final that they then win: the other semi-finalist goes on.
    t = tour("knockout", 4)
    t.start(T0)  # p0 against p3, p1 against p2
    t.add_seeds("shaula", [5, 6])
    t.tick(T0)
    first, second = t.live_heats()
    t.remove(0, T0 + 1)
    t.heat_finished(first.id, [win(0, 10), lose(3, 3, 3)], T0 + 10)
    t.heat_finished(second.id, [win(1, 10), lose(2, 3, 3)], T0 + 10)
    semi = t.matches[first.match or 0]
    assert (semi.a, semi.b, semi.winner, semi.how) == (0, 3, 3, "walkover")
    assert t.players[0].out_round == 1 and t.players[3].out_round is None
    t.add_seeds("shaula", [7])
    assert t.tick(T0 + 100)
    (final,) = t.live_heats()
    assert final.players == [3, 1]


def test_a_semi_final_between_two_withdrawn_players_sends_the_other_semi_finalist_through() -> None:
    t = tour("knockout", 4)
    t.start(T0)  # the bracket: p0 against p3, p1 against p2
    t.withdraw(0, T0 + 1)
    t.withdraw(3, T0 + 1)
    t.add_seeds("shaula", [5, 6])
    assert t.tick(T0 + 1)
    first = [m for m in t.matches if m.round == 1]
    assert [(m.a, m.b, m.winner, m.how) for m in first] == [
        (0, 3, None, "walkover"),
        (1, 2, None, None),
    ]
    (heat,) = t.live_heats()
    assert heat.players == [1, 2]
    t.heat_finished(heat.id, [win(1, 10), lose(2, 3, 3)], T0 + 10)
    assert t.status is Status.FINISHED and t.champion() == 1


def test_a_walkover_is_no_race_won_and_a_last_round_bye_completes_the_bracket() -> None:
    # p3 goes through round 1 because nobody moved in two races (a walkover), then p1 and
    # p2 both withdraw before their round-2 match: nobody goes through it, p0 beats p3,
    # and the final is p0's bye. p1, p2 and p3 are out in round 2 with no race won.
    t = tour("knockout", 5, pause=10.0)
    t.start(T0)
    t.add_seeds("shaula", [11, 12, 13, 14])
    assert t.tick(T0)
    for at in (T0 + 10, T0 + 20):
        (heat,) = t.live_heats()
        t.heat_finished(heat.id, [lose(3, 0, 0, moves=0), lose(4, 0, 0, moves=0)], at)
        t.tick(at)
    assert (t.matches[1].winner, t.matches[1].how) == (3, "walkover")
    t.withdraw(1, T0 + 21)
    t.withdraw(2, T0 + 21)
    t.add_seeds("shaula", [21, 22])
    assert t.tick(T0 + 30)
    (semi,) = t.live_heats()
    t.heat_finished(semi.id, [win(0, 30), lose(3, 5, 3)], T0 + 60)
    assert t.status is Status.FINISHED and t.champion() == 0
    assert [(m.round, m.a, m.b, m.winner, m.how) for m in t.matches if m.round > 1] == [
        (2, 0, 3, 0, "race"),
        (2, 1, 2, None, "walkover"),
        (3, 0, None, 0, "bye"),
    ]
    assert [(r["rank"], r["name"], r["wins"]) for r in t.standings()] == [
        (1, "p0", 1),
        (2, "p1", 0),
        (2, "p2", 0),
        (2, "p3", 0),
        (5, "p4", 0),
    ]


def test_removed_players_come_after_everyone_and_leave_no_hole_in_the_ranks() -> None:
    t = tour("arena", 4, duration=100.0, arena_heat=4)
    t.start(T0)
    t.add_seeds("shaula", [1, 2])
    t.tick(T0)
    finish_live(t, {0: win(0, 5), 1: win(1, 6), 2: lose(2, 3, 1), 3: lose(3, 3, 1)}, T0 + 10)
    t.remove(0, T0 + 11)
    assert [(r["rank"], r["name"], r["status"]) for r in t.standings()] == [
        (1, "p1", "active"),
        (2, "p2", "active"),
        (2, "p3", "active"),
        (4, "p0", "removed"),
    ]


def test_an_arena_player_left_alone_waits_for_the_next_pairing_with_another_free() -> None:
    # Heats of 2 in rooms of 2: of three free players the third cannot join the heat, so
    # waits; each pairing (every `wave`) finds them alone while the others race, and pairs
    # them first as soon as one of those is free again (whatever the standings): the wait
    # is at most one heat and a wave.
    t = tour("arena", 3, duration=1000.0, wave=5.0, arena_heat=2, seats=2)
    t.start(T0)
    t.add_seeds("shaula", [1, 2, 3])
    assert t.tick(T0)
    assert [h.players for h in t.live_heats()] == [[0, 1]]
    for at in (T0 + 5, T0 + 10):
        assert t.tick(at) and [h.players for h in t.live_heats()] == [[0, 1]]
    t.heat_finished(0, [win(0, 9), lose(1, 3, 2)], T0 + 12)
    assert t.next_at == T0 + 15
    assert t.tick(T0 + 15)  # 2 waited: first in the pairing, with the leader; 1 waits now
    assert [h.players for h in t.live_heats()] == [[2, 0]] and t.waiting == [1]
    t.heat_finished(1, [win(2, 9), lose(0, 3, 2)], T0 + 20)
    t.add_seeds("shaula", [4])
    assert t.tick(T0 + 20)
    assert [h.players for h in t.live_heats()] == [[1, 0]] and t.waiting == [2]
