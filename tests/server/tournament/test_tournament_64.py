"""A field of 64 bot players in a Rounds tournament (eight heats of eight on one deal
each round) finishes, with its standings correct: as the replays alone give them, every
round's points summing to what 64 places are worth, finishers above everyone else; and
the live standings stayed coalesced (at most four pushes a second) and paginated."""

from __future__ import annotations

import asyncio

from support.http import get_json, get_text, post_json
from support.tour_bots import (
    FINISH,
    Plan,
    TourBot,
    always,
    create,
    recomputed_points,
    register,
    wait_for,
)
from support.wsclient import WsClient

import protocol as p

PLAYERS = 64


async def test_a_field_of_64_bots_finishes_with_correct_standings(server_url: str) -> None:
    # Countdown and grace long enough for 64 bots on one machine to take their seats.
    tid, organiser = await create(
        server_url, rounds=2, time_limit=60, max_players=PLAYERS, countdown=1, grace=30
    )
    names = [f"bot{i:02d}" for i in range(PLAYERS)]
    tokens = await asyncio.gather(*(register(server_url, tid, n) for n in names))
    # Half finish; the others play a few moves (0 to 9) and resign.
    plans = [FINISH if i % 2 == 0 else Plan(moves=i % 10, resign=True) for i in range(PLAYERS)]
    bots = [
        TourBot([server_url], tid, n, t, always(plan))
        for n, t, plan in zip(names, tokens, plans, strict=True)
    ]
    loop = asyncio.get_running_loop()
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid, top=10, offset=10))
        first = await watcher.expect(p.TourState)
        assert first.total == PLAYERS and len(first.standings) == 10 and first.offset == 10
        running = [asyncio.create_task(bot.run(timeout=180)) for bot in bots]
        started = loop.time()
        status, _ = await post_json(
            f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser}
        )
        assert status == 200
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished", 240)
        elapsed = loop.time() - started
        await asyncio.gather(*running)
    pushes = [m for m in watcher.seen if isinstance(m, p.TourState)]
    assert len(pushes) <= 4 * elapsed + 3, (len(pushes), elapsed)
    assert [m.version for m in pushes] == sorted(m.version for m in pushes)
    assert [r["rank"] for r in final.standings] == sorted(r["rank"] for r in final.standings)

    status, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    assert status == 200
    rows = doc["standings"]
    assert len(rows) == PLAYERS and len(doc["races"]) == 16
    assert all(len(race["players"]) == 8 for race in doc["races"])
    assert len({race["seed"] for race in doc["races"]}) == 2  # a round's heats share its deal
    for number in ("1", "2"):
        assert sum(row["per_round"][number] for row in rows) == PLAYERS * (PLAYERS + 1) / 2
    finishers = {names[i] for i in range(0, PLAYERS, 2)}
    assert {row["name"] for row in rows[:32]} == finishers
    assert all(row["wins"] == 0 for row in rows[32:])
    replays = []
    for race in doc["races"]:
        status, text = await get_text(f"{server_url}/tournaments/{tid}/replays/{race['heat']}")
        assert status == 200
        replays.append(text)
    ids = {row["name"]: row["player"] for row in rows}
    assert recomputed_points(replays, ids) == {row["name"]: row["points"] for row in rows}
