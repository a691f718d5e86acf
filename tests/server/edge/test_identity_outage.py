"""The records' database refusing connections (PostgreSQL, really cut off): players'
requests and `identify` are answered `unavailable` (503, Retry-After), never a crash, and
work again once it is back."""

from __future__ import annotations

import asyncio
import sqlite3

import asyncpg
import pytest
from sqlalchemy.engine import make_url
from support.http import create_room
from support.own_postgres import USER, OwnPostgres, lock_waited_on, table_locked
from support.players import call, new_player
from support.servers import MakeServer
from support.tcp_relay import tcp_relay
from support.wsclient import WsClient

import protocol as p
import records.engine as engine_module
from records.engine import ANSWER_WAIT
from server.metrics import RECORDS_DOWN

# Seconds within which a request that needs a database that does not answer is answered
# (records/engine.py: ANSWER_WAIT for a kept connection's check, then 2 s to drop it).
WITHIN = 10.0


async def cut(postgres: OwnPostgres, database: str, allow: bool) -> None:
    """Let the database take connections again, or refuse them and drop those it has."""
    conn = await asyncpg.connect(
        host="127.0.0.1", port=postgres.port, user=USER, database="postgres"
    )
    try:
        await conn.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS {str(allow).lower()}')
        if not allow:
            await conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
                database,
            )
    finally:
        await conn.close()


async def test_a_records_outage_is_unavailable_then_over(
    make_server: MakeServer, postgres: OwnPostgres
) -> None:
    url = await postgres.new_database()
    database = url.rsplit("/", 1)[1]
    base = await make_server(database_url=url)
    key, _ = await new_player(base, "ola")
    await cut(postgres, database, allow=False)
    try:
        status, body, headers = await call(base, "GET", "/me", key=key)
        assert status == 503 and body["error"]["code"] == "unavailable"
        assert headers["Retry-After"] == "1"
        status, body, _ = await call(base, "GET", "/players/ola")
        assert status == 503 and body["error"]["code"] == "unavailable"
        async with WsClient.connect(base) as ws:
            await ws.send(p.Identify(key=key))
            error = await ws.expect(p.Error)
            assert error.code == "unavailable" and error.request == "identify"
            await ws.send(p.Ping(id=1))
            await ws.expect(p.Pong)  # the socket lives on
    finally:
        await cut(postgres, database, allow=True)
    status, body, _ = await call(base, "GET", "/me", key=key)
    assert status == 200 and body["player"]["name"] == "ola"


async def test_a_records_database_that_is_stopped_is_unavailable_then_over(
    make_server: MakeServer, postgres: OwnPostgres
) -> None:
    """PostgreSQL stopped outright (its port refuses connections): 503 `unavailable`, not a
    400 as if the client had left; and served again once it is back."""
    url = await postgres.new_database()
    async with tcp_relay(postgres.port) as relay:
        through = make_url(url).set(port=relay.port).render_as_string(hide_password=False)
        base = await make_server(database_url=through)
        key, _ = await new_player(base, "ola")
        relay.cut()
        await relay.refuse()
        for path, sent in (("/me", key), ("/players/ola", None), ("/leaderboard/shaula", None)):
            status, body, headers = await call(base, "GET", path, key=sent)
            assert (status, body["error"]["code"]) == (503, "unavailable"), path
            assert headers["Retry-After"] == "1"
        status, body, _ = await call(base, "POST", "/players")
        assert (status, body["error"]["code"]) == (503, "unavailable")
        await relay.listen()
        status, body, _ = await call(base, "GET", "/me", key=key)
        assert status == 200 and body["player"]["name"] == "ola"


async def test_a_join_behind_an_identify_the_outage_kept_unchecked_is_unavailable(
    make_server: MakeServer, postgres: OwnPostgres
) -> None:
    """A client sends `identify` and its `join` (or `quick`) at once, as solrace's clients
    do. When the records' database could not check the key, the socket is nobody yet: its
    `join` and `quick` are answered `unavailable` (try again), never seated or queued
    anonymously, which would race the player unrated and out of their records. Once an
    `identify` is answered, they are the player's. A `join` with a seat's token comes back
    to that seat all the same."""
    url = await postgres.new_database()
    async with tcp_relay(postgres.port) as relay:
        through = make_url(url).set(port=relay.port).render_as_string(hide_password=False)
        base = await make_server(database_url=through)
        key, player = await new_player(base, "ola")
        room = (await create_room(base, game="shaula"))["id"]
        relay.cut()
        await relay.refuse()
        async with WsClient.connect(base) as ws:
            await ws.send(p.Identify(key=key))
            await ws.send(p.Join(room=room, name="ola"))
            await ws.send(p.QuickMatch(game="shaula"))
            answers = [await ws.expect(p.Error) for _ in range(3)]
            assert [(a.request, a.code) for a in answers] == [
                ("identify", "unavailable"),
                ("join", "unavailable"),
                ("quick", "unavailable"),
            ]
            assert not [m for m in await ws.quiet() if isinstance(m, p.Welcome | p.Queued)]
            await relay.listen()
            await ws.identify(key)
            welcome = await ws.join(room)
            assert welcome.seat == 0 and welcome.token is not None
            token = welcome.token
        # Coming back to a seat by its token needs no identity checked: a racer whose
        # socket dropped during the outage takes the seat back, and is not forfeited.
        relay.cut()
        await relay.refuse()
        async with WsClient.connect(base) as ws:
            await ws.send(p.Identify(key=key))
            await ws.send(p.Join(room=room, token=token))
            error = await ws.expect(p.Error)
            assert (error.request, error.code) == ("identify", "unavailable")
            assert (await ws.expect(p.Welcome)).seat == 0
        await relay.listen()
        status, body, _ = await call(base, "GET", f"/rooms/{room}")
        assert status == 200
        assert [s.get("player") for s in body["room"]["players"]] == [player["id"]]


