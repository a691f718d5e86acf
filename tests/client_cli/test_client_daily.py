"""`solrace daily` against a real server: today's deals, an attempt started (said first),
the board, and a second ranked attempt refused with the reason and what to do instead."""

from __future__ import annotations

import asyncio
import json
from datetime import date, timedelta
from pathlib import Path

import pytest
from support.finished import won_daily_attempt
from support.players import new_player
from support.servers import MakeServer
from support.wsclient import WsClient

import protocol as p
from client_cli.__main__ import main
from client_cli.daily import _daily, start_attempt, streaks_text
from client_cli.replay import load_replay


async def test_the_daily_command(
    make_server: MakeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))  # this machine's player, kept here
    monkeypatch.setenv("NO_COLOR", "1")
    url = await make_server()
    assert await asyncio.to_thread(main, ["--server", url, "daily"]) == 0
    out = capsys.readouterr().out
    assert "Daily deals" in out and "not yet" in out and "commitment" in out
    # Not started without a yes: the rule is said first.
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert await asyncio.to_thread(main, ["--server", url, "daily", "shaula"]) == 0
    out = capsys.readouterr().out
    assert "Undo" in out and "does not stop" in out and "not started" in out
    answer = await asyncio.to_thread(asyncio.run, start_attempt(url, "shaula", False))
    assert answer["ranked"] and answer["room"]["status"] == "running"
    async with WsClient.connect(url) as socket:
        await socket.join(answer["room"]["id"], token=answer["token"])
        await socket.send(p.Resign())
        await socket.expect(p.RaceFinished)
    assert await asyncio.to_thread(main, ["--server", url, "daily", "shaula", "--board"]) == 0
    out = capsys.readouterr().out
    assert "Shaula" in out and answer["room"]["id"] in out  # its replay, now open to me
    # ... in `solrace replay` too, which asks as this machine's player.
    assert "shaula" in await load_replay(url, answer["room"]["id"])
    code = await asyncio.to_thread(main, ["--server", url, "daily", "shaula", "--yes"])
    assert code == 1
    err = capsys.readouterr().err
    # What to do instead, in the terminal's words (not the HTTP request's).
    assert "is over" in err and "solrace daily shaula --practice" in err and "POST" not in err


@pytest.fixture
async def url(make_server: MakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A server, this machine's player kept in tmp_path, no colours."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    monkeypatch.setenv("NO_COLOR", "1")
    return await make_server()


async def test_the_board_says_each_winning_time_to_the_millisecond_it_ranks_by(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Said in whole seconds, two wins a few ms apart read alike (0:05, 0:05) in two places.
    key, player = await new_player(url)
    won = (await won_daily_attempt(url, key)).results[0]
    assert won["won"] and won["time"] is not None
    ms = round(won["time"] * 1000)
    said = f"{ms // 60000}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"
    board = ["--server", url, "daily", "shaula", "--board"]
    async with asyncio.timeout(15):  # on the board within seconds of its end
        while player["name"] not in (out := await said_by(board, capsys)):
            await asyncio.sleep(0.3)
    assert said in out, out
    assert said in await said_by(["--server", url, "daily"], capsys)  # the leader's line


async def test_the_board_counts_the_attempts_racing_and_unranked_as_the_daily_page_does(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # An empty table alone said neither that one attempt is under way nor why it is empty.
    await asyncio.to_thread(asyncio.run, start_attempt(url, "stalactites", False))
    out = await said_by(["--server", url, "daily", "stalactites", "--board"], capsys)
    assert "0 ranked, 1 racing now" in out and "No attempt is over yet" in out, out
    today = (await asyncio.to_thread(asyncio.run, _daily(url)))["date"]
    yesterday = (date.fromisoformat(today) - timedelta(days=1)).isoformat()
    words = ["--server", url, "daily", "moojub", "--board", "--date", yesterday]
    out = await said_by(words, capsys)
    assert "0 ranked" in out and "Nobody was ranked that day" in out, out


async def test_a_profile_asks_as_this_machines_player_who_sees_its_daily_deal(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A daily deal's number is the player's to see once their attempt is over; asked
    # without the key, the profile's best time on it said "None" for the deal.
    await said_by(["--server", url, "whoami"], capsys)
    key = json.loads((tmp_path / "solrace" / "players.json").read_text())[url]["player"]["key"]
    finished = await won_daily_attempt(url, key)
    assert finished.seed is not None
    async with asyncio.timeout(15):  # archived within seconds of its end
        while "best times" not in (out := await said_by(["--server", url, "profile"], capsys)):
            await asyncio.sleep(0.3)
    assert str(finished.seed) in out and "None" not in out, out


async def said_by(words: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What `solrace WORDS` printed (it succeeded)."""
    assert await asyncio.to_thread(main, words) == 0
    return capsys.readouterr().out


def test_one_card_and_one_move_are_said_in_the_singular() -> None:
    from client_cli.daily import _attempt_text, _row_text

    one = {"name": "ann", "finished": True, "won": False, "time": None, "progress": 1}
    assert _attempt_text({**one, "moves": 1, "ranked": True}) == "1 card up"
    assert _row_text({**one, "moves": 1}) == "ann: 1 card, 1 move"
    assert _row_text({**one, "progress": 2, "moves": 2}) == "ann: 2 cards, 2 moves"


def test_a_bot_s_row_is_said_to_be_a_bot_s() -> None:
    from client_cli.daily import _row_text

    row = {"name": "Bot-1", "won": True, "time": 0.081, "progress": 52, "moves": 99}
    assert _row_text({**row, "bot": True}) == "Bot-1 (bot): 0:00.081, 99 moves"
    assert _row_text({**row, "bot": False}) == "Bot-1: 0:00.081, 99 moves"


def test_the_streaks_are_said_as_the_daily_page_says_them() -> None:
    """In words, as server/edge/web/daily.js says them: no "0 won", no "day(s)"."""
    assert streaks_text({"played": 0, "won": 0}) == (
        "No streak running: an attempt today starts one."
    )
    assert streaks_text({"played": 1, "won": 0}) == (
        "Your streaks: 1 day in a row played; no day won in a row yet."
    )
    assert streaks_text({"played": 4, "won": 2}) == (
        "Your streaks: 4 days in a row played; 2 days in a row won."
    )
