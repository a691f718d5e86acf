"""Leaderboards over the archive, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest
from support.records import add_player, finished_race, migrated

from records.archive import FinishedRace, RaceArchive, SeatResult
from records.boards import Leaderboards, period_start
from records.ratings import DAY

# Wednesday 2026-12-02 12:00 UTC
NOW = dt.datetime(2026, 12, 2, 12, tzinfo=dt.UTC).timestamp()


def test_periods_begin_at_midnight_utc_and_on_mondays() -> None:
    assert period_start("day", NOW, rating=False) == NOW - 12 * 3600
    assert period_start("week", NOW, rating=False) == NOW - 2 * DAY - 12 * 3600
    assert period_start("all", NOW, rating=False) is None
    assert period_start("all", NOW, rating=True) == NOW - 30 * DAY
    with pytest.raises(ValueError):
        period_start("year", NOW, rating=False)


def _timed(race: FinishedRace, times: dict[int, int | None], hints: bool = False) -> FinishedRace:
    """`race` with seat -> winning time (None: did not win)."""
    results = [
        SeatResult(
            seat=r.seat,
            name=r.name,
            place=r.place,
            won=times.get(r.seat) is not None,
            time_ms=times.get(r.seat),
            progress=r.progress,
            moves=r.moves,
            player_id=r.player_id,
            is_bot=r.is_bot,
            used_hints=hints,
        )
        for r in race.results
    ]
    return FinishedRace(**{**{f: getattr(race, f) for f in race.__slots__}, "results": results})


async def test_best_times_on_a_deal_by_day_week_and_ever(database_url: str) -> None:
    async with migrated(database_url) as engine:
        for name in ("ann", "bo", "cy", "bot"):
            await add_player(engine, name, name, bot=name == "bot")
        archive = RaceArchive(engine)
        ppl = ["ann", "bo"]
        # Last month ann won in 50 s; this week bo in 70 s and ann in 80 s; today cy in 90 s.
        races = [
            _timed(finished_race("a", [1, 2], players=ppl, ended_at=NOW - 40 * DAY), {0: 50_000}),
            _timed(finished_race("b", [1, 2], players=ppl, ended_at=NOW - 2 * DAY), {1: 70_000}),
            _timed(finished_race("c", [1, 2], players=ppl, ended_at=NOW - DAY), {0: 80_000}),
            _timed(
                finished_race("d", [1, 2], players=["cy", "bot"], bots=[1], ended_at=NOW),
                {0: 90_000, 1: 90_000},
            ),
            # another deal, and a room with hints: neither counts
            _timed(finished_race("e", [1, 2], players=ppl, seed=5, ended_at=NOW), {0: 1_000}),
            _timed(finished_race("f", [1, 2], players=ppl, ended_at=NOW), {1: 1_000}, hints=True),
        ]
        for race in races:
            await archive.archive(race)
        boards = Leaderboards(engine)
        ever = await boards.by_time("shaula", 617, "all", NOW)
        assert [(r["rank"], r["player"]["id"], r["time_ms"], r["race"]) for r in ever.rows] == [
            (1, "ann", 50_000, "a.1"),
            (2, "bo", 70_000, "b.1"),
            (3, "bot", 90_000, "d.1"),
            (3, "cy", 90_000, "d.1"),
        ]
        assert ever.rows[2]["player"]["bot"] is True
        assert ever.rows[0]["replay"] == "/races/a.1/replay"
        week = await boards.by_time("shaula", 617, "week", NOW)
        assert [(r["player"]["id"], r["time_ms"]) for r in week.rows] == [
            ("bo", 70_000),
            ("ann", 80_000),
            ("bot", 90_000),
            ("cy", 90_000),
        ]
        day = await boards.by_time("shaula", 617, "day", NOW)
        assert [r["player"]["id"] for r in day.rows] == ["bot", "cy"]
        page = await boards.by_time("shaula", 617, "all", NOW, offset=1, limit=2)
        assert (page.total, page.offset, [r["rank"] for r in page.rows]) == (4, 1, [2, 3])
        assert (await boards.by_time("moojub", 617, "all", NOW)).rows == []


async def test_ratings_board_lists_settled_recently_active_players(database_url: str) -> None:
    async with migrated(database_url) as engine:
        names = [f"p{i}" for i in range(6)]
        for name in names:
            await add_player(engine, name, name)
        archive = RaceArchive(engine)
        # p0..p3 race each other a lot (settled); p4 and p5 race once (provisional).
        for n in range(40):
            order = [1, 2, 3, 4] if n % 3 else [2, 1, 3, 4]
            race = finished_race(f"r{n}", order, players=names[:4], ended_at=NOW - DAY + n)
            await archive.archive(race)
        await archive.archive(finished_race("new", [1, 2], players=names[4:], ended_at=NOW))
        boards = Leaderboards(engine)
        board = await boards.by_rating("shaula", "all", NOW)
        ids = [r["player"]["id"] for r in board.rows]
        assert ids[:2] in (["p0", "p1"], ["p1", "p0"]) and ids[2:] == ["p2", "p3"]
        ratings = [r["rating"] for r in board.rows]
        assert ratings == sorted(ratings, reverse=True)
        assert board.rows[0]["races"] == 40
        # Today only the new pair raced, and they are provisional: nobody; this week, the four.
        assert (await boards.by_rating("shaula", "day", NOW)).total == 0
        assert (await boards.by_rating("shaula", "week", NOW)).total == 4
        # Around p3 with pages of 2: the page holding p3, last.
        around = await boards.by_rating("shaula", "all", NOW, limit=2, around="p3")
        assert [r["player"]["id"] for r in around.rows][-1] == "p3" and around.offset == 2
        # An id in another case is the same player (ids are read in any case, as race ids).
        upper = await boards.by_rating("shaula", "all", NOW, limit=2, around="P3")
        assert (upper.offset, upper.rows) == (around.offset, around.rows)
        # Two months later nobody has raced: nobody is recently active.
        assert (await boards.by_rating("shaula", "all", NOW + 60 * DAY)).rows == []
