"""A Rounds round raced in several heats is one race on one deal: on a real server and a
real Redis, a heat that has finished while another heat still races that deal is in no
standings or export, and its line (every copy of its replay, its boards, a watch of its
finished room) is held back until the round is over; then it all opens at once
(docs/tournaments.md)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from support.http import get_json, get_text, post_json
from support.players import new_player
from support.tour_bots import create, register
from support.wsclient import WsClient

import protocol as p
from records.archive import race_id

HELD = 403  # `not_yet`: what the round's end opens


async def _tournament(server_url: str, tid: str) -> dict[str, Any]:
    status, doc = await get_json(f"{server_url}/tournaments/{tid}")
    assert status == 200, doc
    tour: dict[str, Any] = doc["tournament"]
    return tour


async def _until(test: Any, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not await test():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.1)


async def _race_and_resign(server_url: str, room: str, token: str) -> p.RaceFinished:
    """Take up the seat, wait for the start, resign, and read the race's end."""
    async with WsClient.connect(server_url) as ws:
        await ws.send(p.Join(room=room, token=token))
        await ws.expect(p.Welcome)
        snapshot = await ws.expect(p.Snapshot)
        if snapshot.room["status"] != "running":
            await ws.expect(p.RaceStarted, timeout=20)
        await ws.send(p.Resign())
        return await ws.expect(p.RaceFinished, timeout=20)


