"""Every server process stopped in the middle of a round and started again: the tournament
goes on with nothing lost. Real `python -m server` processes (SIGKILL, then a fresh start on
the same ports), a real Redis, bots that reconnect with their tokens."""

from __future__ import annotations

import asyncio
from pathlib import Path

from server_processes import ServerProcess, environment
from tests_support import free_port
from tour_bots import FINISH, Plan, TourBot, always, post, recomputed_points
from wsclient import get_json, get_text

import protocol as p
from core.replay import verify


async def test_a_full_restart_mid_round_loses_nothing(redis_url: str, tmp_path: Path) -> None:
    env = environment(REDIS_URL=redis_url)
    servers = [ServerProcess(free_port(), env, log=tmp_path / f"s{i}.log") for i in range(2)]
    for server in servers:
        await server.start()
    urls = [s.url for s in servers]
    body = {
        "name": "restart cup",
        "game": "shaula",
        "rounds": 2,
        "time_limit": 60,
        "pause": 0.3,
        "countdown": 0.3,
        "grace": 30,
        "spectator_delay": 0,
    }
    status, data = await post(f"{urls[0]}/tournaments", body)
    assert status == 201, data
    tid, organiser = data["tournament"]["id"], data["organiser_token"]
    slow = Plan(pace=0.04)
    plans = {"ann": slow, "bo": slow, "cy": Plan(moves=25, resign=True, pace=0.04), "di": FINISH}
    bots = []
    for name, plan in plans.items():
        status, data = await post(f"{urls[1]}/tournaments/{tid}/players", {"name": name})
        assert status == 201
        bots.append(TourBot(urls, tid, name, data["token"], always(plan)))
    running = [asyncio.create_task(bot.run(timeout=90)) for bot in bots]
    try:
        status, _ = await post(f"{urls[1]}/tournaments/{tid}/start", {"organiser_token": organiser})
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
        before = {bot.name: sum(map(len, bot.accepted.values())) for bot in bots}
        await asyncio.sleep(0.5)
        for server in servers:
            await server.start()
        finals = await asyncio.wait_for(asyncio.gather(*running), 150)
        await check(urls, tid, bots, finals, before)
    finally:
        for task in running:
            task.cancel()
        for server in servers:
            await server.stop()


async def check(
    urls: list[str],
    tid: str,
    bots: list[TourBot],
    finals: list[p.TourState],
    before: dict[str, int],
) -> None:
    assert all(f.tournament["status"] == "finished" for f in finals)
    assert all(bot.reconnects > 0 for bot in bots[:2])  # they did lose their servers
    status, doc = await get_json(f"{urls[0]}/tournaments/{tid}/standings")
    assert status == 200 and len(doc["tournament"]["deals"]) == 2
    rows = {row["name"]: row for row in doc["standings"]}
    for name in ("ann", "bo", "di"):  # every winning line was played out to the end
        assert rows[name]["rounds"] == 2 and rows[name]["progress"] == 104, rows[name]
    replays = []
    for race in doc["races"]:
        _, text = await get_text(f"{urls[1]}/tournaments/{tid}/replays/{race['heat']}")
        checked = verify(text)
        replays.append(text)
        # Every move a bot saw accepted is in the replay, once, in its order.
        for bot in bots:
            seat = [r["seat"] for r in checked.header["players"] if r["name"] == bot.name]
            if seat:
                mine = [m for s, m, _ in checked.moves if s == seat[0]]
                assert mine == bot.accepted[race["room"]], (bot.name, race["room"])
    assert sum(before.values()) > 0
    ids = {row["name"]: row["player"] for row in doc["standings"]}
    assert recomputed_points(replays, ids) == {name: row["points"] for name, row in rows.items()}
