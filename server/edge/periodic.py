"""The server's background loops (the rooms' deadline sweep, the tournaments' sweep, the
archive): one step every interval until told to stop, each failure counted, and an outage
(Redis; for the archive, the records' database too) said in one WARNING line when it
begins and one INFO line when it is over, not a traceback four times a second (any other
error keeps its traceback)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from server.metrics import Metrics, redis_error

__all__ = ["Periodic", "redis_away", "stop_task"]


def redis_away(error: BaseException) -> str | None:
    """What `error` says is out of reach ("Redis"), or None: a bug, kept with its traceback."""
    return "Redis" if redis_error(error) else None


class Periodic:
    """`step` every `interval` seconds in a task named `name`, from `start()` to `stop()`.
    `what` names it in the log lines, written to `log` (the owner's logger)."""

    def __init__(
        self,
        name: str,
        step: Callable[[], Awaitable[object]],
        interval: float,
        *,
        what: str,
        log: logging.Logger,
        metrics: Metrics,
        away: Callable[[BaseException], str | None] = redis_away,
    ) -> None:
        self.name, self.step, self.interval = name, step, interval
        self.what, self.log, self.metrics, self.away = what, log, metrics, away
        # Stopped by an event, not only by cancel: redis-py may swallow a cancellation.
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._task is not None:
            await stop_task(self._task, timeout)

    async def _run(self) -> None:
        down: str | None = None  # what is out of reach now
        while not self._stop.is_set():
            try:
                await self.step()
            except Exception as exc:
                self.metrics.failed(exc)
                away = self.away(exc)
                if away is None:
                    self.log.exception("%s failed", self.what)
                elif away != down:  # one line per outage, not four a second
                    self.log.warning("%s: %s unavailable (%s); retrying", self.what, away, exc)
                down = away
            else:
                if down is not None:
                    self.log.info("%s: %s answers again", self.what, down)
                down = None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.interval)


async def stop_task(task: asyncio.Task[None], timeout: float = 2.0) -> None:
    """Wait for a task told to stop; cancel it if it does not."""
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=timeout)
