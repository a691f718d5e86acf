"""How many rooms one client address may create (rooms and tournaments share the budget).

Creating a room writes to Redis and, for a "winnable" deal, runs the solver: without a
limit one client could fill Redis or burn the server's CPU through `POST /rooms`. The
address is `server.edge.admission.client_address.client_address`'s (None: a direct local client, not
limited). The count is kept by the room store (`RoomStore.take_budget`), in Redis, so
that every server process shares one limit (N processes behind a balancer must not mean N
times the limit); this module decides only the numbers.
"""

from __future__ import annotations

import math

from server.storage.store import RoomStore

__all__ = ["ROOMS", "RoomRateLimit"]

ROOMS = "rooms"  # the budget's name in the store


class RoomRateLimit:
    """`per_minute` rooms per address, in bursts of as many; 0 turns the limit off."""

    def __init__(self, per_minute: float) -> None:
        self.per_minute = per_minute

    async def take(self, store: RoomStore, address: str | None) -> float:
        """0.0 if `address` may create a room now (and it is counted), else the seconds
        until it may (rounded up to a tenth)."""
        if address is None or self.per_minute <= 0:
            return 0.0
        wait = await store.take_budget(ROOMS, address, 60 / self.per_minute, self.per_minute)
        return math.ceil(wait * 10) / 10 if wait > 0 else 0.0
