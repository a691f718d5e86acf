"""Live standings keep up: a change that lands while a push is being read is pushed too
(docs/protocol.md section 10, "Live standings"), on a real server, Redis and WebSocket."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from support.databases import scratch_database_url
from support.ports import free_port
from support.tour_bots import create, register, wait_for
from support.wsclient import WsClient

import protocol as p
from server.edge.app import create_app
from server.edge.http_server import Runner
from server.edge.tournament_keys import TOUR_LIVE
from server.settings import Settings
from server.tournament.machine import Tournament


class SlowRead:
    """The tournament store as the live pushes see it: the first read after `arm()`
    returns the state it read, but only after `during()` (another change) has been
    written and published: the order a push's read and a write can take on a busy
    process."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.during: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def load(self, tid: str) -> tuple[Tournament, int] | None:
        loaded = await self.store.load(tid)
        during, self.during = self.during, None
        if during is not None:
            await during()
            await asyncio.sleep(0.5)  # its message comes through the pub/sub feed meanwhile
        return loaded


@pytest.fixture
async def served(redis_url: str) -> AsyncIterator[tuple[str, web.Application]]:
    port = free_port()
    app = create_app(
        Settings(
            database_url=scratch_database_url(), host="127.0.0.1", port=port, redis_url=redis_url
        )
    )
    runner = Runner(app, shutdown_timeout=1.0)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    yield f"http://127.0.0.1:{port}", app
    await runner.cleanup()


async def test_a_change_written_while_a_push_is_read_is_pushed_too(
    served: tuple[str, web.Application],
) -> None:
    url, app = served
    tid, _ = await create(url)
    await register(url, tid, "ann")
    live = app[TOUR_LIVE]
    slow = SlowRead(live.store)
    live.store = slow
    async with WsClient.connect(url) as watcher:
        await watcher.send(p.TourWatch(tournament=tid))
        assert (await watcher.expect(p.TourState)).total == 1

        async def bo_registers() -> None:
            await register(url, tid, "bo")

        slow.during = bo_registers
        await register(url, tid, "cy")  # pushed; bo registers while that push is read
        state = await wait_for(watcher, lambda s: s.total == 3, timeout=5.0)
        assert sorted(row["name"] for row in state.standings) == ["ann", "bo", "cy"]
