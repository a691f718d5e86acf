"""Arena and Knockout from registration to final results, with bots on a real server and
a real Redis: byes, a tie raced again on a new deal, a walkover after a withdrawal, a
player who never finishes, one who drops their connection, one who withdraws and returns;
the final standings checked against the races' replays."""

from __future__ import annotations

import asyncio
import csv
import io

from support.http import get_json, get_text, post_json
from support.tour_bots import (
    FINISH,
    Plan,
    TourBot,
    always,
    create,
    register,
    start_and_hold_after_round_one,
    wait_for,
)
from support.wsclient import WsClient

import protocol as p
from core.replay import verify
from server.tournament.scoring import RaceResult, arena_standings


async def test_a_knockout_with_byes_a_tie_and_a_walkover(server_url: str) -> None:
    # Time for the bots to reach each heat's room, told of it only once it opened (with
    # 0.2 s + 0.5 s of grace, under load a heat could end all forfeited before they came).
    tid, organiser = await create(server_url, format="knockout", time_limit=20, countdown=2.0)
    names = ["ann", "bo", "cy", "di", "ed"]  # 8 places: ann, bo, cy (seeds 1-3) get byes
    tokens = {name: await register(server_url, tid, name) for name in names}

    def di(round_: int, races: int) -> Plan:
        # Round 1 against ed: the first race both resign at once (a tie), then di wins;
        # round 2 against ann: di gives up after three moves.
        return [Plan(moves=0, resign=True), FINISH][races] if races < 2 else Plan(3, True)

    def ed(round_: int, races: int) -> Plan:
        return Plan(moves=0, resign=True) if races == 0 else Plan(moves=5, resign=True)

    plans = {
        "ann": always(FINISH),
        "bo": always(Plan(moves=8, resign=True)),  # never finishes
        "cy": always(FINISH),
        "di": di,
        "ed": ed,
    }
    bots = [TourBot([server_url], tid, n, tokens[n], plans[n]) for n in names]
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid))
        await watcher.expect(p.TourState)
        running = [asyncio.create_task(bot.run()) for bot in bots]
        await start_and_hold_after_round_one(server_url, tid, organiser, watcher)
        # cy (who meets bo in round 2) withdraws: a walkover for bo.
        status, _ = await post_json(
            f"{server_url}/tournaments/{tid}/withdraw", {"token": tokens["cy"]}
        )
        assert status == 200
        await post_json(f"{server_url}/tournaments/{tid}/resume", {"organiser_token": organiser})
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished")
        await asyncio.gather(*running)
    status, data = await post_json(
        f"{server_url}/tournaments/{tid}/return", {"token": tokens["cy"]}
    )
    assert status == 409 and data["error"]["code"] == "tournament_over"

    matches = final.tournament["matches"]
    assert [(m["round"], m["a"], m["b"], m["how"]) for m in matches if m["round"] == 1] == [
        (1, "ann", None, "bye"),
        (1, "di", "ed", "race"),
        (1, "bo", None, "bye"),
        (1, "cy", None, "bye"),
    ]
    assert [(m["a"], m["b"], m["winner"], m["how"]) for m in matches if m["round"] == 2] == [
        ("ann", "di", "ann", "race"),
        ("bo", "cy", "bo", "walkover"),
    ]
    assert [(m["a"], m["b"], m["winner"]) for m in matches if m["round"] == 3] == [
        ("ann", "bo", "ann")
    ]
    assert final.tournament["champion"] == "ann"
    _, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    races = doc["races"]
    tie, rerun = [r for r in races if r["players"] == ["di", "ed"]]
    assert tie["seed"] != rerun["seed"]
    for race in (tie, rerun):
        _, text = await get_text(f"{server_url}/tournaments/{tid}/replays/{race['heat']}")
        results = verify(text).results
        assert [r["progress"] for r in results] == [r["progress"] for r in race["results"]]
    assert [r["progress"] for r in tie["results"]] == [0, 0]  # equal: a new deal
    assert [(r["rank"], r["name"]) for r in doc["standings"]] == [
        (1, "ann"),
        (2, "bo"),
        (3, "di"),
        (4, "cy"),
        (5, "ed"),
    ]


