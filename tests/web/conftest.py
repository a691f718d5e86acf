"""Browser tests: the distribution's headless Chromium, driven by Playwright for Python,
against a real race server process (`python -m server`) over the session's real Redis.

- `server`: a `ServerProcess` on a free port; `restart(kill=True)` SIGKILLs it and starts
  it again on the same port (rooms live in Redis, so races go on).
- `browser`: Chromium from /usr/bin (Playwright's own download is not available here).
Pages come from `web_support.new_page(browser)`: a fresh context (its own localStorage)
that records console errors, page errors and requests.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, async_playwright
from web_support import CHROMIUM, CHROMIUM_ARGS, ServerProcess


@pytest.fixture
async def server(redis_url: str, tmp_path: Path) -> AsyncIterator[ServerProcess]:
    proc = ServerProcess(redis_url, log=tmp_path / "server.log")
    await proc.start()
    yield proc
    await proc.stop()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: run `make test` (it installs chromium)")
    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        await chromium.close()
