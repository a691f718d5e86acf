"""Fan-out between server processes: Redis pub/sub behind a small interface.

Every event a room logs is also published on its channel (by the Lua scripts); each
process subscribes to the channels of the rooms its sockets are in, so events reach every
process the same way, whether one runs or twenty. Quick-match pairings travel the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Protocol

from redis.asyncio import Redis

__all__ = ["Feed", "RedisFeed"]

log = logging.getLogger(__name__)

Handler = Callable[[bytes], None]

_CONTROL = "solrace:control"  # always subscribed: redis-py's listener needs one channel


class Feed(Protocol):
    async def subscribe(self, channel: str, handler: Handler) -> None: ...
    async def unsubscribe(self, channel: str) -> None: ...


class RedisFeed:
    """One pub/sub connection per process; handlers run in the listener task, in order."""

    def __init__(self, redis: Redis) -> None:
        self._pubsub: Any = redis.pubsub(ignore_subscribe_messages=True)
        self._handlers: dict[str, Handler] = {}
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    async def start(self) -> None:
        await self._pubsub.subscribe(_CONTROL)
        self._task = asyncio.create_task(self._listen(), name="solrace-feed")

    async def stop(self) -> None:
        self._stopping = True  # redis-py may swallow a cancel: the loop also checks this
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=3.0)
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()

    async def subscribe(self, channel: str, handler: Handler) -> None:
        self._handlers[channel] = handler
        await self._pubsub.subscribe(channel)

    async def unsubscribe(self, channel: str) -> None:
        if self._handlers.pop(channel, None) is not None:
            await self._pubsub.unsubscribe(channel)

    async def _listen(self) -> None:
        while not self._stopping:
            try:
                message = await self._pubsub.get_message(timeout=1.0)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("pub/sub listener failed; retrying")
                await asyncio.sleep(0.5)
                continue
            if message is None or message.get("type") != "message":
                continue
            channel = message["channel"]
            handler = self._handlers.get(
                channel.decode() if isinstance(channel, bytes) else channel
            )
            if handler is None:
                continue
            try:
                handler(message["data"])
            except Exception:
                log.exception("feed handler failed")
