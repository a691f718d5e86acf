"""Flooders kept out for a while: a client address whose WebSocket was closed 1008 for a
sustained flood has its new WebSockets refused (HTTP 429 `rate_limited`, with
`Retry-After`) for `flood_cooldown` seconds.

Without it, a flooder that connects again as soon as it is closed costs the server a
handshake, a flood's worth of frames parsed and a close each time (about 4.5 ms of CPU
per connection, measured with bench/control_flood.py and py-spy: most of it parsing the
frames aiohttp reads ahead); the refusal of an upgrade costs one HTTP request.

Kept per process, in memory: a refusal needs no Redis round trip (it would add one to
every WebSocket upgrade and fail with Redis), and behind a balancer of N processes a
flooder is kept out of each after its first flood there. The clock is passed in.
"""

from __future__ import annotations

__all__ = ["FloodCooldown"]

MAX_ADDRESSES = 10_000  # addresses remembered at once: a bound on the memory it takes


class FloodCooldown:
    """Addresses refused until a time; `seconds` 0: nobody is ever refused."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._until: dict[str, float] = {}  # in the order they were put in

    def flooded(self, address: str, now: float) -> None:
        """`address` was closed for flooding at `now`: refuse it from now on."""
        if not self.seconds:
            return
        self._until.pop(address, None)
        self._until[address] = now + self.seconds
        if len(self._until) > MAX_ADDRESSES:
            self._forget(now)

    def refused_for(self, address: str, now: float) -> float:
        """Seconds `address` is still refused (0.0: not refused)."""
        until = self._until.get(address)
        if until is None:
            return 0.0
        if until <= now:
            del self._until[address]
            return 0.0
        return until - now

    def _forget(self, now: float) -> None:
        """Drop the expired entries, and the oldest ones beyond MAX_ADDRESSES."""
        for address, until in list(self._until.items()):
            if until <= now or len(self._until) > MAX_ADDRESSES:
                del self._until[address]

    def __len__(self) -> int:
        return len(self._until)
