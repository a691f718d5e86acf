"""Browser tests: the distribution's headless Chromium, driven by Playwright for Python,
against a real race server process (`python -m server`) over the session's real Redis.

One Chromium serves every test of a module (starting it was a large part of a short
test's time); each test still gets its own pages, in contexts of its own closed at its
end, and its own server (with its own records: a player's name is taken for good):
- `server`: the test's `ServerProcess` (tests/support/server_processes.py) on a free
  port: `kill()` it and `start()` it again on the same port (rooms live in Redis, so races
  go on).
- `browser`: the module's Chromium from /usr/bin (Playwright's own download is not
  available here); the contexts a test opened are closed when it ends.
- `quiet_server`: a server of the test's own on a Redis database no other server uses.
Pages come from `support.web.new_page(browser)`: a fresh context (its own localStorage)
that records console errors, page errors and requests.

Every coroutine test of this folder runs on its module's event loop, the loop its module's
Chromium and server live on: `pytest_pycollect_makeitem` below marks each one so (a test
module needs no mark of its own). On several workers a module's tests all run on one
(tests/conftest.py's `pytest_xdist_make_scheduler`).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Generator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from playwright.async_api import Browser, async_playwright
from support.ports import free_port
from support.server_processes import ServerProcess, environment

from bench.browser import CHROMIUM, launch_chromium


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> Generator[None, Any, None]:
    """A coroutine test of this folder runs on its module's event loop. Innermost (trylast):
    the mark is on the item before pytest-asyncio reads it."""
    outcome = yield
    found = outcome.get_result()
    items = found if isinstance(found, list) else [found]
    for item in items:
        if (
            isinstance(item, pytest.Function)
            and inspect.iscoroutinefunction(item.obj)
            and item.get_closest_marker("asyncio") is None
        ):
            item.add_marker(pytest.mark.asyncio(loop_scope="module"))


async def _server(redis_url: str, log: Path) -> AsyncIterator[ServerProcess]:
    # Records of the test's own: the players' names a test's pages choose are free.
    records = f"sqlite+aiosqlite:///{log.parent}/records.sqlite3"
    proc = ServerProcess(
        free_port(),
        environment(SOLRACE_DATABASE_URL=records),
        "--redis-url",
        redis_url,
        "--countdown",
        "1",
        log=log,
    )
    await proc.start()
    yield proc
    await proc.stop()


@pytest_asyncio.fixture(loop_scope="module")
async def server(redis_url: str, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    async for proc in _server(redis_url, tmp_path / "server.log"):
        yield proc


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_browser() -> AsyncIterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make test` (it installs chromium)")
    async with async_playwright() as pw:
        chromium = await launch_chromium(pw)
        yield chromium
        await chromium.close()


@pytest_asyncio.fixture(loop_scope="module")
async def browser(module_browser: Browser) -> AsyncIterator[Browser]:
    yield module_browser
    for context in list(module_browser.contexts):  # this test's pages, sockets and all
        await context.close()


@pytest_asyncio.fixture(loop_scope="module")
async def quiet_server(redis_url: str, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    """A server on a Redis database of its own (`redis_url` empties every database before
    the test): no room the test's other server runs is there (the TV page chooses among
    every running room)."""
    url = redis_url.rsplit("/", 1)[0] + "/9"
    async for proc in _server(url, tmp_path / "server.log"):
        yield proc
