"""The archive's contract, on SQLite and PostgreSQL: a race is archived and rated exactly
once, however many times and from however many connections it is handed in."""

from __future__ import annotations

import asyncio
import dataclasses

import sqlalchemy as sa
from support.records import add_player, finished_race, migrated

from records.archive import RaceArchive
from records.engine import open_engine
from records.ratings import START
from records.schema import race_results, rating_history, ratings


async def _ratings(archive: RaceArchive) -> dict[str, tuple[float, float, int]]:
    async with archive.engine.connect() as conn:
        rows = await conn.execute(sa.select(ratings))
        return {r.player_id: (r.mu, r.sigma, r.races) for r in rows}


async def test_a_race_is_archived_once(database_url: str) -> None:
    async with migrated(database_url) as engine:
        for player in ("a", "b"):
            await add_player(engine, player, player)
        archive = RaceArchive(engine)
        race = finished_race("r1", [1, 2], players=["a", "b"])
        assert await archive.archive(race) is True
        assert await archive.archive(race) is False
        assert await archive.replay("r1.1") == race.replay
        assert (await _ratings(archive))["a"][2] == 1
        async with engine.connect() as conn:
            count = await conn.scalar(sa.select(sa.func.count()).select_from(race_results))
            history = await conn.scalar(sa.select(sa.func.count()).select_from(rating_history))
        assert (count, history) == (2, 2)


async def test_two_connections_archiving_one_race_at_once_write_it_once(
    database_url: str,
) -> None:
    async with migrated(database_url) as engine:
        for player in ("a", "b", "c"):
            await add_player(engine, player, player)
        others = [open_engine(database_url) for _ in range(3)]
        try:
            race = finished_race("r2", [2, 1, 3], players=["a", "b", "c"])
            done = await asyncio.gather(*(RaceArchive(e).archive(race) for e in others))
            assert sorted(done) == [False, False, True]
            rated = await _ratings(RaceArchive(engine))
            assert {p: n for p, (_, _, n) in rated.items()} == {"a": 1, "b": 1, "c": 1}
            assert rated["b"][0] > START.mu > rated["c"][0]
        finally:
            for other in others:
                await other.dispose()


async def test_races_of_the_same_players_at_once_each_rate_from_the_last(
    database_url: str,
) -> None:
    async with migrated(database_url) as engine:
        for player in ("a", "b"):
            await add_player(engine, player, player)
        others = [open_engine(database_url) for _ in range(4)]
        try:
            races = [finished_race(f"m{i}", [1, 2], players=["a", "b"]) for i in range(4)]
            done = await asyncio.gather(
                *(RaceArchive(e).archive(r) for e, r in zip(others, races, strict=True))
            )
            assert done == [True] * 4
            assert (await _ratings(RaceArchive(engine)))["a"][2] == 4
            async with engine.connect() as conn:
                mus = (
                    await conn.execute(
                        sa.select(rating_history.c.mu)
                        .where(rating_history.c.player_id == "a")
                        .order_by(rating_history.c.mu)
                    )
                ).scalars()
                assert len(set(mus)) == 4  # four steps up, none lost to another
        finally:
            for other in others:
                await other.dispose()


async def test_a_tie_in_a_four_player_race_moves_the_tied_players_equally(
    database_url: str,
) -> None:
    async with migrated(database_url) as engine:
        for player in "abcd":
            await add_player(engine, player, player)
        archive = RaceArchive(engine)
        await archive.archive(finished_race("t4", [1, 2, 2, 4], players=list("abcd")))
        rated = await _ratings(archive)
        assert rated["b"] == rated["c"]
        assert rated["a"][0] > rated["b"][0] > rated["d"][0]
        async with engine.connect() as conn:
            rows = await conn.execute(sa.select(race_results.c.seat, race_results.c.rating_after))
            shown = {seat: after for seat, after in rows}
        assert shown[1] == shown[2] and shown[0] > shown[1] > shown[3]


async def test_bots_unknown_players_and_casual_races_are_never_rated(
    database_url: str,
) -> None:
    async with migrated(database_url) as engine:
        await add_player(engine, "a", "a")
        await add_player(engine, "bot", "bot", bot=True)
        archive = RaceArchive(engine)
        # a player against a bot: one rated player is no rated race
        await archive.archive(finished_race("b1", [2, 1], players=["a", "bot"], bots=[1]))
        # a player against a seat claiming an unknown id: kept with no player
        await archive.archive(finished_race("u1", [1, 2], players=["a", "ghost"]))
        await add_player(engine, "b", "b")
        await archive.archive(finished_race("c1", [1, 2], players=["a", "b"], rated=False))
        assert await _ratings(archive) == {}
        async with engine.connect() as conn:
            rows = await conn.execute(
                sa.select(race_results.c.race_id, race_results.c.player_id).order_by(
                    race_results.c.race_id, race_results.c.seat
                )
            )
            assert [tuple(r) for r in rows] == [
                ("b1.1", "a"),
                ("b1.1", "bot"),
                ("c1.1", "a"),
                ("c1.1", "b"),
                ("u1.1", "a"),
                ("u1.1", None),
            ]


async def test_a_race_nobody_played_is_not_rated_and_one_somebody_played_is(
    database_url: str,
) -> None:
    """Abandoned before it began (every rated racer forfeited or timed out without a move):
    nothing to rate, as an aborted game is not. A racer who never moved against one who
    did loses rating as ever."""
    async with migrated(database_url) as engine:
        for player in "ab":
            await add_player(engine, player, player)
        archive = RaceArchive(engine)
        idle = finished_race("n1", [1, 1], players=["a", "b"])
        idle = dataclasses.replace(
            idle,
            results=[
                dataclasses.replace(r, moves=0, progress=0, won=False, time_ms=None)
                for r in idle.results
            ],
        )
        await archive.archive(idle)
        assert await _ratings(archive) == {}
        half = finished_race("n2", [1, 2], players=["a", "b"])
        half = dataclasses.replace(
            half, results=[half.results[0], dataclasses.replace(half.results[1], moves=0)]
        )
        await archive.archive(half)
        rated = await _ratings(archive)
        assert rated["a"][0] > START.mu > rated["b"][0]


async def test_the_room_replay_is_its_latest_archived_race(database_url: str) -> None:
    async with migrated(database_url) as engine:
        archive = RaceArchive(engine)
        assert await archive.room_replay("rm") is None
        first = finished_race("rm", [1, 2], round_=1)
        second = finished_race("rm", [2, 1], round_=2)
        await archive.archive(second)
        await archive.archive(first)
        assert await archive.room_replay("rm") == second.replay
        assert await archive.replay("rm.1") == first.replay
        assert await archive.replay("nope.1") is None
