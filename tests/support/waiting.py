"""Waiting in a test for something another task or process does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import aiohttp

__all__ = ["healthy", "until"]


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Return once `condition()` holds; fail the test if it does not within `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def healthy(url: str, seconds: float = 30.0) -> None:
    """Return once the server at `url` answers /healthz 200 (Redis answers it again)."""
    async with aiohttp.ClientSession() as http, asyncio.timeout(seconds):
        while True:
            async with http.get(f"{url}/healthz") as answer:
                if answer.status == 200:
                    return
            await asyncio.sleep(0.2)
