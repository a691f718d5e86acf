"""How many rooms one client address may create: a token bucket per address.

Creating a room writes to Redis and, for a "winnable" deal, runs the solver: without a
limit one client could fill Redis or burn the server's CPU through `POST /rooms`.

The client's address is the socket's peer, except behind a reverse proxy on this machine
(deploy/nginx.conf): a loopback peer that sends `X-Forwarded-For` is that proxy, and the
last address of the header (the one the proxy itself appended) is the client. A loopback
peer without that header is someone on this machine (the operator, `make bench`, tests):
not limited.
"""

from __future__ import annotations

import ipaddress
import math

from server.connection import TokenBucket

__all__ = ["RoomRateLimit", "client_address"]

MAX_ADDRESSES = 10_000  # buckets kept; beyond, the full (idle) ones are forgotten


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def client_address(peer: str | None, forwarded_for: str | None) -> str | None:
    """The address to limit, or None for a client on this machine (not limited)."""
    if peer is None or _is_loopback(peer):
        if not forwarded_for:
            return None
        last = forwarded_for.split(",")[-1].strip()
        return None if not last or _is_loopback(last) else last[:64]
    return peer


class RoomRateLimit:
    """`per_minute` rooms per address, in bursts of as many; 0 turns the limit off."""

    def __init__(self, per_minute: float) -> None:
        self.per_minute = per_minute
        self._buckets: dict[str, TokenBucket] = {}

    def take(self, address: str | None, now: float) -> float:
        """0.0 if `address` may create a room now, else the seconds until it may."""
        if address is None or self.per_minute <= 0:
            return 0.0
        bucket = self._buckets.get(address)
        if bucket is None:
            if len(self._buckets) >= MAX_ADDRESSES:
                self._forget_idle(now)
            bucket = self._buckets[address] = TokenBucket(self.per_minute / 60, self.per_minute)
        if bucket.take(now):
            return 0.0
        return math.ceil((1.0 - bucket.tokens) / bucket.rate * 10) / 10

    def _forget_idle(self, now: float) -> None:
        """Drop the buckets that have refilled (their owner is as new); if none has, the
        oldest half, so that memory stays bounded whatever the traffic."""
        idle = [
            address
            for address, bucket in self._buckets.items()
            if bucket.tokens + (now - bucket.stamp) * bucket.rate >= bucket.burst
        ]
        if not idle:
            idle = list(self._buckets)[: len(self._buckets) // 2]
        for address in idle:
            del self._buckets[address]
