"""The daily deal's pure parts: the rule that picks a day's deals, the board's order
(ties included) and the streaks."""

import datetime as dt

import core
from core.solver import solve
from server.daily.board import Attempt, ranking, streaks
from server.daily.rule import (
    SOLVER_BUDGET,
    candidate,
    commitment,
    daily_seed,
    day_bounds,
    day_key,
    day_of,
)

DAY = dt.date(2026, 12, 3)


def test_a_days_deal_is_the_first_candidate_the_solver_proves_winnable() -> None:
    key = day_key(b"secret", DAY)
    assert key == day_key(b"secret", DAY) != day_key(b"secret", DAY + dt.timedelta(days=1))
    assert key != day_key(b"other secret", DAY)
    assert commitment(key) == __import__("hashlib").sha256(key).hexdigest()
    for game in core.GAMES:
        seed, n = daily_seed(key, game)
        assert seed == candidate(key, game, n) and 1 <= seed <= core.MAX_SEED
        assert solve(core.new_game(game, seed), budget=SOLVER_BUDGET).result == "won"
        for earlier in range(n):  # every earlier candidate: not proved within the budget
            deal = core.new_game(game, candidate(key, game, earlier))
            assert solve(deal, budget=SOLVER_BUDGET).result != "won"
        assert daily_seed(key, game) == (seed, n)  # the same anywhere, any time


def test_days_are_utc() -> None:
    start, end = day_bounds(DAY)
    assert day_of(start) == DAY and day_of(end - 0.001) == DAY and day_of(end) != DAY
    assert end - start == 86400


def attempt(name: str, **result: object) -> Attempt:
    return Attempt(
        player=name, name=name, room=f"r-{name}", started_at=0.0, finished=True, **result
    )  # type: ignore[arg-type]


def test_the_board_ranks_won_then_time_then_moves_with_ties_sharing_a_place() -> None:
    board = ranking(
        [
            attempt("slow", won=True, time=90.0, moves=100, progress=52),
            attempt("fast", won=True, time=60.0, moves=120, progress=52),
            attempt("tie-a", won=True, time=75.0004, moves=110, progress=52),
            attempt("tie-b", won=True, time=75.0, moves=110, progress=52),
            attempt("fewer", won=True, time=75.0, moves=105, progress=52),
            attempt("far", won=False, progress=40, moves=200),
            attempt("near", won=False, progress=30, moves=50),
            attempt("undone", won=True, time=10.0, moves=90, progress=52, used_undo=True),
            Attempt(player="live", name="live", room="r", started_at=0.0),  # still running
        ]
    )
    assert [(row["place"], row["name"]) for row in board] == [
        (1, "fast"),
        (2, "fewer"),
        (3, "tie-a"),
        (3, "tie-b"),
        (5, "slow"),
        (6, "far"),
        (7, "near"),
    ]


def test_streaks_of_days_played_and_won_end_today_or_yesterday() -> None:
    days = {DAY - dt.timedelta(days=d): won for d, won in ((1, True), (2, False), (3, True))}
    assert streaks(days, DAY) == {"played": 3, "won": 1}  # today still to come
    days[DAY] = True
    assert streaks(days, DAY) == {"played": 4, "won": 2}
    assert streaks({DAY - dt.timedelta(days=2): True}, DAY) == {"played": 0, "won": 0}
