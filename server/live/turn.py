"""A seat's turn: the moves of one seat take turns, whichever socket sent them
(server/live/seats.py).

An asyncio lock, first come first served, whose free turn can also be taken without waiting
(`take_now`): a move judged as its frame is read (`Moves.now`, server/handlers/moves.py)
runs in no task, so it cannot wait; it takes the turn only when it is free, and gives it
back when Redis's reply to the move is read. A released turn goes straight to the first
task waiting for it, so a move taken at once never overtakes one already waiting.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from types import TracebackType

__all__ = ["Turn"]


class Turn:
    __slots__ = ("_held", "_waiters")

    def __init__(self) -> None:
        self._held = False
        # Waiters join only while the turn is held, and a release hands it to the first
        # one still waiting: so a free turn has no waiter left.
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    def locked(self) -> bool:
        return self._held

    def take_now(self) -> bool:
        """Take the turn if it is free; False (nothing taken) if it is held."""
        if self._held:
            return False
        self._held = True
        return True

    async def acquire(self) -> None:
        if self.take_now():
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # handed the turn as it was cancelled: pass it on
            raise
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(waiter)

    def release(self) -> None:
        """Hand the turn to the first task still waiting for it, or free it."""
        if not self._held:
            raise RuntimeError("the turn is not held")
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self._held = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
