"""`solrace` as a player on a real server: whoami, name, claim, login on another machine,
link with a code, logout, profile; the key kept in a file only its user reads."""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
import time
from pathlib import Path

import pytest
from support.finished import archived_alone
from support.players import call
from support.signals import interruptible

from client_cli.identity import BOT, bot_kind, save_identity


async def solrace(
    server_url: str, home: Path, *words: str, stdin: str = "", columns: int = 120
) -> tuple[int, str]:
    """`solrace WORDS` on the machine whose state folder is `home`, in a terminal
    `columns` wide: status, output."""
    env = {**os.environ, "XDG_STATE_HOME": str(home), "NO_COLOR": "1", "COLUMNS": str(columns)}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "client_cli",
        "--server",
        server_url,
        *words,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env=env,
    )
    out, _ = await asyncio.wait_for(process.communicate(stdin.encode()), 60)
    assert process.returncode is not None
    return process.returncode, out.decode()


@pytest.mark.timeout(120)
async def test_a_player_from_the_terminal(server_url: str, tmp_path: Path) -> None:
    laptop, desk, phone = tmp_path / "laptop", tmp_path / "desk", tmp_path / "phone"
    status, out = await solrace(server_url, laptop, "whoami")
    assert status == 0 and out.startswith("Guest-") and "not claimed" in out
    kept = laptop / "solrace" / "players.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    entry = json.loads(kept.read_text())[server_url]["player"]
    player_id = entry["id"]

    status, out = await solrace(server_url, laptop, "name", "Zed_9")
    assert status == 0 and "you are Zed_9 now" in out
    status, out = await solrace(server_url, laptop, "name", "x y")
    assert status == 1 and "letters" in out
    status, out = await solrace(server_url, laptop, "claim", stdin="hunter2hunter2\n")
    assert status == 0 and "solrace login Zed_9" in out

    status, out = await solrace(server_url, desk, "whoami")  # a guest on the desk first
    desk_guest = json.loads((desk / "solrace" / "players.json").read_text())[server_url]
    status, out = await solrace(server_url, desk, "login", "zed_9", stdin="wrong password\n")
    assert status == 1 and "wrong password" in out
    status, _, _ = await call(server_url, "GET", "/me", key=desk_guest["player"]["key"])
    assert status == 200  # still the desk's
    status, out = await solrace(server_url, desk, "login", "zed_9", stdin="hunter2hunter2\n")
    assert status == 0 and f"signed in as Zed_9 (id {player_id}" in out
    # The guest's key, which the desk forgot, is signed out: nobody holds it any more.
    status, _, _ = await call(server_url, "GET", "/me", key=desk_guest["player"]["key"])
    assert status == 401

    status, out = await solrace(server_url, laptop, "link")
    code = re.search(r"solrace link ([A-Z0-9]{4}-[A-Z0-9]{4})", out)
    assert status == 0 and code is not None
    status, out = await solrace(server_url, phone, "link", code.group(1))
    assert status == 0 and "signed in as Zed_9" in out
    status, out = await solrace(server_url, phone, "link", code.group(1))
    assert status == 1 and "expired" in out  # used once

    status, out = await solrace(server_url, desk, "logout")
    assert status == 0 and "signed out" in out
    status, out = await solrace(server_url, desk, "whoami")
    assert status == 0 and out.startswith("Guest-")  # a new anonymous player
    status, out = await solrace(server_url, phone, "whoami")
    assert status == 0 and out.startswith("Zed_9")  # the other devices stay signed in

    status, out = await solrace(server_url, desk, "profile", "zed_9")
    assert status == 0 and "Zed_9" in out and "races 0, won 0" in out
    # No empty ratings table and no empty table of races: what the profile page says.
    assert "No rated races yet" in out and "No races yet" in out and "┏" not in out, out
    status, out = await solrace(server_url, desk, "profile", "nobody")
    assert status == 1 and "no player has that name" in out
    status, out = await solrace(server_url, desk, "top", "Shaula", "--period", "week")
    assert status == 0 and "shaula: ratings (week)" in out and "nobody yet" in out
    status, out = await solrace(server_url, desk, "top", "moojub", "--seed", "845")
    assert status == 0 and "best times on deal 845" in out and "nobody has won" in out


