"""A player's profile from the records, on SQLite and PostgreSQL: ratings with history,
races played and won, best times, the latest races a page at a time."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.util import await_only

from records.archive import FinishedRace, RaceArchive, SeatResult
from records.engine import open_engine
from records.keys import hash_secret
from records.migrate import upgrade_to_head
from records.players import Player, PlayerStore
from records.profiles import Profile, Profiles


@pytest.fixture
async def stores(database_url: str) -> AsyncIterator[tuple[PlayerStore, RaceArchive, Profiles]]:
    engine = open_engine(database_url)
    await upgrade_to_head(engine)
    yield PlayerStore(engine), RaceArchive(engine), Profiles(engine)
    await engine.dispose()


def race(n: int, ann: Player, bo: Player, ann_wins: bool, ann_ms: int = 60_000) -> FinishedRace:
    return FinishedRace(
        id=f"r{n}.1",
        room=f"r{n}",
        round=1,
        game="shaula",
        seed=100 + n,
        kind="quick",
        rated=True,
        started_at=1000.0 * n,
        ended_at=1000.0 * n + 90,
        finish_reason="all_done",
        replay="{}",
        replay_hash="h",
        results=[
            SeatResult(
                0,
                ann.name,
                1 if ann_wins else 2,
                ann_wins,
                ann_ms if ann_wins else None,
                52 if ann_wins else 20,
                100,
                player_id=ann.id,
            ),
            SeatResult(
                1,
                bo.name,
                2 if ann_wins else 1,
                not ann_wins,
                None if ann_wins else 70_000,
                20 if ann_wins else 52,
                90,
                player_id=bo.id,
            ),
        ],
    )


async def test_a_profile_adds_up_the_archived_races(
    stores: tuple[PlayerStore, RaceArchive, Profiles],
) -> None:
    players, archive, profiles = stores
    ann = await players.create(hash_secret("a"), 1.0)
    bo = await players.create(hash_secret("b"), 1.0)
    assert await profiles.rating(ann.id, "shaula", 10.0) is None
    assert (await profiles.profile(ann.id, 1, 20, 10.0)).ratings == []
    for n, (wins, ms) in enumerate([(True, 80_000), (True, 61_500), (False, 0)], start=1):
        assert await archive.archive(race(n, ann, bo, wins, ms))
    seen = await profiles.profile(ann.id, 1, 2, 4000.0)
    assert seen.stats == {"races": 3, "won": 2}
    [shaula] = seen.ratings
    assert shaula["game"] == "shaula" and shaula["races"] == 3 and shaula["provisional"]
    assert [h["race"] for h in shaula["history"]] == ["r1.1", "r2.1", "r3.1"]
    assert shaula["history"][1]["rating"] > shaula["history"][0]["rating"]  # won again
    shown = await profiles.rating(ann.id, "shaula", 4000.0)
    assert shown is not None
    assert (shaula["rating"], shaula["provisional"]) == (shown.display, shown.provisional)
    assert (
        seen.best
        == await profiles.best_times(ann.id)
        == [
            {
                "game": "shaula",
                "time": 61.5,
                "race": "r2.1",
                "seed": "102",
                "tournament": None,
                "at": 2090.0,
            }
        ]
    )
    first = seen.races
    assert [r["race"] for r in first.items] == ["r3.1", "r2.1"] and first.more
    assert first.items[0]["place"] == 2 and first.items[0]["seats"] == 2
    assert first.items[1]["time"] == 61.5 and first.items[1]["replay"] == "/races/r2.1/replay"
    assert first.items[1]["rating_after"] is not None
    second = (await profiles.profile(ann.id, 2, 2, 4000.0)).races
    assert [r["race"] for r in second.items] == ["r1.1"] and not second.more


async def test_the_rating_history_is_in_the_order_the_rating_changed(
    stores: tuple[PlayerStore, RaceArchive, Profiles],
) -> None:
    """A race archived late (its process died at its end, another took it over after the
    lease) moves the rating after a race that ended later: the history lists the changes
    as they were made, so that its last point is the rating shown."""
    players, archive, profiles = stores
    ann = await players.create(hash_secret("a"), 1.0)
    bo = await players.create(hash_secret("b"), 1.0)
    assert await archive.archive(race(2, ann, bo, ann_wins=False))
    assert await archive.archive(race(1, ann, bo, ann_wins=True))  # ended first, archived last
    seen = await profiles.profile(ann.id, 1, 20, 4000.0)
    [shaula] = seen.ratings
    assert [h["race"] for h in shaula["history"]] == ["r2.1", "r1.1"]
    assert shaula["history"][-1]["rating"] == shaula["rating"]
    by_race = {r["race"]: r for r in seen.races.items}
    assert by_race["r1.1"]["rating_before"] == by_race["r2.1"]["rating_after"]
    assert by_race["r1.1"]["rating_after"] == shaula["rating"]


async def test_time_away_lowers_the_rating_shown_below_the_historys_last_point(
    stores: tuple[PlayerStore, RaceArchive, Profiles],
) -> None:
    """The history is what each race left the rating at; the rating shown is as of now,
    its sigma grown with the time since (a month away: some 40 points for a settled one)."""
    players, archive, profiles = stores
    ann = await players.create(hash_secret("a"), 1.0)
    bo = await players.create(hash_secret("b"), 1.0)
    for n in range(1, 4):
        assert await archive.archive(race(n, ann, bo, ann_wins=True))
    month = 30 * 86400.0
    for now, away in ((4000.0, False), (3090.0 + month, True)):
        [shaula] = (await profiles.profile(ann.id, 1, 20, now)).ratings
        last = shaula["history"][-1]["rating"]
        assert (shaula["rating"] < last) is away, (now, shaula)


async def test_a_profile_has_the_best_splits_best_segments_and_their_sum(
    stores: tuple[PlayerStore, RaceArchive, Profiles],
) -> None:
    players, archive, profiles = stores
    ann = await players.create(hash_secret("a"), 1.0)
    bo = await players.create(hash_secret("b"), 1.0)
    runs = [  # ann's splits (ms) in three races: two wins, then a race she did not finish
        (True, 80_000, [20_000, 40_000, 60_000, 80_000]),
        (True, 70_000, [15_000, 38_000, 52_000, 70_000]),
        (False, 0, [12_000, 30_000, None, None]),
    ]
    for n, (wins, ms, splits) in enumerate(runs, start=1):
        finished = race(n, ann, bo, wins, ms)
        first = dataclasses.replace(finished.results[0], splits=splits)
        finished = dataclasses.replace(finished, results=[first, finished.results[1]])
        assert await archive.archive(finished)
    seen = await profiles.profile(ann.id, 1, 20, 4000.0)
    [shaula], by_race = seen.splits, seen.splits_by_race
    assert shaula["game"] == "shaula" and shaula["race"] == "r2.1"  # the fastest win
    assert shaula["best"] == [15_000, 38_000, 52_000, 70_000]
    # Best segments: 12 s (race 3), 18 s (race 3: 30 - 12), 14 s (race 2), 18 s (race 2).
    assert shaula["best_segments"] == [12_000, 18_000, 14_000, 18_000]
    assert shaula["sum_of_best"] == 62_000
    assert by_race["r3.1"] == [12_000, 30_000, None, None]
    of_bo = await profiles.profile(bo.id, 1, 20, 4000.0)
    assert (of_bo.splits, of_bo.splits_by_race) == ([], {})  # bo's seats had no splits
    assert await profiles.best_run(ann.id, "shaula") == {
        "race": "r2.1",
        "time_ms": 70_000,
        "splits": [15_000, 38_000, 52_000, 70_000],
    }


async def profile_meanwhile(
    profiles: Profiles, player_id: str, meanwhile: Coroutine[Any, Any, None]
) -> Profile:
    """The player's profile, with `meanwhile` run between its first query and the rest."""
    statements = 0

    def run_it(*_: object) -> None:
        nonlocal statements
        statements += 1
        if statements == 1:
            await_only(meanwhile)

    event.listen(profiles.engine.sync_engine, "after_cursor_execute", run_it)
    try:
        seen = await profiles.profile(player_id, 1, 20, 5000.0)
    finally:
        event.remove(profiles.engine.sync_engine, "after_cursor_execute", run_it)
    assert statements > 1
    return seen


