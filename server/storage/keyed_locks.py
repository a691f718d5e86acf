"""Taking turns per key within one process: `async with locks.hold(key)`.

Used where writes to one thing (a room's race, a tournament) from many requests at once
would otherwise race each other through a compare-and-set and run out of retries; between
processes the compare-and-set still decides. A key's lock is forgotten once nobody holds
or waits for it, so keys seen once (unknown ids, finished rooms) leave nothing behind.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

__all__ = ["KeyedLocks"]


class KeyedLocks:
    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, list[int]]] = {}  # key -> lock, users

    def __len__(self) -> int:
        """How many keys are held or waited for now."""
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        entry = self._locks.get(key)
        if entry is None:
            entry = self._locks[key] = (asyncio.Lock(), [0])
        lock, users = entry
        users[0] += 1
        try:
            async with lock:
                yield
        finally:
            users[0] -= 1
            if users[0] == 0:
                del self._locks[key]
