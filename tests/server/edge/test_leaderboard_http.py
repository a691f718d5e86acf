"""GET /leaderboard/{game} on a real server, over races it archived itself."""

from __future__ import annotations

import re

import pytest
from support.finished import archived_replay, finish_identified_race
from support.http import create_room, get_json, get_text
from support.players import new_player
from support.servers import MakeServer
from support.wsclient import WsClient, race_alone

import core
import protocol as p

SEED = 1  # a Shaula deal the solver wins at once


async def _win_alone(server: str, key: str) -> str:
    """The player (by `key`) wins deal SEED alone in a room of one; the room's id."""
    room = (await create_room(server, seats=1, seed=SEED, countdown=0.1))["id"]
    solution = core.solve(core.new_game("shaula", SEED)).moves
    async with WsClient.connect(server) as client:
        await client.identify(key)
        await race_alone(client, room, name="")
        await client.play(solution)
        await client.expect(p.RaceFinished)
    return str(room)


async def test_the_best_time_on_a_deal_is_on_its_board(make_server: MakeServer) -> None:
    server = await make_server(rate_per_second=1000.0, rate_burst=1000.0)  # 200 moves at once
    key, ann = await new_player(server, "ann")
    room = await _win_alone(server, key)
    await archived_replay(server, f"{room}.1")
    status, board = await get_json(f"{server}/leaderboard/shaula?by=time&seed={SEED}&period=day")
    assert status == 200 and board["total"] == 1
    [row] = board["rows"]
    assert (row["rank"], row["player"], row["race"]) == (
        1,
        {"id": ann["id"], "name": "ann", "bot": False},
        f"{room}.1",
    )
    _, results = await get_json(f"{server}/rooms/{room}/results")
    assert row["time_ms"] == round(results["results"][0]["time"] * 1000)
    status, other = await get_json(f"{server}/leaderboard/shaula?by=time&seed={SEED + 1}")
    assert status == 200 and other["rows"] == []


async def test_best_times_and_ratings_boards(make_server: MakeServer) -> None:
    server = await make_server()
    keys, ids = [], []
    for name in ("ann", "bob"):
        key, player = await new_player(server, name)
        keys.append(key)
        ids.append(player["id"])
    room = await finish_identified_race([server], keys, [0, 1])
    await archived_replay(server, f"{room}.1")
    # Nobody won (both resigned): no time on the deal; one race leaves both provisional.
    _, room_view = await get_json(f"{server}/rooms/{room}")
    seed = room_view["room"]["seed"]
    status, board = await get_json(f"{server}/leaderboard/shaula?by=time&seed={seed}")
    assert status == 200 and (board["total"], board["rows"], board["seed"]) == (0, [], seed)
    status, board = await get_json(f"{server}/leaderboard/shaula?period=week&around={ids[0]}")
    assert status == 200 and board["by"] == "rating" and board["total"] == 0
    assert board["since"] is not None


@pytest.mark.parametrize(
    ("query", "code"),
    [
        ("by=speed", "bad_request"),
        ("period=year", "bad_request"),
        ("limit=0", "bad_request"),
        ("limit=many", "bad_request"),
        ("by=time", "bad_request"),
        ("by=time&seed=0", "bad_request"),
        # What Python's int() would read, but no number in a URL: not deal 617, not 10 rows.
        ("by=time&seed=6_1_7", "bad_request"),
        ("limit=1_0", "bad_request"),
        ("limit=%205", "bad_request"),
        ("offset=%D9%A3", "bad_request"),  # an Arabic-Indic 3
    ],
)
async def test_bad_queries_are_refused_with_a_code(server_url: str, query: str, code: str) -> None:
    status, body = await get_json(f"{server_url}/leaderboard/shaula?{query}")
    assert status == 400 and body["error"]["code"] == code


async def test_a_number_out_of_range_is_refused_with_its_range(server_url: str) -> None:
    """`offset=-1` is no whole number to the server's reading (digits only), but what the
    asker needs to hear is the range: the same message for both."""
    for query in ("offset=-1", "offset=x", "limit=1000"):
        status, body = await get_json(f"{server_url}/leaderboard/shaula?{query}")
        assert status == 400, body
        name = query.partition("=")[0]
        assert re.fullmatch(rf"{name} must be a whole number \d+\.\.\d+", body["error"]["message"])


async def test_an_unknown_game_has_no_board(server_url: str) -> None:
    status, body = await get_json(f"{server_url}/leaderboard/chess")
    assert status == 404 and body["error"]["code"] == "bad_game"


async def test_a_game_in_a_path_is_read_in_any_case(server_url: str) -> None:
    """As the daily deal's paths read it: `/leaderboard/Shaula` is Shaula's board, and
    `/games/SHAULA/rules` its rules."""
    status, lower = await get_json(f"{server_url}/leaderboard/shaula")
    assert status == 200
    for path in ("/leaderboard/Shaula", "/leaderboard/SHAULA"):
        status, body = await get_json(f"{server_url}{path}")
        assert status == 200 and body["game"] == "shaula" and body.keys() == lower.keys()
    status, text = await get_text(f"{server_url}/games/MooJub/rules")
    assert status == 200 and text == core.rules_text("moojub")
