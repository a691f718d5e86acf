"""What operators read in the log: a line per connection opened and closed and per room
created, started and finished, at INFO, each naming the process (port and id); as JSON
with --log-format json."""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path

from support.http import create_room
from support.players import call, new_player
from support.ports import free_port
from support.server_processes import ServerProcess, environment
from support.wsclient import WsClient, race_alone

import protocol as p
from core.build import twins_present
from records.keys import hash_secret, normalise_link_code


async def a_short_race(url: str) -> str:
    room = (await create_room(url, seats=1, seed=3))["id"]
    async with WsClient.connect(url) as c:
        await race_alone(c, room)
        await c.send(p.Resign())
        await c.expect(p.RaceFinished)
    return room


async def test_json_lines_name_the_process_and_tell_the_room_s_life(
    redis_url: str, tmp_path: Path
) -> None:
    port = free_port()
    env = environment(REDIS_URL=redis_url)
    server = ServerProcess(port, env, "--log-format", "json", log=tmp_path / "server.log")
    await server.start()
    try:
        room = await a_short_race(server.url)
    finally:
        await server.stop()
    lines = [json.loads(line) for line in server.text().splitlines() if line.startswith("{")]
    assert lines and len(lines) == len(server.text().splitlines()) - 1  # all but "--- start"
    assert {line["port"] for line in lines} == {str(port)}
    # The process id exists once its app does: from the "serving" line on, every line has it.
    serving = next(i for i, line in enumerate(lines) if "serving on" in line["message"])
    process = lines[serving]["process"]
    assert len(process) == 10 and process in lines[serving]["message"]
    assert {line["process"] for line in lines[serving:]} == {process}
    messages = [line["message"] for line in lines if line["level"] == "INFO"]
    for expected in (
        f"room {room} created: shaula, 1 seats, seed 3",
        f"room {room} started: shaula, 1 racers",
        f"room {room} finished (",
        f"connection {process}-",
    ):
        assert any(m.startswith(expected) for m in messages), (expected, messages)
    opened = [m for m in messages if " opened from " in m]
    closed = [m for m in messages if " closed: code " in m]
    assert len(opened) == len(closed) == 1, messages
    assert opened[0].split()[1] == closed[0].split()[1]  # the same connection id
    assert {line["logger"] for line in lines} >= {"solrace.rooms", "solrace.connections"}


async def test_text_lines_name_the_port(redis_url: str, tmp_path: Path) -> None:
    port = free_port()
    env = environment(REDIS_URL=redis_url, SOLRACE_LOG_FORMAT="text")
    server = ServerProcess(port, env, log=tmp_path / "server.log")
    await server.start()
    try:
        await a_short_race(server.url)
    finally:
        await server.stop()
    lines = [line for line in server.text().splitlines() if line != "--- start"]
    assert lines and all(f" [{port}] " in line for line in lines), lines
    assert any("solrace.connections: connection " in line for line in lines)


async def test_the_startup_log_says_which_build_of_the_move_path_runs(
    redis_url: str, tmp_path: Path
) -> None:
    built = "move path: compiled (mypyc)" if twins_present() else "move path: pure Python (no"
    for pure, said in (("1", "move path: pure Python (SOLRACE_PURE_PYTHON"), ("", built)):
        env = environment(REDIS_URL=redis_url, SOLRACE_PURE_PYTHON=pure)
        server = ServerProcess(free_port(), env, log=tmp_path / f"server-{pure}.log")
        await server.start()
        await server.stop()
        assert said in server.text(), server.text()


async def test_the_startup_log_says_which_interpreter_runs(redis_url: str, tmp_path: Path) -> None:
    """The same code runs a third faster on one build of CPython than on another
    (scripts/pick-python): an operator reads which one a process runs from its log."""
    server = ServerProcess(free_port(), environment(REDIS_URL=redis_url), log=tmp_path / "s.log")
    await server.start()
    await server.stop()
    said = f"interpreter: {platform.python_implementation()} {platform.python_version()} "
    assert f"{said}({sys.executable})" in server.text(), server.text()


async def test_no_secret_nor_its_hash_in_the_log_at_debug(redis_url: str, tmp_path: Path) -> None:
    """At DEBUG the database driver's own lines gave every statement's parameters: the
    hashes of keys and link codes (an 8-character code's hash is quickly reversed) and the
    password's Argon2 hash."""
    env = environment(REDIS_URL=redis_url, SOLRACE_LOG_LEVEL="DEBUG")
    server = ServerProcess(free_port(), env, log=tmp_path / "server.log")
    await server.start()
    try:
        key, _ = await new_player(server.url, "dora")
        status, _, _ = await call(server.url, "POST", "/me/claim", {"password": "pa55 word"}, key)
        assert status == 200
        body = {"name": "dora", "password": "pa55 word"}
        status, signed, _ = await call(server.url, "POST", "/sign-in", body)
        assert status == 200
        status, linked, _ = await call(server.url, "POST", "/me/link", None, key)
        assert status == 201
        code = linked["code"]
        status, used, _ = await call(server.url, "POST", "/link", {"code": code})
        assert status == 200
    finally:
        await server.stop()
    text = server.text()
    assert " DEBUG " in text  # the level took
    normalised = normalise_link_code(code)
    assert normalised is not None
    for secret in (key, signed["key"], used["key"], code, normalised, "pa55 word"):
        assert secret not in text
        assert hash_secret(secret) not in text
    assert "$argon2" not in text