async def test_a_profile_names_each_race_for_solrace_replay(
    server_url: str, tmp_path: Path
) -> None:
    # In an 80-column terminal the replay's whole address did not fit: it was cut to
    # "http://12…", and the race's id (what `solrace replay` takes) was nowhere.
    status, _ = await solrace(server_url, tmp_path, "name", "ann")
    assert status == 0
    kept = json.loads((tmp_path / "solrace" / "players.json").read_text())
    key = kept[server_url]["player"]["key"]
    room = await archived_alone(server_url, key, moves=3)
    status, out = await solrace(server_url, tmp_path, "profile", columns=80)
    assert status == 0 and f"{room}.1" in out
    assert "solrace replay RACE" in out
    assert all(len(line) <= 80 for line in out.splitlines())


def test_a_bot_is_chosen_by_its_name_and_the_machines_own_keeps_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    server = "http://127.0.0.1:1"
    assert bot_kind(server, None) == BOT
    assert bot_kind(server, "Robo") == bot_kind(server, "robo") != BOT
    assert bot_kind(server, "droid") != bot_kind(server, "robo")
    # The machine's own bot, renamed by an earlier solrace: asked for by that name, it is
    # that bot, not a new one (which could not take the name: it is taken).
    save_identity(server, "key", {"id": "b1", "name": "Robo"}, BOT)
    assert bot_kind(server, "robo") == BOT
    assert bot_kind(server, "droid") != BOT


def test_a_profile_says_each_race_s_deltas_as_the_race_view_does() -> None:
    # One rule for a delta wherever it is shown (client_cli.widgets.delta_text): 250 ms is
    # +0.3 s (half a tenth away from zero, as the browser says it too, not the +0.2 of a
    # float rounded half to even), and 30 ms behind is level, ±0.0 s, not +0.0.
    from client_cli.account import _race_splits

    race = {"splits": [41200, 88030, 131900, 184520], "delta": [-3200, 250, 30, 0]}
    assert _race_splits(race) == "0:41.2 (-3.2 s) 1:28.0 (+0.3 s) 2:11.9 (±0.0 s) 3:04.5 (±0.0 s)"


def test_a_profile_says_what_each_race_was_and_its_rating_before_and_after() -> None:
    # As the profile page says them: a rated race's rating "1000 → 1022" (the new one alone
    # read as a rating with no change), and why a race moved none.
    from client_cli.account import _race_cell, _rating_cell

    rated = {"race": "r1.1", "kind": "quick", "rated": True}
    assert _race_cell(rated) == "r1.1"
    assert _race_cell({**rated, "kind": "room", "rated": False}) == "r1.1\ncasual"
    assert _race_cell({**rated, "kind": "ghost", "rated": False}) == "r1.1\nghost race"
    assert _race_cell({**rated, "kind": "daily", "rated": True}) == "r1.1\ndaily deal"
    assert _rating_cell({"rating_before": 1000, "rating_after": 1022}) == "1000 →\n1022"
    assert _rating_cell({"rating_before": None, "rating_after": None}) == "-"


def test_ctrl_c_at_the_password_prompt_stops_solrace_login(server_url: str) -> None:
    # The prompt was read inside the event loop, whose Ctrl+C handler only asks the loop to
    # stop: the prompt went on waiting for a password, and Ctrl+C did nothing until Enter.
    import fcntl
    import pty
    import select
    import subprocess
    import termios

    def terminal() -> None:  # the pty as the controlling terminal, as a user's is
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        interruptible()  # Ctrl+C at its default, whatever the suite was started with

    main_fd, sub_fd = pty.openpty()
    command = [sys.executable, "-m", "client_cli", "--server", server_url, "login", "ann"]
    process = subprocess.Popen(
        command,
        stdin=sub_fd,
        stdout=sub_fd,
        stderr=sub_fd,
        start_new_session=True,
        preexec_fn=terminal,
    )
    os.close(sub_fd)
    try:
        seen = b""
        deadline = time.monotonic() + 30
        while b"password of ann" not in seen and time.monotonic() < deadline:
            if select.select([main_fd], [], [], 0.2)[0]:
                seen += os.read(main_fd, 1024)
        assert b"password of ann" in seen, seen
        time.sleep(0.3)  # the prompt has turned echo off and reads
        os.write(main_fd, b"\x03")
        assert process.wait(timeout=10) == 130
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(main_fd)


async def test_claiming_before_choosing_a_name_says_how_in_the_terminals_words(
    server_url: str, tmp_path: Path
) -> None:
    # The server's reason names its HTTP request, "(POST /me/name)": not what to type here.
    status, out = await solrace(server_url, tmp_path, "claim", stdin="a password\n")
    assert status == 1 and "solrace name NAME" in out and "POST" not in out, out
