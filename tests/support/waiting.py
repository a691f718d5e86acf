"""Waiting in a test for something another task or process does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["until"]


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Return once `condition()` holds; fail the test if it does not within `seconds`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)
