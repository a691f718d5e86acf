"""How many rooms one client address may create, counted in Redis so that every server
process shares one limit (N processes behind a balancer must not mean N times the limit).

Creating a room writes to Redis and, for a "winnable" deal, runs the solver: without a
limit one client could fill Redis or burn the server's CPU through `POST /rooms`. The
address is `server.client_address.client_address`'s (None: a direct local client, not
limited). The state is one key per address that expires once the address's burst is whole
again, so Redis holds no more than the addresses active in the last minute or so.
"""

from __future__ import annotations

import math

from redis.commands.core import AsyncScript

from server.batcher import load_script
from server.keys import room_rate_key
from server.redis_client import AnyRedis

__all__ = ["RoomRateLimit", "room_rate_key"]

SCRIPT = load_script("room_rate")


class RoomRateLimit:
    """`per_minute` rooms per address, in bursts of as many; 0 turns the limit off."""

    def __init__(self, per_minute: float) -> None:
        self.per_minute = per_minute
        self._script: AsyncScript | None = None

    async def take(self, redis: AnyRedis, address: str | None) -> float:
        """0.0 if `address` may create a room now (and it is counted), else the seconds
        until it may."""
        if address is None or self.per_minute <= 0:
            return 0.0
        script = self._script
        if script is None or script.registered_client is not redis:
            # redis-py's script object loads the script again after a Redis restart.
            script = self._script = redis.register_script(SCRIPT.source)
        wait = float(
            await script(
                keys=[room_rate_key(address)], args=[60 / self.per_minute, self.per_minute]
            )
        )
        return math.ceil(wait * 10) / 10 if wait > 0 else 0.0