async def _start_in_two_heats(
    server_url: str, tid: str, organiser: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Start a three-player tournament of two seats a room: its lone heat, its pair."""
    status, started = await post_json(
        f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser}
    )
    assert status == 200, started

    async def heats_open() -> bool:
        return len((await _tournament(server_url, tid))["live"]) == 2

    await _until(heats_open)
    live = (await _tournament(server_url, tid))["live"]
    (solo,) = [h for h in live if len(h["players"]) == 1]
    (pair,) = [h for h in live if len(h["players"]) == 2]
    return solo, pair


async def _watch_answer(server_url: str, room: str) -> p.Message:
    async with WsClient.connect(server_url) as ws:
        await ws.send(p.Watch(room=room, since=0))
        return await ws.expect_any((p.Welcome, p.Error))


async def test_a_finished_heat_shows_nothing_until_its_round_is_over(server_url: str) -> None:
    tid, organiser = await create(
        server_url, rounds=1, seats=2, time_limit=120, countdown=0.5, grace=60
    )
    tokens = {name: await register(server_url, tid, name) for name in ("ann", "bo", "cy")}
    solo, pair = await _start_in_two_heats(server_url, tid, organiser)
    for heat in (solo, pair):  # no replay while it is raced, as any race's
        for url in (
            f"{server_url}/rooms/{heat['room']}/replay",
            f"{server_url}/rooms/{heat['room']}/replay/boards",
            f"{server_url}/tournaments/{tid}/replays/{heat['heat']}",
        ):
            status, text = await get_text(url)
            assert status == 409, (url, status, text)
            assert json.loads(text)["error"]["code"] == "not_finished"
    await _race_and_resign(server_url, solo["room"], tokens[solo["players"][0]])

    async def solo_recorded() -> bool:
        return [h["heat"] for h in (await _tournament(server_url, tid))["live"]] == [pair["heat"]]

    await _until(solo_recorded)
    archived = f"{server_url}/races/{race_id(solo['room'], 1)}/replay"

    async def solo_archived() -> bool:
        status, _ = await get_text(archived)
        return status != 404

    await _until(solo_archived)

    # The other heat still races the deal: nothing of the lone heat's race anywhere.
    tour = await _tournament(server_url, tid)
    assert tour["deals"] == [] and tour["racing"]
    status, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    assert status == 200 and doc["races"] == []
    assert [(r["points"], r["rounds"], r["per_round"]) for r in doc["standings"]] == [
        (0.0, 0, {})
    ] * 3
    for fmt in ("csv", "ndjson"):
        status, text = await get_text(f"{server_url}/tournaments/{tid}/standings?format={fmt}")
        assert status == 200 and '"race"' not in text and "round 1" not in text, text
    held = [
        f"{server_url}/tournaments/{tid}/replays/{solo['heat']}",
        f"{server_url}/rooms/{solo['room']}/replay",
        f"{server_url}/rooms/{solo['room']}/replay/boards",
        archived,
        f"{archived}/boards",
    ]
    for url in held:
        status, text = await get_text(url)
        code = json.loads(text)["error"]["code"] if status == HELD else None
        assert code == "not_yet", (url, status, text)
    answer = await _watch_answer(server_url, solo["room"])
    assert isinstance(answer, p.Error) and answer.code == "not_yet", answer

    # The round ends: all of it opens.
    await asyncio.gather(
        *(_race_and_resign(server_url, pair["room"], tokens[name]) for name in pair["players"])
    )

    async def over() -> bool:
        return (await _tournament(server_url, tid))["status"] == "finished"

    await _until(over)
    tour = await _tournament(server_url, tid)
    (deal,) = tour["deals"]
    status, doc = await get_json(f"{server_url}/tournaments/{tid}/standings")
    assert sorted(r["heat"] for r in doc["races"]) == sorted([solo["heat"], pair["heat"]])
    assert {r["seed"] for r in doc["races"]} == {deal["seed"]}
    # One race of three, nobody moved: all three share the places, 2 points each.
    assert [(r["points"], r["per_round"]) for r in doc["standings"]] == [(2.0, {"1": 2.0})] * 3
    for url in held:
        status, text = await get_text(url)
        assert status == 200, (url, status, text)
    answer = await _watch_answer(server_url, solo["room"])
    assert isinstance(answer, p.Welcome), answer


async def test_a_hidden_deal_raced_in_heats_keeps_its_seed_until_the_round_is_over(
    server_url: str,
) -> None:
    # Moojub's seed gives away its talon: a heat that ends while another still races the
    # deal must not give it, in its room, its `finished`, its results or a profile.
    tid, organiser = await create(
        server_url,
        game="moojub",
        winnable=False,  # the solver's search for a deal would hold this process's loop
        rounds=1,
        seats=2,
        time_limit=120,
        countdown=0.5,
        grace=60,
    )
    keys = {name: (await new_player(server_url, name))[0] for name in ("ann", "bo", "cy")}
    tokens = {}
    for name, key in keys.items():
        status, body = await post_json(
            f"{server_url}/tournaments/{tid}/players", {}, {"Authorization": f"Bearer {key}"}
        )
        assert status == 201, body
        tokens[name] = body["token"]
    solo, pair = await _start_in_two_heats(server_url, tid, organiser)
    (alone,) = solo["players"]
    finished = await _race_and_resign(server_url, solo["room"], tokens[alone])
    assert finished.seed is None
    race = f"{solo['room']}.1"

    async def archived() -> bool:
        _, profile = await get_json(f"{server_url}/players/{alone}")
        return race in [item["race"] for item in profile["races"]["items"]]

    await _until(archived)
    _, room = await get_json(f"{server_url}/rooms/{solo['room']}")
    _, results = await get_json(f"{server_url}/rooms/{solo['room']}/results")
    _, profile = await get_json(f"{server_url}/players/{alone}")
    (item,) = [i for i in profile["races"]["items"] if i["race"] == race]
    assert room["room"]["status"] == "finished"
    assert (room["room"]["seed"], results["seed"], item["seed"]) == (None, None, None)

    await asyncio.gather(
        *(_race_and_resign(server_url, pair["room"], tokens[name]) for name in pair["players"])
    )

    async def over() -> bool:
        return (await _tournament(server_url, tid))["status"] == "finished"

    await _until(over)
    (deal,) = (await _tournament(server_url, tid))["deals"]
    _, profile = await get_json(f"{server_url}/players/{alone}")
    (item,) = [i for i in profile["races"]["items"] if i["race"] == race]
    assert item["seed"] == str(deal["seed"])  # the round is over: published
