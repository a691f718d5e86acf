"""Ratings on real servers: identified players race, the race is archived and rated once
however many processes see its end, and a tie moves the tied players alike."""

from __future__ import annotations

import sqlalchemy as sa
from support.finished import archived_replay, finish_identified_race
from support.http import get_json
from support.players import new_player
from support.records import migrated
from support.servers import MakeServer

from records.ratings import START
from records.schema import race_results, rating_history, ratings


async def test_two_processes_see_one_race_end_and_it_is_rated_once(
    make_server: MakeServer, sqlite_url: str
) -> None:
    one, two = await make_server(), await make_server()
    keys, ids = [], []
    for name in ("ann", "bob"):
        key, player = await new_player(one, name)
        keys.append(key)
        ids.append(player["id"])
    room = await finish_identified_race([one, two], keys, [0, 1])
    await archived_replay(one, f"{room}.1")
    await archived_replay(two, f"{room}.1")
    async with migrated(sqlite_url) as engine, engine.connect() as conn:
        rows = (await conn.execute(sa.select(ratings).where(ratings.c.player_id.in_(ids)))).all()
        assert sorted((r.player_id, r.races) for r in rows) == sorted((i, 1) for i in ids)
        history = sa.select(sa.func.count()).select_from(rating_history)
        assert await conn.scalar(history.where(rating_history.c.race_id == f"{room}.1")) == 2
        won = {r.player_id: r.mu for r in rows}
        assert won[ids[0]] > START.mu > won[ids[1]]  # ann made fewer moves: ranked first


async def test_a_tie_in_a_four_player_race_moves_the_tied_players_equally(
    make_server: MakeServer, sqlite_url: str
) -> None:
    server = await make_server()
    keys, ids = [], []
    for name in ("ann", "bob", "cyd", "dia"):
        key, player = await new_player(server, name)
        keys.append(key)
        ids.append(player["id"])
    room = await finish_identified_race([server], keys, [0, 1, 1, 2])  # places 1, 2, 2, 4
    await archived_replay(server, f"{room}.1")
    _, results = await get_json(f"{server}/rooms/{room}/results")
    assert [r["rank"] for r in sorted(results["results"], key=lambda r: r["seat"])] == [1, 2, 2, 4]
    async with migrated(sqlite_url) as engine, engine.connect() as conn:
        rows = (await conn.execute(sa.select(ratings))).all()
        after = {r.player_id: (r.mu, r.sigma) for r in rows}
        shown = dict(
            (r.player_id, (r.rating_before, r.rating_after))
            for r in await conn.execute(
                sa.select(race_results).where(race_results.c.race_id == f"{room}.1")
            )
        )
    ann, bo, cy, di = ids
    assert after[bo] == after[cy]
    assert after[ann][0] > after[bo][0] > after[di][0]
    assert shown[bo] == shown[cy] and shown[bo][0] == START.display != shown[bo][1]
