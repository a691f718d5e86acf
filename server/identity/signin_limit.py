"""How often a password or a link code may be tried: a pure object, the clock passed in.

Two budgets, each a token bucket (GCRA): one per client address (every attempt counts:
one machine trying many names), one per player name (failed attempts count: many
machines trying one name; a success refills it). An attempt goes ahead only when both
have room; otherwise it is refused, unchecked, with the seconds to wait, so that a
guesser gets `burst` tries and then one every `interval` seconds, whatever it sends.

Kept in each server process's memory: behind a balancer of N processes a guesser gets at
most N times the budget, still a handful of guesses a minute against Argon2id.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Budget", "SignInLimit"]

MAX_TRACKED = 10_000  # buckets kept per kind before the full ones are forgotten


@dataclass(frozen=True, slots=True)
class Budget:
    burst: int  # attempts at once
    interval: float  # then one attempt every so many seconds


@dataclass(slots=True)
class _Buckets:
    budget: Budget
    # key -> the time at which the bucket is full again (GCRA's "theoretical arrival time")
    due: dict[str, float] = field(default_factory=dict)

    def wait(self, key: str, now: float) -> float:
        """Seconds until one more attempt fits (0.0: now)."""
        due = max(self.due.get(key, now), now)
        allowed_at = due - (self.budget.burst - 1) * self.budget.interval
        return max(0.0, allowed_at - now)

    def take(self, key: str, now: float) -> None:
        self.due[key] = max(self.due.get(key, now), now) + self.budget.interval
        if len(self.due) > MAX_TRACKED:
            self.due = {k: t for k, t in self.due.items() if t > now}

    def refill(self, key: str) -> None:
        self.due.pop(key, None)


class SignInLimit:
    """`wait(address, name, now)` before checking a password (or a link code: `name`
    None); `attempted(address, name, ok, now)` after."""

    def __init__(
        self,
        per_address: Budget = Budget(burst=20, interval=6.0),
        per_name: Budget = Budget(burst=5, interval=30.0),
    ) -> None:
        self._addresses = _Buckets(per_address)
        self._names = _Buckets(per_name)

    def wait(self, address: str | None, name: str | None, now: float) -> float:
        """Seconds before this attempt may be made; 0.0 if it may be made now."""
        waits = [0.0]
        if address is not None:
            waits.append(self._addresses.wait(address, now))
        if name is not None:
            waits.append(self._names.wait(name, now))
        return max(waits)

    def attempted(self, address: str | None, name: str | None, ok: bool, now: float) -> None:
        if address is not None:
            self._addresses.take(address, now)
        if name is None:
            return
        if ok:
            self._names.refill(name)
        else:
            self._names.take(name, now)
