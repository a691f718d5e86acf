"""A Rounds tournament from registration to final standings, with bots on a real server
and a real Redis: heats in real rooms, a player who never finishes, one who drops their
connection, a tie, a withdrawal and a return, the organiser's pause, live standings, the
exports, and the standings recomputed from the replays alone."""

from __future__ import annotations

import asyncio
import csv
import io
import json

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
from core.replay import verify


async def test_a_rounds_tournament_from_registration_to_results(server_url: str) -> None:
    # A heat's room counts down as it opens, and a seat nobody holds by the start plus
    # the grace forfeits: the bots hear of their room through their tour_watch only
    # after it opened, so the countdown gives them time to come (0.2 s + 0.5 s was too
    # little under load: everyone forfeited before arriving, and cy "won" a round).
    tid, organiser = await create(server_url, rounds=3, time_limit=60, countdown=2.0)
    names = ["ann", "bo", "cy", "di", "ed", "fy"]
    tokens = {name: await register(server_url, tid, name) for name in names}
    status, data = await post_json(f"{server_url}/tournaments/{tid}/players", {"name": "ANN"})
    assert status == 409 and data["error"]["code"] == "name_taken"
    plans = {
        "ann": always(FINISH),
        "bo": always(FINISH),
        "cy": always(Plan(moves=6, resign=True)),  # never finishes
        "di": always(Plan(drop=True)),  # disconnects at the start, moves nothing
        "ed": always(Plan(moves=0, resign=True)),  # moves nothing: ties with di
        "fy": always(Plan(moves=5, leave=True)),  # disconnects after 5 moves, for good
    }
    bots = [TourBot([server_url], tid, n, tokens[n], plans[n]) for n in names]
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid, top=3))
        first = await watcher.expect(p.TourState)
        assert first.total == 6 and len(first.standings) == 3 and first.you is None
        status, data = await post_json(
            f"{server_url}/tournaments/{tid}/start", {"organiser_token": "x"}
        )
        assert status == 403 and data["error"]["code"] == "not_organiser"
        running = [asyncio.create_task(bot.run()) for bot in bots]
        status, _ = await post_json(
            f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser}
        )
        assert status == 200
        # Pause once round 1 is under way: it holds the tournament after round 1 (a pause
        # before the first round would hold that one).
        await wait_for(watcher, lambda s: s.tournament["round"] == 1 and s.tournament["racing"])
        await post_json(f"{server_url}/tournaments/{tid}/pause", {"organiser_token": organiser})
        await wait_for(watcher, lambda s: s.tournament["round"] == 1 and not s.tournament["racing"])
        status, data = await post_json(
            f"{server_url}/tournaments/{tid}/withdraw", {"token": tokens["cy"]}
        )
        assert status == 200 and data["player"]["status"] == "withdrawn"
        await post_json(f"{server_url}/tournaments/{tid}/resume", {"organiser_token": organiser})
        # Round 2 is under way once its heat's room is open ("live" lists open rooms only).
        state = await wait_for(
            watcher, lambda s: s.tournament["round"] == 2 and s.tournament["live"]
        )
        assert sorted(state.tournament["live"][0]["players"]) == ["ann", "bo", "di", "ed", "fy"]
        await post_json(f"{server_url}/tournaments/{tid}/pause", {"organiser_token": organiser})
        await wait_for(watcher, lambda s: s.tournament["round"] == 2 and not s.tournament["racing"])
        status, data = await post_json(
            f"{server_url}/tournaments/{tid}/return", {"token": tokens["cy"]}
        )
        assert status == 200 and data["player"]["status"] == "active"
        await post_json(f"{server_url}/tournaments/{tid}/resume", {"organiser_token": organiser})
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished")
        versions = [m.version for m in watcher.seen if isinstance(m, p.TourState)]
        assert versions == sorted(versions)
        await asyncio.gather(*running)

    status, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    assert status == 200
    rows = {row["name"]: row for row in doc["standings"]}
    assert final.standings == doc["standings"][:3]
    # ann and bo finished every round, ahead of the rest; cy raced rounds 1 and 3 only.
    assert {doc["standings"][0]["name"], doc["standings"][1]["name"]} == {"ann", "bo"}
    assert rows["ann"]["rounds"] == rows["bo"]["rounds"] == 3
    assert rows["cy"]["rounds"] == 2 and "2" not in rows["cy"]["per_round"]
    assert rows["cy"]["progress"] >= 0 and rows["cy"]["wins"] == 0
    # di (dropped) and ed (idle) reached nothing, at no time: they share places and points.
    assert rows["di"]["points"] == rows["ed"]["points"] and rows["di"]["rank"] == rows["ed"]["rank"]
    # They are last in round 1, sharing the last places with anyone else who reached
    # nothing: cy's 6 and fy's 5 moves of the solution may put no card up on some deals
    # (then four share places 3 to 6, 2.5 points each).
    firsts = [row["per_round"]["1"] for row in rows.values() if "1" in row["per_round"]]
    assert rows["di"]["per_round"]["1"] == min(firsts) <= 2.5
    # fy dropped after five moves, never came back, forfeited: kept its place and its moves.
    assert rows["fy"]["rounds"] == 3
    fy_races = [r for race in doc["races"] for r in race["results"] if r["name"] == "fy"]
    assert [r["moves"] for r in fy_races] == [5, 5, 5]
    assert rows["ann"]["wins"] + rows["bo"]["wins"] >= 3
    # Every round's deal, in the JSON, the CSV and the NDJSON.
    seeds = [r["seed"] for r in doc["tournament"]["deals"]]
    assert len(seeds) == 3 and all(isinstance(s, int) for s in seeds)
    _, text = await get_text(f"{server_url}/tournaments/{tid}/standings?format=csv")
    table = list(csv.reader(io.StringIO(text)))
    assert table[0][:3] == ["rank", "name", "status"]
    assert all(f"#{seed})" in " ".join(table[0]) for seed in seeds)
    assert [row[1] for row in table[1:]] == [r["name"] for r in doc["standings"]]
    # A round's cell holds the player's points in it; cy did not race round 2: empty.
    cells = {row[1]: row[8:] for row in table[1:]}
    assert cells["cy"][1] == "" and float(cells["cy"][0]) == rows["cy"]["per_round"]["1"]
    assert [float(c) for c in cells["ann"]] == list(rows["ann"]["per_round"].values())
    _, text = await get_text(f"{server_url}/tournaments/{tid}/standings?format=ndjson")
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["type"] == "tournament" and lines[0]["deals"] == doc["tournament"]["deals"]
    assert [x["name"] for x in lines if x["type"] == "standing"] == list(rows)
    assert {x["seed"] for x in lines if x["type"] == "race"} == set(seeds)

    # The standings again, from the replays alone.
    replays = []
    for race in doc["races"]:
        status, text = await get_text(f"{server_url}/tournaments/{tid}/replays/{race['heat']}")
        assert status == 200
        replays.append(text)
        status, room_text = await get_text(f"{server_url}/rooms/{race['room']}/replay")
        assert status == 200 and verify(room_text).results == verify(text).results
    ids = {row["name"]: row["player"] for row in doc["standings"]}
    assert recomputed_points(replays, ids) == {name: row["points"] for name, row in rows.items()}
