"""Every server process stopped in the middle of a round and started again: the tournament
goes on with nothing lost, in each format. Real `python -m server` processes (SIGKILL,
then a fresh start on the same ports), a real Redis, bots that reconnect with their
tokens. Nothing lost: every move a bot saw accepted is in its race's replay, once, in
order; every race was scored from its replay; the tournament reaches its end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support.http import get_json, get_text, post_json
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.tour_bots import FINISH, Plan, TourBot, always, recomputed_points

import protocol as p
from core.replay import verify
from server.tournament.scoring import RaceResult, arena_standings, knockout_winner

SLOW = Plan(pace=0.02)
FORMATS: dict[str, dict[str, Any]] = {
    "rounds": {"rounds": 2},
    "knockout": {},  # four players: two semi-finals, a final
    "arena": {"duration": 4, "wave": 0.3, "arena_heat": 2},
}


@pytest.mark.parametrize("fmt", list(FORMATS))
async def test_a_full_restart_mid_round_loses_nothing(
    fmt: str, redis_url: str, tmp_path: Path
) -> None:
    env = environment(REDIS_URL=redis_url)
    servers = [ServerProcess(free_port(), env, log=tmp_path / f"s{i}.log") for i in range(2)]
    for server in servers:
        await server.start()
    urls = [s.url for s in servers]
    body = {
        "name": "restart cup",
        "format": fmt,
        "game": "shaula",
        "time_limit": 60,
        "pause": 0.3,
        "countdown": 0.3,
        "grace": 30,
        "spectator_delay": 0,
        **FORMATS[fmt],
    }
    status, data = await post_json(f"{urls[0]}/tournaments", body)
    assert status == 201, data
    tid, organiser = data["tournament"]["id"], data["organiser_token"]
    # In the knockout, ann meets di and bo meets cy (seeds 1-4, 2-3).
    plans = {"ann": SLOW, "bo": SLOW, "cy": Plan(moves=25, resign=True, pace=0.02), "di": FINISH}
    bots = []
    for name, plan in plans.items():
        status, data = await post_json(f"{urls[1]}/tournaments/{tid}/players", {"name": name})
        assert status == 201
        bots.append(TourBot(urls, tid, name, data["token"], always(plan)))
    running = [asyncio.create_task(bot.run(timeout=90)) for bot in bots]
    try:
        status, _ = await post_json(
            f"{urls[1]}/tournaments/{tid}/start", {"organiser_token": organiser}
        )
        assert status == 200
        # Mid-round: the slow bots have some moves in, and far from all.
        for _ in range(400):
            played = [len(m) for bot in bots[:2] for m in bot.accepted.values()]
            if played and min(played) >= 15:
                break
            await asyncio.sleep(0.02)
        else:
            raise AssertionError("the first round did not get going")
        for server in servers:
            server.kill()
        for server in servers:
            assert server.process is not None
            await server.process.wait()
        before = sum(len(m) for bot in bots for m in bot.accepted.values())
        await asyncio.sleep(0.5)
        for server in servers:
            await server.start()
        finals = await asyncio.wait_for(asyncio.gather(*running), 150)
        assert before > 0 and all(bot.reconnects > 0 for bot in bots[:2])
        await check(fmt, urls, tid, bots, finals)
    finally:
        for task in running:
            task.cancel()
        for server in servers:
            await server.stop()


async def check(
    fmt: str, urls: list[str], tid: str, bots: list[TourBot], finals: list[p.TourState]
) -> None:
    assert all(f.tournament["status"] == "finished" for f in finals)
    status, doc = await get_json(f"{urls[0]}/tournaments/{tid}/standings")
    assert status == 200
    rows = {row["name"]: row for row in doc["standings"]}
    ids = {name: row["player"] for name, row in rows.items()}
    replays: dict[int, str] = {}
    for race in doc["races"]:
        _, text = await get_text(f"{urls[1]}/tournaments/{tid}/replays/{race['heat']}")
        checked = verify(text)
        replays[race["heat"]] = text
        # Every move a bot saw accepted is in the replay, once, in its order.
        for bot in bots:
            seat = [r["seat"] for r in checked.header["players"] if r["name"] == bot.name]
            if seat:
                mine = [m for s, m, _ in checked.moves if s == seat[0]]
                assert mine == bot.accepted[race["room"]], (bot.name, race["room"])
        # Scored from the replay: the served results are the replay's.
        assert [(r["name"], r["progress"], r["moves"]) for r in race["results"]] == [
            (r["name"], r["progress"], r["moves"]) for r in checked.results
        ]
    if fmt == "rounds":
        assert len(doc["tournament"]["deals"]) == 2
        for name in ("ann", "bo", "di"):  # every winning line was played out to the end
            assert rows[name]["rounds"] == 2 and rows[name]["progress"] == 104, rows[name]
        points = recomputed_points(list(replays.values()), ids)
        assert points == {name: row["points"] for name, row in rows.items()}
    elif fmt == "knockout":
        matches = doc["tournament"]["matches"]
        assert len(matches) == 3 and all(m["how"] == "race" for m in matches)
        names = {v: k for k, v in ids.items()}
        for match in matches:
            last = max(r["heat"] for r in doc["races"] if r["match"] == match["id"])
            results = [_result(r, ids) for r in verify(replays[last]).results]
            assert names[knockout_winner(*results)] == match["winner"]  # type: ignore[index]
        assert doc["tournament"]["champion"] == matches[-1]["winner"]
    else:
        heats = [[_result(r, ids) for r in verify(replays[h]).results] for h in sorted(replays)]
        again = {row.player: row.score for _, row in arena_standings(list(ids.values()), heats)}
        assert again == {row["player"]: row["score"] for row in rows.values()}
        assert sum(row["heats"] for row in rows.values()) >= 4


def _result(r: dict[str, Any], ids: dict[str, int]) -> RaceResult:
    return RaceResult(ids[r["name"]], r["won"], r["time"], r["progress"], r["reached"], r["moves"])
