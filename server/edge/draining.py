"""Draining: a process told to stop keeps serving for a while and says so on /healthz.

On SIGTERM (`python -m server`) the process first *drains* for `Settings.drain` seconds:
everything is served as before, but `/healthz` answers 503 with the reason, so a balancer
that checks it (deploy/haproxy.cfg: every second, down after two failures) stops sending new
players here. Only then are the sockets closed with 1001 (GOING_AWAY) and the clients
reconnect through the balancer to a process that is staying.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Drain"]


@dataclass(slots=True)
class Drain:
    """Whether this process is draining, and until when (monotonic seconds)."""

    until: float | None = None

    def begin(self, seconds: float, now: float) -> None:
        if self.until is None:
            self.until = now + seconds

    @property
    def draining(self) -> bool:
        return self.until is not None

    def reason(self, now: float) -> str:
        left = max(0.0, (self.until or now) - now)
        return f"draining: shutting down, sockets close in {left:.1f} s"
