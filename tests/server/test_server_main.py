"""`python -m server`: settings from options and environment, and real server processes."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import aiohttp
import pytest
from support.http import create_room, get_json
from support.own_postgres import OwnPostgres
from support.own_redis import OwnRedis
from support.paths import ROOT
from support.ports import free_port, port_open
from support.server_processes import environment, server_process
from support.wsclient import WsClient

import core
import protocol as p
from server.__main__ import build_parser, settings_from_args
from server.settings import FIELDS, Settings


def test_help_documents_every_setting_with_its_variable_and_default() -> None:
    text = " ".join(build_parser().format_help().split())
    for field in FIELDS:
        option = f"--{field.name.replace('_', '-')}"
        assert option in text
        assert Settings.env_name(field.name) in text
        assert f"default: {field.default}" in text
    assert "REDIS_URL" in text
    assert "--log-level" in text and "SOLRACE_LOG_LEVEL" in text  # not a Settings field


def test_the_log_level_comes_from_the_environment_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from server.__main__ import main

    monkeypatch.setenv("SOLRACE_LOG_LEVEL", "loud")
    with pytest.raises(SystemExit) as exc:
        main([])
    assert exc.value.code == 2 and "SOLRACE_LOG_LEVEL" in capsys.readouterr().err
    assert build_parser().parse_args(["--log-level", "debug"]).log_level == "DEBUG"


def test_an_option_wins_over_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SOLRACE_PORT", "PORT", "REDIS_URL", "SOLRACE_REDIS_URL", "SOLRACE_GRACE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SOLRACE_PORT", "9100")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:7000/0")
    parser = build_parser()
    from_env = settings_from_args(parser.parse_args([]))
    assert (from_env.port, from_env.redis_url, from_env.grace) == (
        9100,
        "redis://127.0.0.1:7000/0",
        Settings().grace,
    )
    given = settings_from_args(parser.parse_args(["--port", "9000", "--grace", "5"]))
    assert (given.port, given.grace) == (9000, 5.0)


def test_a_bad_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from server.__main__ import main

    with pytest.raises(SystemExit) as exc:
        main(["--port", "70000"])
    assert exc.value.code == 2
    assert "port must be 0..65535" in capsys.readouterr().err


async def test_without_redis_url_it_runs_its_own_redis_and_stops_it_on_sigterm(
    tmp_path: Path,
) -> None:
    port = free_port()
    data = tmp_path / "data"
    env = environment()
    del env["SOLRACE_DATABASE_URL"]  # as `make run`: the records in the data folder too
    async with server_process(port, env, "--data-dir", str(data)) as server:
        base = f"http://127.0.0.1:{port}"
        room = await create_room(base, seed=617)
        status, body = await get_json(f"{base}/rooms/{room['id']}")
        assert status == 200 and body["room"]["id"] == room["id"]
        holder = (data / "redis.lock").read_text()
        match = re.search(r"redis://127\.0\.0\.1:(\d+)/0", holder)
        assert match, holder
        redis_port = int(match.group(1))
        assert port_open(redis_port)
        assert (data / "appendonlydir").is_dir()
        assert (data / "records.sqlite3").is_file()
        server.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(server.wait(), 20) == 0
    assert not port_open(redis_port)
    assert not port_open(port)


async def test_two_processes_on_one_redis_serve_the_same_rooms(redis_url: str) -> None:
    first, second = free_port(), free_port()
    env = environment(REDIS_URL=redis_url)
    async with server_process(first, env), server_process(second, env):
        a, b = f"http://127.0.0.1:{first}", f"http://127.0.0.1:{second}"
        room = (await create_room(a, seed=617, seats=2))["id"]
        # Made on A, joined on B: both processes read and write the same Redis.
        async with WsClient.connect(b) as ann:
            welcome = await ann.join(room, "ann")
            assert (welcome.role, welcome.seat) == ("player", 0) and welcome.token
            status, body = await get_json(f"{a}/rooms/{room}")
            assert status == 200
            assert [player["name"] for player in body["room"]["players"]] == ["ann"]
            # A player on each process: ready on B, ready on A, the race starts on both.
            async with WsClient.connect(a) as bo:
                assert (await bo.join(room, "bo")).seat == 1
                await ann.send(p.Ready())
                await bo.send(p.Ready())
                assert (await ann.expect(p.RaceStarted)).seed == 617
                assert (await bo.expect(p.RaceStarted)).seed == 617


async def healthy(base: str) -> bool:
    try:
        status, _ = await get_json(f"{base}/healthz")
    except aiohttp.ClientError:
        return False
    return status == 200


def children(pid: int) -> list[int]:
    return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


async def test_a_race_goes_on_when_the_supervised_redis_server_is_killed(tmp_path: Path) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    async with server_process(port, environment(), "--data-dir", str(tmp_path)) as server:
        room = (await create_room(base, seed=617, seats=2))["id"]
        game = core.new_game("shaula", 617)
        async with WsClient.connect(base) as ann, WsClient.connect(base) as bo:
            await ann.join(room, "ann")
            await bo.join(room, "bo")
            await ann.send(p.Ready())
            await bo.send(p.Ready())
            await ann.expect(p.RaceStarted)
            first = game.legal_moves()[0]
            game.apply(first)
            await ann.send(p.Move(seq=1, move=first))
            assert (await ann.expect(p.Accepted)).moves == 1
            [redis_pid] = children(server.pid)
            os.kill(redis_pid, signal.SIGKILL)
            # The supervisor starts a new redis-server on the same port, from the AOF.
            deadline = asyncio.get_running_loop().time() + 15
            while children(server.pid) in ([], [redis_pid]) or not await healthy(base):
                assert asyncio.get_running_loop().time() < deadline, "no new redis-server"
                await asyncio.sleep(0.05)
            for seq in (2, 3):
                move = game.legal_moves()[0]
                game.apply(move)
                await ann.send(p.Move(seq=seq, move=move))
                accepted = await ann.expect(p.Accepted, timeout=15)
                assert (accepted.seq, accepted.moves) == (seq, seq)
            # The other racer hears of both, once pub/sub is back (what was published
            # while it was down is read from the room's log).
            seen = []
            while 3 not in seen:
                seen.append((await bo.expect(p.Progress, timeout=15)).moves)
            assert 2 in seen
        status, body = await get_json(f"{base}/rooms/{room}")
        assert status == 200 and body["room"]["players"][0]["moves"] == 3


async def server_on(redis_url: str, **env: str) -> tuple[int | None, str]:
    """`python -m server` on `redis_url`, run until it exits: its exit code and stderr."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "server",
        "--port",
        str(free_port()),
        cwd=ROOT,
        env=environment(REDIS_URL=redis_url, **env),
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 30)
    return process.returncode, err.decode()


