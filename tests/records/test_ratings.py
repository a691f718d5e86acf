"""Rating maths: ties move alike, the order matters, provisional, inactivity, display."""

from __future__ import annotations

import pytest

from records.ratings import (
    DAY,
    PROVISIONAL_SIGMA,
    START,
    Rating,
    display,
    rate,
)


def test_a_new_player_shows_1000_and_is_provisional() -> None:
    assert START.display == 1000
    assert START.provisional


def test_a_tie_in_a_four_player_race_moves_the_tied_players_alike() -> None:
    after = rate([START] * 4, [1, 2, 2, 4])
    assert after[1] == after[2]
    assert after[0].mu > after[1].mu > after[3].mu
    assert after[1].mu != START.mu or after[1].sigma != START.sigma


def test_the_winner_gains_and_the_loser_loses() -> None:
    strong, weak = rate([START, START], [1, 2])
    assert strong.mu > START.mu > weak.mu
    assert strong.display > START.display


def test_sigma_settles_with_races() -> None:
    a, b = START, START
    for race in range(30):
        a, b = rate([a, b], [1, 2] if race % 2 else [2, 1])
    assert not a.provisional and a.sigma < PROVISIONAL_SIGMA


def test_sigma_grows_with_inactivity_up_to_the_start() -> None:
    settled = Rating(25.0, 3.0)
    assert settled.aged(0) == settled
    later = settled.aged(30 * DAY)
    assert settled.sigma < later.sigma < START.sigma
    assert later.mu == settled.mu
    assert not settled.aged(200 * DAY).provisional
    assert settled.aged(300 * DAY).provisional
    assert settled.aged(10_000 * DAY).sigma == pytest.approx(START.sigma)


def test_the_displayed_number() -> None:
    assert display(25.0, 3.0) == (1000 + 28 * 16)


def test_one_rated_player_is_no_race() -> None:
    assert rate([START], [1]) == [START]