async def test_an_arena_from_registration_to_results(server_url: str) -> None:
    tid, organiser = await create(
        server_url, format="arena", duration=6, wave=0.3, arena_heat=2, time_limit=15
    )
    names = ["ann", "bo", "cy", "di"]
    tokens = {name: await register(server_url, tid, name) for name in names}
    plans = {
        "ann": always(FINISH),
        "bo": always(FINISH),
        "cy": always(Plan(moves=4, resign=True)),  # never finishes
        "di": always(Plan(drop=True)),  # drops every race: abandoned heats
    }
    bots = [TourBot([server_url], tid, n, tokens[n], plans[n]) for n in names]
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid, token=tokens["cy"]))
        await watcher.expect(p.TourState)
        running = [asyncio.create_task(bot.run()) for bot in bots[:3]]
        di = asyncio.create_task(bots[3].run())
        await post_json(f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser})
        await wait_for(watcher, lambda s: s.tournament["round"] >= 2)
        status, _ = await post_json(
            f"{server_url}/tournaments/{tid}/withdraw", {"token": tokens["cy"]}
        )
        assert status == 200
        await asyncio.sleep(1.0)
        status, _ = await post_json(
            f"{server_url}/tournaments/{tid}/return", {"token": tokens["cy"]}
        )
        assert status == 200
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished", 90)
        await asyncio.gather(*running, di)
    assert final.you is not None and final.you["name"] == "cy"
    _, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    rows = {row["name"]: row for row in doc["standings"]}
    assert sum(row["heats"] for row in rows.values()) >= 4
    assert rows["di"]["score"] == 0 and rows["cy"]["wins"] == 0
    assert {doc["standings"][0]["name"]} <= {"ann", "bo"}
    # The scores again, from the replays alone, heat by heat in order.
    ids = {name: row["player"] for name, row in rows.items()}
    heats = []
    for race in sorted(doc["races"], key=lambda r: r["heat"]):
        _, text = await get_text(f"{server_url}/tournaments/{tid}/replays/{race['heat']}")
        checked = verify(text)
        assert checked.header["heat"] == race["heat"]
        heats.append(
            [
                RaceResult(
                    ids[r["name"]], r["won"], r["time"], r["progress"], r["reached"], r["moves"]
                )
                for r in checked.results
            ]
        )
    again = {row.player: row.score for _, row in arena_standings(list(ids.values()), heats)}
    assert again == {row["player"]: row["score"] for row in rows.values()}
    # The CSV: the standing's columns, then `races`: each heat of the player in order as
    # GAME#SEED:SCORE (the points it gave, doubled in a streak), separated by spaces.
    _, text = await get_text(f"{server_url}/tournaments/{tid}/standings?format=csv")
    reader = csv.DictReader(io.StringIO(text))
    table = {r["name"]: r for r in reader}
    assert reader.fieldnames == [
        "rank",
        "name",
        "status",
        "score",
        "wins",
        "heats",
        "progress",
        "streak",
        "races",
    ]
    for name, row in rows.items():
        mine = sorted((r for r in doc["races"] if name in r["players"]), key=lambda r: r["heat"])
        cells = [f"shaula#{r['seed']}:{s}" for r, s in zip(mine, row["scores"], strict=True)]
        assert table[name]["races"] == " ".join(cells)
        assert [table[name][k] for k in ("rank", "score")] == [str(row["rank"]), str(row["score"])]


async def test_a_knockout_match_nobody_comes_to_ends(server_url: str) -> None:
    # Neither player of a match ever comes: each race ends all forfeited, equal, and a new
    # deal alone would be raced for ever. After two such races in a row the better seed
    # (registered first) goes through, and the tournament ends.
    tid, organiser = await create(server_url, format="knockout", time_limit=30, grace=0.3)
    for name in ("ann", "bo"):
        await register(server_url, tid, name)
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid))
        await watcher.expect(p.TourState)
        await post_json(f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser})
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished", 30.0)
    (match,) = final.tournament["matches"]
    assert match["winner"] == "ann" and match["how"] == "walkover"
    assert final.tournament["champion"] == "ann"
    _, standings = await get_json(f"{server_url}/tournaments/{tid}/standings")
    races = standings["races"]
    assert len(races) == 2 and all(r["moves"] == 0 for race in races for r in race["results"])


async def test_a_knockout_final_won_by_a_player_who_withdrew_during_it(server_url: str) -> None:
    # ann withdraws once the final has begun and then wins its race: the race goes on and
    # is a race won, but a withdrawn player never goes through, so bo is the champion.
    # Seconds for the bots to reach the final's room, told of it only once it opened (with
    # 0.5 s + 0.5 s of grace, under load a racer could forfeit before it came).
    tid, organiser = await create(server_url, format="knockout", time_limit=60, countdown=2.0)
    tokens = {name: await register(server_url, tid, name) for name in ("ann", "bo")}
    plans = {"ann": always(Plan(pace=0.02)), "bo": always(Plan(moves=3, resign=True))}
    bots = [TourBot([server_url], tid, n, tokens[n], plans[n]) for n in ("ann", "bo")]
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid))
        await watcher.expect(p.TourState)
        running = [asyncio.create_task(bot.run()) for bot in bots]
        await post_json(f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser})
        await wait_for(watcher, lambda s: bool(s.tournament["live"]))
        status, data = await post_json(
            f"{server_url}/tournaments/{tid}/withdraw", {"token": tokens["ann"]}
        )
        assert (status, data["player"]["status"]) == (200, "withdrawn")
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished")
        await asyncio.gather(*running)
    _, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    (race,) = doc["races"]
    assert [(r["name"], r["won"]) for r in race["results"]] == [("ann", True), ("bo", False)]
    (match,) = final.tournament["matches"]
    assert (match["winner"], match["how"]) == ("bo", "walkover")
    assert final.tournament["champion"] == "bo"
    assert [(r["rank"], r["name"], r["wins"], r["out_round"]) for r in doc["standings"]] == [
        (1, "bo", 0, None),
        (2, "ann", 1, 1),
    ]


async def test_no_arena_heat_begins_after_its_end(server_url: str) -> None:
    # A heat races once its room's countdown is over (the replay's `started_at`). The
    # first heat is paired at the start and begins 3 s later; its racers resign at once,
    # and the next pairing falls within a countdown of the end: a heat paired then would
    # begin after it, so none is.
    tid, organiser = await create(
        server_url, format="arena", duration=6, wave=0.2, arena_heat=2, countdown=3.0
    )
    tokens = {name: await register(server_url, tid, name) for name in ("ann", "bo")}
    plan = always(Plan(moves=3, resign=True))
    bots = [TourBot([server_url], tid, n, tokens[n], plan) for n in tokens]
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid))
        await watcher.expect(p.TourState)
        running = [asyncio.create_task(bot.run()) for bot in bots]
        await post_json(f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser})
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished", 60)
        await asyncio.gather(*running)
    ends_at = final.tournament["ends_at"]
    _, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    starts = []
    for race in doc["races"]:
        _, text = await get_text(f"{server_url}/tournaments/{tid}/replays/{race['heat']}")
        starts.append(verify(text).header["started_at"])
    assert starts and all(start <= ends_at for start in starts), (starts, ends_at)
