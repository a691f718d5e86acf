"""A profile's splits from archived races (real server, real Redis, SQLite records): the
best run's splits, the best segments and their sum, and each race's delta to the best."""

from __future__ import annotations

import asyncio
import os
import sys

from support.finished import archived_replay
from support.http import create_room, get_json, post_json
from support.players import new_player
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p
from client_cli.widgets import split_clock
from core import splits

SEED = 617


async def test_a_profile_shows_the_splits_of_its_archived_races(make_server: MakeServer) -> None:
    url = await make_server(rate_per_second=1000.0, rate_burst=1000.0)
    key, player = await new_player(url)
    name = player["name"]
    room = (await create_room(url, seed=SEED, seats=1))["id"]
    line = core.solve(core.new_game("shaula", SEED)).moves
    async with WsClient.connect(url) as ann:
        await ann.identify(key)
        await race_alone(ann, room, name="")
        await ann.play(line)
        finished = await ann.expect(p.RaceFinished)
    await archived_replay(url, f"{room}.1")
    status, profile = await get_json(f"{url}/players/{name}")
    assert status == 200
    recorded = [round(s * 1000) for s in finished.results[0]["splits"]]
    [shaula] = profile["splits"]
    assert shaula["best"] == recorded and shaula["race"] == f"{room}.1"
    assert shaula["best_segments"] == splits.segments(recorded)
    assert shaula["sum_of_best"] == recorded[-1]  # one race: its own segments
    [item] = profile["races"]["items"]
    assert item["splits"] == recorded and item["delta"] == [0, 0, 0, 0]
    # A ghost of one's own best: this very race.
    mine = {"Authorization": f"Bearer {key}"}
    status, body = await post_json(f"{url}/rooms", {"ghost": "best", "game": "shaula"}, mine)
    assert status == 201 and body["room"]["ghost"] == f"{room}.1"
    status, body = await post_json(f"{url}/rooms", {"ghost": "best", "game": "moojub"}, mine)
    assert status == 404 and "no moojub win" in body["error"]["message"]
    status, body = await post_json(f"{url}/rooms", {"ghost": "best", "game": "shaula"})
    assert status == 401 and body["error"]["code"] == "bad_key"
    # The terminal shows the same: `solrace profile NAME`.
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "220", "XDG_STATE_HOME": "/nonexistent"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_cli",
        "--server",
        url,
        "profile",
        name,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    text = out.decode()
    assert process.returncode == 0, text
    shown = [split_clock(s / 1000) for s in recorded]
    assert "sum of best" in text and all(cell in text for cell in shown)
    assert "(±0.0 s)" in text  # the delta of the best run to itself
