"""Waiting in a test for something another task or process does."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

import aiohttp

__all__ = ["answers_healthy", "healthy", "until", "until_true"]


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


async def until_true(what: str, check: Callable[[], Awaitable[bool]], limit: float = 30.0) -> None:
    """Return once `await check()` is true; fail the test naming `what` after `limit` s."""
    deadline = time.monotonic() + limit
    while True:
        if await check():
            return
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


async def answers_healthy(port: int) -> bool:
    """Whether a server on `port` (loopback) answers /healthz 200 now."""
    try:
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/healthz") as answer,
        ):
            return answer.status == 200
    except aiohttp.ClientError:
        return False
