"""The records' schema: migrations bring any database to head, once, even when several
processes start at once; the migrated tables are exactly `records.schema`'s."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy.engine import Connection

from records.engine import open_engine
from records.migrate import alembic_config, current_revision, head, upgrade_to_head
from records.players import PlayerStore
from records.schema import metadata


async def test_upgrade_brings_an_empty_database_to_head(database_url: str) -> None:
    engine = open_engine(database_url)
    try:
        assert await current_revision(engine) is None
        await upgrade_to_head(engine)
        assert await current_revision(engine) == head()
        async with engine.connect() as conn:
            names = await conn.run_sync(lambda c: set(sa.inspect(c).get_table_names()))
        assert set(metadata.tables) <= names
    finally:
        await engine.dispose()


def _differences(connection: Connection) -> list[object]:
    return list(compare_metadata(MigrationContext.configure(connection), metadata))


async def test_the_migrations_build_exactly_the_schema(database_url: str) -> None:
    engine = open_engine(database_url)
    try:
        await upgrade_to_head(engine)
        async with engine.connect() as conn:
            assert await conn.run_sync(_differences) == []
    finally:
        await engine.dispose()


async def test_several_processes_migrating_at_once_all_end_at_head(database_url: str) -> None:
    engines = [open_engine(database_url) for _ in range(4)]
    try:
        await asyncio.gather(*(upgrade_to_head(engine) for engine in engines))
        for engine in engines:
            assert await current_revision(engine) == head()
        await upgrade_to_head(engines[0])  # again: nothing to do
        assert await current_revision(engines[0]) == head()
    finally:
        for engine in engines:
            await engine.dispose()


def _upgrade_to(revision: str) -> Callable[[Connection], None]:
    def upgrade(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    return upgrade


async def test_the_rating_history_kept_before_0003_is_numbered_by_the_races_end(
    database_url: str,
) -> None:
    engine = open_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_upgrade_to("0002"))
            await conn.execute(
                sa.text(
                    "INSERT INTO players (id, name, name_key, is_bot, created_at, last_seen_at)"
                    " VALUES ('a', 'ann', 'ann', false, 1, 1), ('b', 'bo', 'bo', false, 1, 1)"
                )
            )
            for n, ended in ((1, 300.0), (2, 100.0), (3, 200.0)):
                await conn.execute(
                    sa.text(
                        "INSERT INTO races (id, room, round, game, seed, kind, rated,"
                        " started_at, ended_at, finish_reason, replay, replay_hash) VALUES"
                        " (:id, 'r', :n, 'shaula', '1', 'room', true, 0, :at, 'all_done', '', '')"
                    ),
                    {"id": f"r.{n}", "n": n, "at": ended},
                )
                await conn.execute(
                    sa.text(
                        "INSERT INTO rating_history (player_id, game, race_id, at, mu, sigma,"
                        " display) VALUES (:p, 'shaula', :race, :at, 25, 8, 1000)"
                    ),
                    [{"p": p, "race": f"r.{n}", "at": ended} for p in ("a", "b")],
                )
        await upgrade_to_head(engine)
        async with engine.connect() as conn:
            rows = await conn.execute(
                sa.text("SELECT player_id, race_id, change FROM rating_history")
            )
            numbered = {(row.player_id, row.race_id): row.change for row in rows}
        assert numbered == {
            (p, race): change
            for p in ("a", "b")
            for race, change in (("r.2", 1), ("r.3", 2), ("r.1", 3))
        }
    finally:
        await engine.dispose()


async def test_results_archived_before_0004_keep_no_stuck_nor_out(database_url: str) -> None:
    engine = open_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_upgrade_to("0003"))
            await conn.execute(
                sa.text(
                    "INSERT INTO races (id, room, round, game, seed, kind, rated, started_at,"
                    " ended_at, finish_reason, replay, replay_hash) VALUES"
                    " ('r.1', 'r', 1, 'shaula', '1', 'room', true, 0, 1, 'all_done', '', '')"
                )
            )
            await conn.execute(
                sa.text(
                    "INSERT INTO race_results (race_id, seat, name, is_bot, place, won,"
                    " progress, moves, used_undo, used_hints) VALUES"
                    " ('r.1', 0, 'ann', false, 1, false, 3, 9, false, false)"
                )
            )
        await upgrade_to_head(engine)
        async with engine.begin() as conn:
            await conn.execute(
                sa.text(
                    "INSERT INTO race_results (race_id, seat, name, is_bot, place, won,"
                    " progress, moves, used_undo, used_hints, stuck, out) VALUES"
                    " ('r.1', 1, 'bo', false, 2, false, 0, 0, false, false, true, 'resigned')"
                )
            )
            rows = await conn.execute(
                sa.text("SELECT seat, stuck, out FROM race_results ORDER BY seat")
            )
            assert [tuple(row) for row in rows] == [(0, None, None), (1, True, "resigned")]
    finally:
        await engine.dispose()


async def test_names_given_up_before_0005_are_found_by_their_key(database_url: str) -> None:
    engine = open_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_upgrade_to("0004"))
            await conn.execute(
                sa.text(
                    "INSERT INTO players (id, name, name_key, is_bot, password_hash,"
                    " created_at, claimed_at, last_seen_at) VALUES"
                    " ('p1', 'Annie', 'annie', false, NULL, 0, NULL, 0)"
                )
            )
            await conn.execute(
                sa.text(
                    "INSERT INTO player_names (player_id, name, until_at)"
                    " VALUES ('p1', 'Guest-4821', 1), ('p1', 'ANN', 2)"
                )
            )
        await upgrade_to_head(engine)
        store = PlayerStore(engine)
        for typed in ("guest-4821", "Ann"):
            found = await store.by_former_name(typed)
            assert found is not None and found.id == "p1", typed
    finally:
        await engine.dispose()
