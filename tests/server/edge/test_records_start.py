"""A process started while the records' database cannot be reached (PostgreSQL restarting,
or started after the servers; an SQLite file that cannot be opened) serves at once what
needs no records: races, quick matches of anonymous players, watching. What needs the
records is answered 503 `unavailable` meanwhile; the schema is brought up in the
background, saying so in one WARNING line and one once it is done, and from then on
everything works with no restart, the races finished meanwhile archived once. Real
processes behind the shipped balancer, a real PostgreSQL behind a relay that refuses."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import asyncpg
import sqlalchemy as sa
from sqlalchemy.engine import make_url
from support.finished import finish_race
from support.fleet import fleet
from support.http import create_room, get_json, get_text
from support.own_postgres import USER, OwnPostgres
from support.players import call
from support.ports import free_port
from support.records import migrated
from support.server_processes import ServerProcess, environment
from support.tcp_relay import tcp_relay
from support.wsclient import WsClient

import protocol as p
from records.migrate import MIGRATION_LOCK
from records.schema import race_results, races

AWAY = "the records' database cannot be reached"
BACK = "the records' database is reached"
LIFECYCLE = "server.edge.records_lifecycle: "  # the logger of the lines that say so
# The pool's bookkeeping (disposed, recreated, a connection invalidated): SQLAlchemy's
# own, below WARNING, is no line of the server's log.
POOL = "_Pool: "


async def _without_records(base: str) -> None:
    """What needs the records is refused `unavailable`, at once, with a code."""
    async with asyncio.timeout(5):
        status, body, headers = await call(base, "POST", "/players", {})
    assert status == 503 and body["error"]["code"] == "unavailable", body
    assert headers["Retry-After"] == "1"
    status, health = await get_json(f"{base}/healthz")
    assert status == 200 and health["ok"] is True, health  # it serves races
    assert AWAY in health["records"], health  # and says what it cannot serve
    status, daily = await get_json(f"{base}/daily")  # the deals come of the records' secret
    assert status == 503 and daily["error"]["code"] == "unavailable", daily
    async with WsClient.connect(base) as ws:
        await ws.send(p.Identify(key="k" * 32))
        error = await ws.expect(p.Error)
        assert error.code == "unavailable" and error.request == "identify", error


async def _quick_match(base: str) -> None:
    """Two anonymous players paired by a quick match, and a spectator of their room."""
    async with WsClient.connect(base) as ann, WsClient.connect(base) as bo:
        await ann.send(p.QuickMatch(game="shaula", name="ann"))
        await ann.expect(p.Queued)
        await bo.send(p.QuickMatch(game="shaula", name="bo"))
        matched = await ann.expect(p.Matched)
        await bo.expect(p.Matched)
        async with WsClient.connect(base) as eve:
            await eve.send(p.Watch(room=matched.room))
            await eve.expect(p.Welcome)


async def _with_records(base: str) -> None:
    async with asyncio.timeout(20):
        while True:
            status, body, _ = await call(base, "POST", "/players", {})
            if status == 201:
                break
            assert status == 503 and body["error"]["code"] == "unavailable", body
            await asyncio.sleep(0.2)
    key = body["key"]
    status, me, _ = await call(base, "GET", "/me", key=key)
    assert status == 200 and me["player"]["id"] == body["player"]["id"], me
    async with asyncio.timeout(20), WsClient.connect(base) as ws:
        while True:  # through a balancer, on a process that may reach them a second later
            await ws.send(p.Identify(key=key))
            answer = await ws.expect_any((p.Identified, p.Error))
            if isinstance(answer, p.Identified):
                break
            assert answer.code == "unavailable", answer
            await asyncio.sleep(0.2)
        assert answer.player["id"] == body["player"]["id"]


async def _archived(base: str, race: str) -> None:
    """Until the archive serves the race's replay (503 while the records are away, 404
    while they are back but the race not archived yet)."""
    async with asyncio.timeout(20):
        while (status := (await get_text(f"{base}/races/{race}/replay"))[0]) != 200:
            assert status in (404, 503), status
            await asyncio.sleep(0.1)


async def _archived_once(url: str, room: str) -> None:
    async with migrated(url) as engine, engine.connect() as conn:
        count = sa.select(sa.func.count())
        assert await conn.scalar(count.select_from(races).where(races.c.room == room)) == 1
        mine = race_results.c.race_id == f"{room}.1"
        assert await conn.scalar(count.select_from(race_results).where(mine)) == 2


def _blocked_sqlite(redis_url: str, tmp_path: Path) -> tuple[ServerProcess, Path, str]:
    """A server whose SQLite file cannot be opened until `blocker` is gone: a file where
    the database's folder should be (an operator's mistake, a disk not mounted yet)."""
    blocker = tmp_path / "records"
    blocker.write_text("not a folder")
    url = f"sqlite+aiosqlite:///{blocker}/records.sqlite3"
    env = environment(REDIS_URL=redis_url, SOLRACE_DATABASE_URL=url)
    return ServerProcess(free_port(), env, log=tmp_path / "server.log"), blocker, url


async def test_a_fleet_started_while_postgresql_is_down_races_then_archives_once(
    redis_url: str, postgres: OwnPostgres, tmp_path: Path
) -> None:
    url = await postgres.new_database()
    async with tcp_relay(postgres.port) as relay:
        await relay.refuse()
        through = make_url(url).set(port=relay.port).render_as_string(hide_password=False)
        async with fleet(redis_url, tmp_path, SOLRACE_DATABASE_URL=through) as running:
            try:
                await _without_records(running.front)
                room = await finish_race(running.front)
                await _quick_match(running.front)
                await asyncio.sleep(2.5)  # several tries of the schema, of the archive
                status, _ = await get_json(f"{running.front}/races/{room}.1/replay")
                assert status == 503  # not yet: the records are away
                await relay.listen()
                await _archived(running.front, f"{room}.1")
                await _with_records(running.front)
                for server in running.servers:
                    status, health = await get_json(f"{server.url}/healthz")
                    assert status == 200 and "records" not in health, health
                await asyncio.sleep(2.0)  # every process's archive had its turn
                await _archived_once(url, room)
            finally:
                print(running.logs())
            for server in running.servers:
                log = server.text()
                assert log.count(LIFECYCLE + AWAY) == 1 and log.count(LIFECYCLE + BACK) == 1, log
                assert "Traceback" not in log, log
                assert POOL not in log, log


@contextlib.asynccontextmanager
async def _serving(server: ServerProcess) -> AsyncIterator[None]:
    """The process up for the block, then stopped: at once and cleanly, its background
    tries ending with it."""
    try:
        await server.start(limit=20)
        yield
    finally:
        await server.stop(limit=5)
        print(server.text())
    assert server.process is not None and server.process.returncode == 0
    assert "Traceback" not in server.text() and "destroyed" not in server.text()
    assert POOL not in server.text()


async def test_an_sqlite_file_that_cannot_be_opened_yet_is_waited_for_while_serving(
    redis_url: str, tmp_path: Path
) -> None:
    server, blocker, url = _blocked_sqlite(redis_url, tmp_path)
    async with _serving(server):
        await _without_records(server.url)
        room = await finish_race(server.url)
        made = await create_room(server.url, seats=1)
        status, _ = await get_json(f"{server.url}/rooms/{made['id']}")
        assert status == 200
        blocker.unlink()
        await _archived(server.url, f"{room}.1")
        await _with_records(server.url)
        await _archived_once(url, room)
        status, daily = await get_json(f"{server.url}/daily")
        assert status == 200 and daily["commitment"], daily
    log = server.text()
    assert log.count(LIFECYCLE + AWAY) == 1 and log.count(LIFECYCLE + BACK) == 1, log


async def test_a_process_stopped_before_the_records_are_reached_stops_at_once(
    redis_url: str, tmp_path: Path
) -> None:
    server, _, _ = _blocked_sqlite(redis_url, tmp_path)
    async with _serving(server):
        await asyncio.sleep(1.5)  # a try of the schema in the background, or its wait


async def test_a_migration_held_up_by_another_process_serves_races_meanwhile(
    redis_url: str, postgres: OwnPostgres, tmp_path: Path
) -> None:
    """The database answers, but the migration waits (another process holds the
    migration's lock, migrating slowly): the start waits for it a few seconds
    (`FIRST_TRY`), then serves races without the records, the migration going on; once
    it is done, the records are served."""
    url = await postgres.new_database()
    holder = await asyncpg.connect(
        host="127.0.0.1", port=postgres.port, user=USER, database=url.rsplit("/", 1)[1]
    )
    try:
        await holder.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
        env = environment(REDIS_URL=redis_url, SOLRACE_DATABASE_URL=url)
        server = ServerProcess(free_port(), env, log=tmp_path / "server.log")
        async with _serving(server):
            assert "no answer within" in server.text()
            await _without_records(server.url)
            room = await finish_race(server.url)
            await holder.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)
            await _archived(server.url, f"{room}.1")
            await _with_records(server.url)
        log = server.text()
        assert log.count(LIFECYCLE + AWAY) == 1 and log.count(LIFECYCLE + BACK) == 1, log
    finally:
        await holder.close()
