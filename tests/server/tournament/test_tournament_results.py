"""Results exactly as docs/tournaments.md states them, on a real server and a real Redis:
a removed player ranked last without a hole in the ranks, a walkover that is no race won,
a bye in the last round shown in the bracket, and one replay per race whichever URL serves
it; each time the standings recomputed from the replays (and the public bracket) alone."""

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
    recomputed_knockout,
    recomputed_rounds,
    register,
    start_and_hold_after_round_one,
    wait_for,
)
from support.wsclient import WsClient

import protocol as p
from core.replay import line_hash


def assert_competition_ranks(rows: list[dict[str, object]], key: tuple[str, ...]) -> None:
    """Ranks 1, 2, 2, 4...: a row's rank is its position unless it equals the row above on
    every column of `key` (and on being removed), when it shares that row's rank."""
    for position, row in enumerate(rows, start=1):
        above = rows[position - 2] if position > 1 else None
        same = (
            above is not None
            and (above["status"] == "removed") == (row["status"] == "removed")
            and all(above[k] == row[k] for k in key)
        )
        assert row["rank"] == (above["rank"] if same and above else position), rows


async def test_a_removed_player_is_ranked_last_leaving_no_hole(server_url: str) -> None:
    tid, organiser = await create(server_url, rounds=2, time_limit=60, countdown=2.0)
    plans = {
        "ann": always(FINISH),  # the strongest: removed after round 1
        "bo": always(Plan(moves=12, resign=True)),
        "cy": always(Plan(moves=4, resign=True)),
        "di": always(Plan(moves=0, resign=True)),
    }
    tokens = {name: await register(server_url, tid, name) for name in plans}
    bots = [TourBot([server_url], tid, n, tokens[n], plans[n]) for n in plans]
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid))
        await watcher.expect(p.TourState)
        running = [asyncio.create_task(bot.run()) for bot in bots]
        await start_and_hold_after_round_one(server_url, tid, organiser, watcher)
        status, _ = await post_json(
            f"{server_url}/tournaments/{tid}/remove",
            {"organiser_token": organiser, "player": "ann"},
        )
        assert status == 200
        await post_json(f"{server_url}/tournaments/{tid}/resume", {"organiser_token": organiser})
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished")
        await asyncio.gather(*running)

    status, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    assert status == 200
    rows = doc["standings"]
    assert rows[-1]["name"] == "ann" and rows[-1]["status"] == "removed"
    assert rows[-1]["per_round"] == {"1": 4.0}  # ann won round 1, of four
    assert rows[0]["rank"] == 1 and rows[-1]["rank"] == 4
    assert_competition_ranks(rows, ("points", "wins", "time", "progress"))
    ranks = [(r["rank"], r["name"]) for r in rows]
    # The same ranks pushed live and in every export.
    assert [(r["rank"], r["name"]) for r in final.standings] == ranks
    _, text = await get_text(f"{server_url}/tournaments/{tid}/standings?format=csv")
    table = list(csv.reader(io.StringIO(text)))
    assert [(int(r[0]), r[1]) for r in table[1:]] == ranks
    _, text = await get_text(f"{server_url}/tournaments/{tid}/standings?format=ndjson")
    lines = [json.loads(line) for line in text.splitlines()]
    assert [(x["rank"], x["name"]) for x in lines if x["type"] == "standing"] == ranks

    # From the replays alone (and who was removed, which the standings say).
    replays = []
    for race in doc["races"]:
        status, replay = await get_text(f"{server_url}/tournaments/{tid}/replays/{race['heat']}")
        assert status == 200
        replays.append(replay)
    ids = {r["name"]: r["player"] for r in rows}
    again = recomputed_rounds(replays, ids, removed={"ann"})
    assert again == {r["name"]: (r["rank"], r["points"]) for r in rows}