async def test_a_redis_that_cannot_be_reached_is_one_clear_line_and_exit_1() -> None:
    dead = free_port()  # nothing listens there
    code, text = await server_on(f"redis://ann:s3cret@127.0.0.1:{dead}/0")
    assert code == 1
    assert f"cannot use the Redis at redis://ann:***@127.0.0.1:{dead}/0" in text
    assert "Traceback" not in text and "s3cret" not in text
    # Given as a query parameter (redis-py reads `password=` there too): masked the same.
    code, text = await server_on(f"redis://127.0.0.1:{dead}/0?password=s3cret&socket_timeout=1")
    assert code == 1 and "s3cret" not in text, text
    assert f"redis://127.0.0.1:{dead}/0?password=***&socket_timeout=1" in text, text


async def test_a_redis_without_functions_is_one_clear_line_and_exit_1(tmp_path: Path) -> None:
    """The scripts run as Redis Functions (Redis 7.0 or later). A Redis that does not know
    FUNCTION (an older one; here a Redis 7 with the command renamed away) stops the
    server at startup with a line that says what it needs."""
    data = tmp_path / "redis"
    data.mkdir()
    old = OwnRedis(data, "--rename-command", "FUNCTION", "")
    old.start()
    try:
        code, text = await server_on(old.url)
    finally:
        old.stop()
    assert code == 1
    assert "solrace needs Redis 7.0 or later" in text, text
    assert "Traceback" not in text


@pytest.mark.parametrize("wrong", ["role", "database"])
async def test_a_records_database_that_refuses_this_process_is_one_clear_line_and_exit_1(
    redis_url: str, postgres: OwnPostgres, wrong: str
) -> None:
    """A PostgreSQL that answers and will not have this process (a role or a database that
    is not there: a mistake in SOLRACE_DATABASE_URL, not an outage) stops the start with a
    line naming the database, its password masked, and no traceback."""
    url = postgres.url("no_such_db" if wrong == "database" else "postgres")
    if wrong == "role":
        url = url.replace("://solrace@", "://nobody_here:s3cret@", 1)
    code, text = await server_on(redis_url, SOLRACE_DATABASE_URL=url)
    assert code == 1, text
    assert "cannot use the records' database at postgresql+asyncpg://" in text, text
    assert "Traceback" not in text and "s3cret" not in text, text
