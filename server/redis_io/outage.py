"""Whether this process can reach Redis, and for how long it has not: the state behind
`/healthz`, the WebSocket upgrade's 503 and the hand-over of a process's players.

A pure state machine (the time is passed in): `observe` takes each health check's finding
(None: Redis and the pub/sub feed answer) and says what changed. A process whose Redis has
failed for `cutoff` seconds in a row cannot serve its players: it is *cut off*, and hands
them on (its sockets closed with 1013, try again later: their clients come back through
the balancer to a process that can serve them). It takes players again as soon as a check
finds Redis back.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Change", "Outage", "no_problem"]


class Change(enum.Enum):
    CUT_OFF = "cut_off"  # failing for `cutoff` seconds: hand the players on
    BACK = "back"  # answering again after a cut-off


@dataclass(slots=True)
class Outage:
    """`problem`: what the last check found wrong (None: all is well); `failing_since`:
    when the failures in a row began; `cut_off`: failing for `cutoff` seconds or more (0:
    never cut off)."""

    cutoff: float
    problem: str | None = None
    failing_since: float | None = None
    cut_off: bool = False

    def observe(self, problem: str | None, now: float) -> Change | None:
        """One check's finding at `now`; what changed, if anything."""
        self.problem = problem
        if problem is None:
            self.failing_since = None
            if self.cut_off:
                self.cut_off = False
                return Change.BACK
            return None
        if self.failing_since is None:
            self.failing_since = now
        if self.cutoff and not self.cut_off and now - self.failing_since >= self.cutoff:
            self.cut_off = True
            return Change.CUT_OFF
        return None


async def no_problem() -> str | None:
    """What keeps a process from using Redis, where no check of Redis runs (tests, tools):
    nothing. The server's is `RedisWatch.away` (server/edge/redis_watch.py)."""
    return None
