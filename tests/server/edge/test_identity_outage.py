"""The records' database refusing connections (PostgreSQL, really cut off): players'
requests and `identify` are answered `unavailable` (503, Retry-After), never a crash, and
work again once it is back."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest
from sqlalchemy.engine import make_url
from support.own_postgres import USER, OwnPostgres, lock_waited_on, table_locked
from support.players import call, new_player
from support.servers import MakeServer
from support.tcp_relay import tcp_relay
from support.wsclient import WsClient

import protocol as p
import records.engine as engine_module


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
