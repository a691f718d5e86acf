"""`solrace tournament ...` against a real server: the organiser creates and starts it, two
bots join and race every round, the standings are printed (table, CSV) and watched; and
the race screen of a tournament's race shows the standings beside the board."""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
import re
import sys

import pytest
from support.client_screen import screen_text
from support.http import get_json, post_json
from support.tour_bots import create, register
from textual.pilot import Pilot

from client_cli.__main__ import main
from client_cli.account import ensure_player
from client_cli.bot import play_race
from client_cli.commands import _request
from client_cli.identity import BOT, bot_kind, load_identity, save_identity
from client_cli.seat import Seat
from client_cli.tournament import Follow, recall_token
from client_cli.tournament_app import TourRaceApp


@pytest.fixture(autouse=True)
def _state(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))


async def solrace(server_url: str, *argv: str) -> int:
    return await asyncio.to_thread(main, ["--server", server_url, "--no-color", *argv])


async def solrace_process(server_url: str, *argv: str) -> asyncio.subprocess.Process:
    """`solrace` as a process of its own: a bot that plays a whole tournament can be killed
    when the test fails (a thread running it could not be, and kept the test's loop from
    closing for as long as the bot went on)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        *("-m", "client_cli", "--server", server_url, "--no-color", *argv),
        stdout=asyncio.subprocess.PIPE,
    )


@pytest.mark.timeout(360)
async def test_create_join_with_the_bot_start_standings_and_watch(
    server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        await solrace(
            server_url,
            *("tournament", "create", "cli cup", "--rounds", "2", "--countdown", "0.2"),
            *("--pause", "0.2", "--time-limit", "60", "--spectator-delay", "0"),
        )
        == 0
    )
    out = capsys.readouterr().out
    tid = re.search(r"tournament (\w+) created", out).group(1)  # type: ignore[union-attr]
    assert recall_token(server_url, tid, "organiser")
    bots = [
        await solrace_process(
            server_url, "tournament", "join", tid, "--name", name, "--bot", "--pace", "0.02"
        )
        for name in ("robo", "tron")
    ]
    try:
        await _play_through(server_url, tid, bots, capsys)
    finally:
        for bot in bots:
            with contextlib.suppress(ProcessLookupError):
                bot.kill()
            await bot.wait()


async def _play_through(
    server_url: str,
    tid: str,
    bots: list[asyncio.subprocess.Process],
    capsys: pytest.CaptureFixture[str],
) -> None:
    await registered(server_url, tid, 2)
    assert await solrace(server_url, "tournament", "withdraw", tid, "--name", "tron") == 0
    seen = capsys.readouterr().out
    assert "tron is now withdrawn" in seen
    assert await solrace(server_url, "tournament", "return", tid, "--name", "tron") == 0
    seen += capsys.readouterr().out
    assert "tron is now active" in seen
    assert await solrace(server_url, "tournament", "start", tid) == 0
    seen += capsys.readouterr().out
    outputs = await asyncio.wait_for(asyncio.gather(*(b.communicate() for b in bots)), 300)
    assert [b.returncode for b in bots] == [0, 0]
    seen += "".join(out.decode() for out, _ in outputs)
    assert "registered in" in seen and "finished in" in seen and "champion" not in seen

    assert await solrace(server_url, "tournament", "standings", tid, "--format", "csv") == 0
    csv_text = capsys.readouterr().out
    assert csv_text.startswith("rank,name,status,points") and "robo" in csv_text
    assert await solrace(server_url, "tournament", "standings", tid) == 0
    table = capsys.readouterr().out
    assert "cli cup" in table and "tron" in table and "deals: round 1" in table
    assert await solrace(server_url, "tournament", "watch", tid) == 0  # over: shown, done
    assert "finished" in capsys.readouterr().out
    assert await solrace(server_url, "tournament", "pause", tid, "--token", "wrong") == 1
    assert "not this tournament's organiser token" in capsys.readouterr().err


async def test_withdraw_and_return_without_a_name_are_those_of_this_machines_player(
    server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `join` without --name registers this machine's player; `withdraw` without it looked
    # for a registration under the system's login name and said none was made here.
    tid = await created(server_url, "own cup", capsys)
    joined = await solrace_process(server_url, "tournament", "join", tid)  # (no race: no screen)
    try:
        await registered(server_url, tid, 1)
        assert await solrace(server_url, "tournament", "withdraw", tid) == 0
        assert "is now withdrawn" in capsys.readouterr().out
        assert await solrace(server_url, "tournament", "return", tid) == 0
        assert "is now active" in capsys.readouterr().out
    finally:
        with contextlib.suppress(ProcessLookupError):
            joined.kill()
        await joined.wait()


async def test_the_bot_registers_as_a_bot_player_of_this_machine(
    server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `join --bot` registered anonymously (or as this machine's human player, rated, the
    # solver racing under their name): the standings showed no bot, where the bot is shown
    # as one everywhere and never rated (README); and `--name robo --bot` on a machine whose
    # bot robo raced already (`solrace bot ROOM --name robo`) was refused name_taken.
    kind = bot_kind(server_url, "robo")
    robo = await ensure_player(server_url, kind)
    named = await _request("POST", server_url, "/me/name", {"name": "robo"}, key=robo.key)
    save_identity(server_url, robo.key, named["player"], kind)
    tid = await created(server_url, "bot cup", capsys)
    bots = [
        await solrace_process(server_url, "tournament", "join", tid, *name, "--bot")
        for name in (["--name", "robo"], [])
    ]
    try:
        await registered(server_url, tid, 2)
        _, data = await get_json(f"{server_url}/tournaments/{tid}/standings")
        rows = {row["name"]: row for row in data["standings"]}
        assert "robo" in rows and all(row["bot"] for row in rows.values()), rows
        machines_bot = load_identity(server_url, BOT)
        assert machines_bot is not None and machines_bot["name"] in rows, rows
    finally:
        for bot in bots:
            with contextlib.suppress(ProcessLookupError):
                bot.kill()
            await bot.wait()


async def test_withdraw_and_return_with_bot_are_those_of_this_machines_bot(
    server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `join --bot` registers this machine's bot (Bot-NNNN): withdraw and return had no way
    # to name that registration but its generated name.
    tid = await created(server_url, "bot own cup", capsys)
    joined = await solrace_process(server_url, "tournament", "join", tid, "--bot")
    try:
        await registered(server_url, tid, 1)
        bot = load_identity(server_url, BOT)
        assert bot is not None
        assert await solrace(server_url, "tournament", "withdraw", tid, "--bot") == 0
        assert f"{bot['name']} is now withdrawn" in capsys.readouterr().out
        assert await solrace(server_url, "tournament", "return", tid, "--bot") == 0
        assert f"{bot['name']} is now active" in capsys.readouterr().out
    finally:
        with contextlib.suppress(ProcessLookupError):
            joined.kill()
        await joined.wait()


async def test_the_organisers_actions_say_the_tournaments_state_in_words(
    server_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # "pause: done; the tournament is registration (paused)" read as a slip.
    tid = await created(server_url, "word cup", capsys)
    assert await solrace(server_url, "tournament", "pause", tid) == 0
    out = capsys.readouterr().out
    assert "pause: done; the tournament is open for registration (paused)" in out, out
    assert await solrace(server_url, "tournament", "resume", tid) == 0
    assert "resume: done; the tournament is open for registration\n" in capsys.readouterr().out


async def registered(server_url: str, tid: str, players: int) -> None:
    """Wait until the tournament has that many players registered."""
    for _ in range(200):
        _, data = await get_json(f"{server_url}/tournaments/{tid}")
        if data["tournament"]["players"] == players:
            return
        await asyncio.sleep(0.05)


async def created(server_url: str, name: str, capsys: pytest.CaptureFixture[str]) -> str:
    """A tournament `solrace tournament create NAME` made (its token kept here): its id."""
    assert await solrace(server_url, "tournament", "create", name) == 0
    out = capsys.readouterr().out
    return re.search(r"tournament (\w+) created", out).group(1)  # type: ignore[union-attr]


async def until(pilot: Pilot[object], done: object, timeout: float = 90.0) -> None:
    async with asyncio.timeout(timeout):
        while not done():  # type: ignore[operator]
            await pilot.pause(0.05)


async def test_the_race_screen_shows_the_standings_beside_the_race(server_url: str) -> None:
    # Ann's socket opens only once her feed names her room, which can be after the race
    # started on a loaded machine: the quick settings' half-second grace forfeited her.
    tid, organiser = await create(server_url, name="screen cup", rounds=1, time_limit=60, grace=30)
    token = await register(server_url, tid, "ann")
    robot_token = await register(server_url, tid, "robot")
    await post_json(f"{server_url}/tournaments/{tid}/start", {"organiser_token": organiser})
    follow = Follow(server_url, tid, token=token)
    follow.link.start()
    robot_follow = Follow(server_url, tid, token=robot_token)
    robot_follow.link.start()
    try:
        async with asyncio.timeout(30):  # each follow learns its room from its own feed
            while follow.room is None:
                await follow.next()
            while robot_follow.room is None:
                await robot_follow.next()
        robot = asyncio.create_task(
            play_race(Seat(server_url, robot_follow.room, "robot", token=robot_token), 0.05, print)
        )
        seat = Seat(server_url, follow.room, "ann", token=token)
        app = TourRaceApp(seat, follow)
        async with app.run_test(size=(140, 30)) as pilot:
            await until(pilot, lambda: "screen cup" in screen_text(app))
            shown = screen_text(app)
            assert "robot" in shown and "ann (you)" in shown
            await until(pilot, lambda: seat.view.phase == "running")
            await pilot.press(*"resign", "enter")
            # The robot wins, the race and the tournament end: the screen closes itself.
            await until(pilot, lambda: not app.is_running, 120)
        await asyncio.wait_for(robot, 30)
    finally:
        await follow.link.close()
        await robot_follow.link.close()