async def test_a_profile_is_read_in_one_snapshot(
    stores: tuple[PlayerStore, RaceArchive, Profiles],
) -> None:
    """A race archived while a profile is being read is in none of its parts, not in its
    counts but missing from its races (or the other way round), until the next read."""
    players, archive, profiles = stores
    ann = await players.create(hash_secret("a"), 1.0)
    bo = await players.create(hash_secret("b"), 1.0)
    assert await archive.archive(race(1, ann, bo, True))

    async def archive_another() -> None:
        assert await archive.archive(race(2, ann, bo, True, 50_000))

    seen = await profile_meanwhile(profiles, ann.id, archive_another())
    raced = [item["race"] for item in seen.races.items]
    assert seen.stats == {"races": len(raced), "won": len(raced)}
    [shaula] = seen.ratings
    assert shaula["races"] == len(raced) == len(shaula["history"])
    [best] = seen.best
    assert best["race"] in raced
    assert set(seen.splits_by_race) <= set(raced)
    again = await profiles.profile(ann.id, 1, 20, 5000.0)
    assert [item["race"] for item in again.races.items] == ["r2.1", "r1.1"]
    assert again.stats == {"races": 2, "won": 2} and again.best[0]["race"] == "r2.1"


async def test_a_profile_names_the_player_as_they_were_in_its_snapshot(
    stores: tuple[PlayerStore, RaceArchive, Profiles],
) -> None:
    """A rename while a profile is being read shows either the old name and history or
    the new ones, never the new history with the old name (or the other way round)."""
    players, archive, profiles = stores
    created = await players.create(hash_secret("a"), 1.0)
    guest = created.name
    ann = await players.rename(created.id, "ann", 2.0)
    bo = await players.create(hash_secret("b"), 1.0)
    assert await archive.archive(race(1, ann, bo, True))

    async def rename() -> None:
        assert (await players.rename(ann.id, "annie", 3.0)).name == "annie"

    seen = await profile_meanwhile(profiles, ann.id, rename())
    shown = (seen.player.name, [past.name for past in seen.names])
    assert shown in (("ann", [guest]), ("annie", ["ann", guest]))
    again = await profiles.profile(ann.id, 1, 20, 5000.0)
    assert (again.player.name, [past.name for past in again.names]) == ("annie", ["ann", guest])
