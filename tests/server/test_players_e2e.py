"""A player's life on real servers (two `python -m server` processes on one Redis and one
records database): an anonymous player races a quick match, chooses a name, claims the
account, signs in on the other server as on another device, and finds the same history and
ratings there."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.paths import ROOT
from support.players import call, new_player
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.wsclient import WsClient

import core
import protocol as p


def documented_profile() -> dict[str, Any]:
    """The example of GET /players/{name} in docs/protocol.md."""
    doc = (ROOT / "docs" / "protocol.md").read_text()
    section = doc.split("### `GET /players/{name}`", 1)[1]
    block = re.search(r"```json\n(.*?)```", section, flags=re.S)
    assert block is not None
    return dict(json.loads(block.group(1)))


def same_keys(shown: dict[str, Any], documented: dict[str, Any]) -> None:
    assert set(shown) == set(documented)
    for key, value in documented.items():
        if isinstance(value, dict):
            same_keys(shown[key], value)
        elif isinstance(value, list) and value and isinstance(value[0], dict) and shown[key]:
            same_keys(shown[key][0], value[0])


async def profile_with_races(base: str, name: str, races: int) -> dict[str, Any]:
    """GET /players/NAME once its races are archived (a second or two after the end)."""
    async with asyncio.timeout(20):
        while True:
            status, body, _ = await call(base, "GET", f"/players/{name}")
            assert status == 200, body
            if len(body["races"]["items"]) >= races:
                return dict(body)
            await asyncio.sleep(0.2)


@pytest.mark.timeout(120)
async def test_an_anonymous_racer_claims_and_finds_the_same_record_elsewhere(
    redis_url: str, tmp_path: Path
) -> None:
    env = environment(SOLRACE_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path}/records.sqlite3")
    args = ("--redis-url", redis_url, "--countdown", "0.2")
    one = ServerProcess(free_port(), env, *args, log=tmp_path / "one.log")
    two = ServerProcess(free_port(), env, *args, log=tmp_path / "two.log")
    await one.start()
    await two.start()
    try:
        # Nothing filled in: a key at the first visit, a guest name.
        laptop, guest = await new_player(one.url)
        rival, _ = await new_player(two.url, "rival")
        async with WsClient.connect(one.url) as ann, WsClient.connect(two.url) as bo:
            for ws, key in ((ann, laptop), (bo, rival)):
                await ws.send(p.Identify(key=key))
                await ws.expect(p.Identified)
            await ann.send(p.QuickMatch(game="shaula"))
            await ann.expect(p.Queued)
            await bo.send(p.QuickMatch(game="shaula"))
            started = await ann.expect(p.RaceStarted)
            await bo.expect(p.RaceStarted)
            assert started.seed is not None
            first = core.new_game("shaula", started.seed).legal_moves()[0]
            await ann.send(p.Move(seq=1, move=first))
            await ann.expect(p.Accepted)
            await bo.send(p.Resign())
            await ann.send(p.Resign())
            finished = await ann.expect(p.RaceFinished)
        owners = {r["player"] for r in finished.results}
        assert guest["id"] in owners  # the result is the player's, not a typed name's
        before = await profile_with_races(one.url, guest["name"], 1)
        [race] = before["races"]["items"]
        assert race["kind"] == "quick" and race["rated"] and race["rating_after"] is not None
        [rating] = before["ratings"]
        assert rating["game"] == "shaula" and rating["races"] == 1

        # A name, then a password.
        status, _, _ = await call(one.url, "POST", "/me/name", {"name": "annie"}, laptop)
        assert status == 200
        status, _, _ = await call(
            one.url, "POST", "/me/claim", {"password": "a long secret"}, laptop
        )
        assert status == 200

        # Another device signs in through the other server: the same player and record.
        body = {"name": "Annie", "password": "a long secret", "label": "phone"}
        status, signed, _ = await call(two.url, "POST", "/sign-in", body)
        assert status == 200 and signed["player"]["id"] == guest["id"]
        status, me, _ = await call(two.url, "GET", "/me", key=signed["key"])
        assert me["player"]["name"] == "annie" and me["names"][0]["name"] == guest["name"]
        after = await profile_with_races(two.url, "annie", 1)
        assert after["races"] == before["races"] and after["stats"] == before["stats"]
        assert after["ratings"][0]["history"] == before["ratings"][0]["history"]
        assert after["ratings"][0]["rating"] == before["ratings"][0]["rating"]
        assert after["player"]["names"][0]["name"] == guest["name"]
        same_keys(after, documented_profile())  # what the docs say a client gets
        # No secret in a log line of either process.
        logs = one.text() + two.text()
        assert "new anonymous player" in logs  # the processes do log their players ...
        for secret in (laptop, rival, signed["key"], "a long secret"):
            assert secret not in logs  # ... by id, never by key or password
    finally:
        await one.stop()
        await two.stop()