async def test_walkovers_are_no_races_won_and_a_last_round_bye_is_in_the_bracket(
    server_url: str,
) -> None:
    # Five players, a bracket of 8: ann, bo, cy (seeds 1-3) have byes; di meets ed, and
    # neither moves in two races: di, the better seed, goes through by walkover. Between
    # rounds bo and cy (who meet in round 2) both withdraw: nobody goes through there, so
    # after ann beats di the final is ann's bye. Out in round 2 with no race won, di, bo
    # and cy share second place.
    # Seconds for the bots to reach each heat's room, told of it only once it opened (with
    # 1 s + 0.5 s of grace, under load a bot could forfeit a race it is to play: ann hers
    # against di).
    tid, organiser = await create(
        server_url, format="knockout", time_limit=20, countdown=2.0, grace=0.5
    )

    def di(round_: int, races: int) -> Plan:
        return Plan(drop=True) if races < 2 else Plan(moves=3, resign=True)

    plans = {
        "ann": always(FINISH),
        "bo": always(FINISH),
        "cy": always(FINISH),
        "di": di,
        "ed": always(Plan(drop=True)),
    }
    tokens = {name: await register(server_url, tid, name) for name in plans}
    bots = [TourBot([server_url], tid, n, tokens[n], plans[n]) for n in plans]
    async with WsClient.connect(server_url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid))
        await watcher.expect(p.TourState)
        running = [asyncio.create_task(bot.run()) for bot in bots]
        await start_and_hold_after_round_one(server_url, tid, organiser, watcher)
        for name in ("bo", "cy"):
            status, _ = await post_json(
                f"{server_url}/tournaments/{tid}/withdraw", {"token": tokens[name]}
            )
            assert status == 200
        await post_json(f"{server_url}/tournaments/{tid}/resume", {"organiser_token": organiser})
        final = await wait_for(watcher, lambda s: s.tournament["status"] == "finished")
        await asyncio.gather(*running)

    matches = final.tournament["matches"]
    shown = [(m["round"], m["a"], m["b"], m["winner"], m["how"]) for m in matches]
    assert shown == [
        (1, "ann", None, "ann", "bye"),
        (1, "di", "ed", "di", "walkover"),
        (1, "bo", None, "bo", "bye"),
        (1, "cy", None, "cy", "bye"),
        (2, "ann", "di", "ann", "race"),
        (2, "bo", "cy", None, "walkover"),
        (3, "ann", None, "ann", "bye"),  # 4, 2 and 1 matches: the whole bracket of 8
    ]
    assert final.tournament["champion"] == "ann"
    status, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    rows = doc["standings"]
    assert [(r["rank"], r["name"], r["wins"], r["out_round"]) for r in rows] == [
        (1, "ann", 1, None),
        (2, "bo", 0, 2),
        (2, "cy", 0, 2),
        (2, "di", 0, 2),  # through round 1 by walkover: no race won
        (5, "ed", 0, 1),
    ]
    _, text = await get_text(f"{server_url}/tournaments/{tid}/standings?format=csv")
    reader = csv.DictReader(io.StringIO(text))
    table = {r["name"]: r for r in reader}
    assert reader.fieldnames == ["rank", "name", "status", "wins", "out_round", "races"]
    assert table["di"]["wins"] == "0" and ":won" not in table["di"]["races"]
    # Each finished race of the player, in order, GAME#SEED:WHAT, separated by spaces.
    deals = [f"shaula#{r['seed']}" for r in doc["races"]]
    assert table["di"]["races"] == " ".join(
        f"{d}:{w}" for d, w in zip(deals, ["tie", "tie", "lost"], strict=True)
    )
    assert table["ann"]["races"] == f"{deals[2]}:won" and table["bo"]["races"] == ""
    assert table["ann"]["out_round"] == "" and table["ed"]["out_round"] == "1"

    # From the replays alone, with the public bracket for byes and walkovers.
    replays = []
    for race in doc["races"]:
        status, replay = await get_text(f"{server_url}/tournaments/{tid}/replays/{race['heat']}")
        assert status == 200
        replays.append(replay)
    assert len(replays) == 3  # di and ed twice, ann and di once
    ids = {r["name"]: r["player"] for r in rows}
    again = recomputed_knockout(replays, doc["tournament"]["matches"], ids)
    assert again == {r["name"]: (r["rank"], r["wins"]) for r in rows}


async def test_a_tournament_race_has_one_replay_whichever_url_serves_it(server_url: str) -> None:
    tid, organiser = await create(server_url, rounds=1, time_limit=30, countdown=1.0)
    plans = {"ann": always(Plan(moves=3, resign=True)), "bo": always(Plan(moves=1, resign=True))}
    tokens = {name: await register(server_url, tid, name) for name in plans}
    bots = [TourBot([server_url], tid, n, tokens[n], plans[n]) for n in plans]
    running = [asyncio.create_task(bot.run()) for bot in bots]
    await post_json(f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser})
    await asyncio.gather(*running)
    _, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    (race,) = doc["races"]
    status, by_room = await get_text(f"{server_url}/rooms/{race['room']}/replay")
    assert status == 200
    status, by_tour = await get_text(f"{server_url}/tournaments/{tid}/replays/{race['heat']}")
    assert status == 200
    assert by_room == by_tour
    status, boards = await get_json(f"{server_url}/rooms/{race['room']}/replay/boards")
    assert status == 200 and boards["replay_hash"] == line_hash(by_room.splitlines()[-1])
    header = json.loads(by_room.splitlines()[0])
    assert (header["tournament"], header["round"], header["heat"]) == (tid, 1, race["heat"])