async def test_a_records_database_too_slow_for_the_requests_is_unavailable(
    make_server: MakeServer, postgres: OwnPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every connection of the pool waiting on the database (a lock held, a database
    overloaded) and one more request: 503 `unavailable` once it has waited the pool's
    timeout, not a 500."""
    monkeypatch.setattr(engine_module, "POOL_SIZE", 1)
    monkeypatch.setattr(engine_module, "POOL_OVERFLOW", 0)
    monkeypatch.setattr(engine_module, "POOL_TIMEOUT", 0.5)
    url = await postgres.new_database()
    base = await make_server(database_url=url)
    await new_player(base, "ola")
    async with table_locked(postgres, url, "players", mode="ACCESS EXCLUSIVE"):
        first = asyncio.ensure_future(call(base, "GET", "/players/ola"))
        await lock_waited_on(postgres)
        status, body, headers = await call(base, "GET", "/players/ola")
        assert (status, body["error"]["code"]) == (503, "unavailable")
        assert headers["Retry-After"] == "1"
    status, _, _ = await first
    assert status == 200


async def _when_free(db: sqlite3.Connection, statement: str) -> None:
    """`statement` run on the test's own connection once the file is not locked."""
    async with asyncio.timeout(10):
        while True:
            try:
                db.execute(statement)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc):
                    raise
            await asyncio.sleep(0.05)


async def test_a_records_database_busy_writing_does_not_hold_up_identify(
    make_server: MakeServer, sqlite_url: str
) -> None:
    """A key's use is noted (`last_used_at`, once a minute) besides signing in: a write.
    While another writer holds the SQLite file (an archive, a migration, another process),
    `identify` is answered at once, as reads are, and not after the writer's wait and then
    `unavailable`; the use is noted once the file is free."""
    base = await make_server()
    key, player = await new_player(base, "ola")
    path = make_url(sqlite_url).database
    assert path is not None
    writer = sqlite3.connect(path, isolation_level=None, timeout=30)
    try:
        # Its use is due; then another writer, for longer than identify waits. (The server
        # may be opening its file as these are sent: a lock SQLite's busy wait does not
        # cover, as a connection's first pragmas take one, is waited out here.)
        await _when_free(writer, "UPDATE player_keys SET last_used_at = 0")
        await _when_free(writer, "BEGIN IMMEDIATE")
        async with WsClient.connect(base) as ws:
            await ws.send(p.Identify(key=key))
            identified = await ws.expect(p.Identified, timeout=3.0)
            assert identified.player["id"] == player["id"]
        writer.execute("ROLLBACK")
        async with asyncio.timeout(10):  # and its use is noted once the writer is gone
            while writer.execute("SELECT last_used_at FROM player_keys").fetchone()[0] == 0:
                await asyncio.sleep(0.1)
    finally:
        writer.close()


async def test_a_records_database_that_does_not_answer_is_unavailable_within_seconds(
    make_server: MakeServer, postgres: OwnPostgres, caplog: pytest.LogCaptureFixture
) -> None:
    """PostgreSQL that takes connections and answers nothing (a frozen server, a network
    partition, a host gone from the net: no refusal ever comes): what needs the records is
    answered 503 `unavailable` within seconds, as for a database stopped outright, not
    after a minute of silence; a socket's `identify` too, whose wait would hold up its
    `join` and its moves, and see the socket dropped as dead. Served again once it
    answers."""
    url = await postgres.new_database()
    async with tcp_relay(postgres.port) as relay:
        through = make_url(url).set(port=relay.port).render_as_string(hide_password=False)
        base = await make_server(database_url=through)
        key, _ = await new_player(base, "ola")
        relay.mode = "hold"  # new connections: accepted, never answered
        relay.freeze()  # the pool's: silent from now on
        for path, sent in (("/me", key), ("/players/ola", None), ("/leaderboard/shaula", None)):
            async with asyncio.timeout(WITHIN):
                status, body, headers = await call(base, "GET", path, key=sent)
            assert (status, body["error"]["code"]) == (503, "unavailable"), path
            assert body["error"]["message"] == RECORDS_DOWN  # not taken for Redis's
            assert headers["Retry-After"] == "1"
        # The log says why: no answer (a bare timeout would leave "failed: " and nothing).
        failed = [r.getMessage() for r in caplog.records if "database failed" in r.getMessage()]
        waited = f"no answer within {ANSWER_WAIT:g} s"
        assert failed and all(m.endswith(waited) for m in failed), failed
        async with asyncio.timeout(WITHIN), WsClient.connect(base) as ws:
            await ws.send(p.Identify(key=key))
            error = await ws.expect(p.Error, timeout=WITHIN)
            assert (error.request, error.code) == ("identify", "unavailable")
        relay.mode = "pass"
        relay.cut()
        async with asyncio.timeout(WITHIN):
            status, body, _ = await call(base, "GET", "/me", key=key)
        assert status == 200 and body["player"]["name"] == "ola"
